/**
 * Spike (issue 22): what a V8 flag on Node's command line costs a start, and how to judge a flag fairly. Not part of
 * `npm run bench` (no goal; about three minutes): `node bench/spikes/v8-flags.mjs` after `npm run build`.
 *
 * Node's built-in modules (node:http, node:net, the streams) are compiled from a code cache embedded in the binary, and
 * V8 accepts a code cache only under the flags it was made with (a hash of every flag not at its default). So any V8
 * flag, even one that changes nothing (`--min-semi-space-size=1`: the 1 MB young generation V8 starts with anyway),
 * makes every built-in module a process loads after bootstrap compile from source. A flag judged against no flag
 * therefore carries that cost; judged against a neutral flag, it shows what it does itself.
 *
 * Not every flag is in that hash: `--single-threaded-gc`, `--no-parallel-scavenge` and `--no-concurrent-recompilation`
 * load node:http as fast as no flag does (about 6 ms here), while `--max-old-space-size=4096`, `--no-opt` or the
 * neutral flag take about 15 ms.
 *
 * Figures: `crystal run --format json hi` (2,000 tokens) and the node:http floor, each with the neutral flag vs none;
 * then the flag under study (`V8_FLAG`, default `--single-threaded-gc`) against the neutral flag and against none.
 * Each crystal side keeps its own code cache (bin code caches are made under the flags of the start that wrote them).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeProvider, stopFakeProvider } from '../lib/fake-provider.mjs';
import { compare, printFigure, round, runCount } from '../lib/harness.mjs';

const TOKENS = 2000;
const NEUTRAL = '--min-semi-space-size=1';
const FLAG = process.env.V8_FLAG || '--single-threaded-gc';
const root = (path) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'crystal-bench-flags-'));
const scriptFile = join(dir, 'script.json');
writeFileSync(scriptFile, JSON.stringify({ replies: [{ textTokens: TOKENS, usage: { input: 10, output: TOKENS } }] }));
let fake;
try {
  fake = await startFakeProvider(scriptFile);
  const models = { 'fake-model': { contextWindow: 128000 } };
  const providers = { fake: { protocol: 'openai', baseUri: fake.baseUri, apiKey: 'bench-key', models } };
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ provider: 'fake', model: 'fake-model', providers }));

  const crystal = (flags) => ({
    argv: [process.execPath, ...flags, root('packages/cli/bin/crystal.js'), 'run', '--format', 'json', 'hi'],
    env: { CRYSTAL_HOME: dir, CRYSTAL_COMPILE_CACHE: join(dir, `cache${flags.join('').replace(/\W/g, '-')}`) },
    check: (stdout) => {
      const { stopReason, usage } = JSON.parse(stdout);
      if (stopReason !== 'completed' || usage?.outputTokens !== TOKENS) throw new Error(`incomplete run: ${stdout}`);
    },
  });
  const floor = (flags) => ({
    argv: [process.execPath, ...flags, root('bench/lib/http-floor.mjs'), fake.baseUri, 'fake-model', 'bench-key'],
    check: (stdout) => {
      if (!JSON.parse(stdout).done) throw new Error(`the floor read an incomplete stream: ${stdout}`);
    },
  });
  const runs = runCount(30);
  const figure = async (name, subject, baseline) => {
    const result = await compare({ subject, baseline, runs, scrubbed: true });
    printFigure({
      figure: `v8-flags: ${name}`,
      subject_ms: round(result.subject.median),
      baseline_ms: round(result.baseline.median),
      difference_ms: round(result.subject.median - result.baseline.median),
      ratio: round(result.subject.median / result.baseline.median, 3),
      subject_cpu_ms: round(result.subject.cpuMedian ?? Number.NaN),
      baseline_cpu_ms: round(result.baseline.cpuMedian ?? Number.NaN),
      goal: null,
      met: true,
      runs,
    });
  };
  await figure(`crystal run, ${NEUTRAL} (no change) vs no flag`, crystal([NEUTRAL]), crystal([]));
  await figure(`node:http floor, ${NEUTRAL} (no change) vs no flag`, floor([NEUTRAL]), floor([]));
  await figure(`crystal run, ${FLAG} vs ${NEUTRAL}`, crystal([FLAG]), crystal([NEUTRAL]));
  await figure(`crystal run, ${FLAG} vs no flag`, crystal([FLAG]), crystal([]));
} finally {
  stopFakeProvider(fake);
  rmSync(dir, { recursive: true, force: true });
}
