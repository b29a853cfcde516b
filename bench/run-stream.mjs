/**
 * Figures: `crystal run --format json hi` streaming a 2,000-token reply from the fake provider, against a plain-fetch
 * floor and a node:http floor making the same request (goal: ratio ≤ 1.2 each), in a scrubbed environment, plus the
 * fetch ratio with the caller's environment inherited beside it, and the node:http ratio with the code cache off (a first start); and the crystal run's peak RSS (goal: under 110 MB).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  compare,
  inheritedNote,
  pageFaultMicros,
  pageFigure,
  printFigure,
  rssFigure,
  runCount,
  timeFigure,
} from './lib/harness.mjs';

const TOKENS = 2000;
const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));

/** Starts the fake provider on a free port; resolves `{ child, baseUri }` once it prints its listening line. */
function startFakeProvider(scriptFile) {
  const args = [root('node_modules/.bin/crystal-fake-provider'), '--script', scriptFile, '--port', '0'];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error('fake provider did not start within 10 s')), 10_000);
    const fail = (error) => {
      clearTimeout(timer);
      child.kill();
      reject(error);
    };
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const match = /\(baseUri (\S+)\)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, baseUri: match[1] });
      }
    });
    child.on('error', fail);
    child.on('exit', (code) => fail(new Error(`fake provider exited ${code} before listening\n${err}${out}`)));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'crystal-bench-home-'));
const scriptFile = join(dir, 'script.json');
writeFileSync(scriptFile, JSON.stringify({ replies: [{ textTokens: TOKENS, usage: { input: 10, output: TOKENS } }] }));
let fake;
try {
  fake = await startFakeProvider(scriptFile);
  const models = { 'fake-model': { contextWindow: 128000 } };
  const providers = { fake: { protocol: 'openai', baseUri: fake.baseUri, apiKey: 'bench-key', models } };
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ provider: 'fake', model: 'fake-model', providers }));

  const subject = {
    argv: [process.execPath, root('packages/cli/bin/crystal.js'), 'run', '--format', 'json', 'hi'],
    // The bin's code cache (packages/cli/src/launch.ts) in this run's folder: the warm-up runs write it, as a
    // user's first start does; the figure without it is printed beside.
    env: { CRYSTAL_HOME: dir, CRYSTAL_COMPILE_CACHE: join(dir, 'compile-cache') },
    check: (stdout) => {
      const { stopReason, usage } = JSON.parse(stdout);
      if (stopReason !== 'completed' || usage?.outputTokens !== TOKENS) {
        throw new Error(`crystal run did not complete a ${TOKENS}-token reply: ${JSON.stringify({ stopReason, usage })}`);
      }
    },
  };
  const floor = (script, what) => ({
    argv: [process.execPath, root(`bench/lib/${script}`), fake.baseUri, 'fake-model', 'bench-key'],
    check: (stdout) => {
      const out = JSON.parse(stdout);
      if (!out.done || out.dataLines < TOKENS) throw new Error(`${what} floor read an incomplete stream: ${stdout}`);
    },
  });
  const runs = runCount(8);
  // Issue 22 item 3: the headline figures run in a scrubbed environment, against both floors.
  const result = await compare({ subject, baseline: floor('fetch-floor.mjs', 'fetch'), runs, scrubbed: true });
  printFigure({
    ...timeFigure(`run-stream: crystal run --format json (${TOKENS} tokens) vs fetch floor`, result, 1.2),
    environment: 'scrubbed',
  });
  const http = await compare({ subject, baseline: floor('http-floor.mjs', 'node:http'), runs, scrubbed: true });
  printFigure({
    ...timeFigure(`run-stream: crystal run --format json (${TOKENS} tokens) vs node:http floor`, http, 1.2),
    environment: 'scrubbed',
  });
  // What the fresh pages crystal touches beyond the floor's (its bundle's text, the objects its code cache becomes,
  // the engine's modules) cost at this machine's price of a page: on a VM with slow faults, much of the gap above.
  printFigure(pageFigure('run-stream: fresh pages touched, crystal run vs node:http floor', http, pageFaultMicros()));
  const cold = await compare({
    subject: { ...subject, env: { ...subject.env, CRYSTAL_COMPILE_CACHE: 'off' } },
    baseline: floor('http-floor.mjs', 'node:http'),
    runs,
    scrubbed: true,
  });
  printFigure({
    ...timeFigure(`run-stream: crystal run --format json (${TOKENS} tokens) vs node:http floor, no code cache`, cold, 1.2),
    environment: 'scrubbed',
    code_cache: 'off',
  });
  printFigure(rssFigure('run-stream: crystal run peak RSS', result.subject, 110, result.runs));
  const inherited = await compare({ subject, baseline: floor('fetch-floor.mjs', 'fetch'), runs });
  printFigure({
    ...timeFigure(
      `run-stream: crystal run --format json (${TOKENS} tokens) vs fetch floor (inherited environment)`,
      inherited,
      1.2,
    ),
    environment: 'inherited',
    inherited_variables: inheritedNote(),
  });
} finally {
  fake?.child.removeAllListeners('exit');
  fake?.child.kill();
  rmSync(dir, { recursive: true, force: true });
}
