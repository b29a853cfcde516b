/**
 * Figure (issue 22 item 4): what the code cache costs to deserialise when a typical start wrote it, against one a
 * start that validated config.json would have written. Since the validated configuration is remembered
 * (packages/cli/src/build.ts `configMemo`), a start that validates does work the next start skips, and the bin leaves
 * the cache to that next start; before, the first start after an install or upgrade wrote it, with zod's schemas and
 * checks in it, and every later start deserialised them and never ran them.
 * The two caches are made by the real bin for one build: a Home whose memo is kept (two starts: the first validates
 * and writes none, the second writes it) and a Home that cannot keep it (a file where its cache folder goes, so every
 * start validates, as that first start did). Then `lib/deserialise.cjs` compiles the bundle with each, interleaved in
 * fresh processes; medians of `new vm.Script`, which is where V8 deserialises. No goal: the ratio is the saving.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeProvider, fakeConfig, tempDir, tempHome } from '../packages/testkit/dist/index.js';
import { median, printFigure, runCount, scrubbedEnv } from './lib/harness.mjs';

const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const bundle = root('packages/cli/dist/crystal.cjs');
/** The main bundle's content hash, which names its cache files (scripts/bundle.mjs). */
const bundleHash = createHash('sha256').update(readFileSync(bundle)).digest('hex').slice(0, 16);
const round = (n, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/** One `crystal run hi`; rejects unless it succeeds. */
function crystalRun(env, kind) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [root('packages/cli/bin/crystal.js'), 'run', 'hi'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`crystal run (${kind}) exited ${code}: ${stderr}`))));
  });
}

const fake = await FakeProvider.start({ replies: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] });
const homes = { typical: tempHome(fakeConfig(fake.baseUri)), validating: tempHome(fakeConfig(fake.baseUri)) };
writeFileSync(join(homes.validating.path, 'cache'), 'not a folder: this Home cannot keep the validated configuration');
try {
  const caches = {};
  for (const [kind, starts] of [
    ['typical', 2],
    ['validating', 1],
  ]) {
    const dir = join(tempDir('crystal-bench-cc-'), 'compile');
    for (let i = 0; i < starts; i++) {
      // Asynchronously: the fake provider answers from this process.
      await crystalRun({ ...scrubbedEnv(), CRYSTAL_HOME: homes[kind].path, CRYSTAL_COMPILE_CACHE: dir }, kind);
    }
    // The validating start also wrote the zod chunk's (dist/zod.cjs); the main bundle's is named for its hash.
    const files = readdirSync(dir).filter((name) => name.startsWith(`${bundleHash}-`) && name.endsWith('-run.v8'));
    if (files.length !== 1) throw new Error(`expected one cache file for the main bundle in ${dir}, found ${files.join(', ')}`);
    caches[kind] = join(dir, files[0]);
  }
  const runs = runCount(30);
  const samples = { typical: [], validating: [] };
  for (let i = 0; i < runs + 2; i++) {
    for (const kind of i % 2 === 0 ? ['typical', 'validating'] : ['validating', 'typical']) {
      const out = spawnSync(process.execPath, [root('bench/lib/deserialise.cjs'), bundle, caches[kind]], {
        env: scrubbedEnv(),
        encoding: 'utf8',
      });
      if (out.status !== 0) throw new Error(`deserialise (${kind}) exited ${out.status}: ${out.stderr}`);
      if (i >= 2) samples[kind].push(JSON.parse(out.stdout));
    }
  }
  const ms = (kind) => median(samples[kind].map((s) => s.ms));
  const faults = (kind) => median(samples[kind].map((s) => s.faults));
  printFigure({
    figure: 'code-cache: deserialising the cache a typical start writes vs one a config-validating start wrote',
    subject_ms: round(ms('typical')),
    baseline_ms: round(ms('validating')),
    ratio: round(ms('typical') / ms('validating'), 3),
    subject_kb: Math.round(statSync(caches.typical).size / 1024),
    baseline_kb: Math.round(statSync(caches.validating).size / 1024),
    subject_faults: faults('typical'),
    baseline_faults: faults('validating'),
    goal: null,
    met: true,
    runs,
  });
} finally {
  await fake.close();
  homes.typical.dispose();
  homes.validating.dispose();
}
