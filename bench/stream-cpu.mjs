/**
 * Figure (issue 22 goal): streaming CPU per 1,000 tokens, headless. `crystal run --format json` streams a reply from
 * the fake provider paced one token per write (`delayMs: 1`, so each token is its own network read, as a real
 * provider's stream is); the floor is `lib/http-stream-floor.mjs`, the least a correct client does with the same
 * stream over node:http (split events, parse each JSON frame, keep the text). Each side's CPU per 1,000 tokens is
 * (CPU of a 3,000-token run − CPU of a 10-token run) / 2.99, which takes start-up and exit out; CPU is the process's
 * own user + system time (bench/lib/rss-probe.cjs), the runs interleaved and medians compared. Goal: ratio ≤ 1.1.
 */
import { fileURLToPath } from 'node:url';
import { FakeProvider, fakeConfig, tempDir, tempHome } from '../packages/testkit/dist/index.js';
import { compare, median, printFigure, runCount } from './lib/harness.mjs';

const LONG = 3000;
const SHORT = 10;
const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const round = (n, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

const reply = (tokens) => ({ textTokens: tokens, delayMs: tokens === SHORT ? 0 : 1, usage: { input: 10, output: tokens } });
const fakes = {
  long: await FakeProvider.start({ replies: [reply(LONG)] }),
  short: await FakeProvider.start({ replies: [reply(SHORT)] }),
};
const homes = { long: tempHome(fakeConfig(fakes.long.baseUri)), short: tempHome(fakeConfig(fakes.short.baseUri)) };
const workspace = tempDir('crystal-bench-ws-');
try {
  const crystal = (side) => ({
    argv: [process.execPath, root('packages/cli/bin/crystal.js'), 'run', '--format', 'json', 'hi'],
    env: { CRYSTAL_HOME: homes[side].path },
    cwd: workspace,
    check: (stdout) => {
      const { stopReason, usage } = JSON.parse(stdout);
      const tokens = side === 'long' ? LONG : SHORT;
      if (stopReason !== 'completed' || usage?.outputTokens !== tokens) throw new Error(`crystal run: ${stdout.slice(0, 300)}`);
    },
  });
  const floor = (side) => ({
    argv: [process.execPath, root('bench/lib/http-stream-floor.mjs'), fakes[side].baseUri, 'fake-model', 'test-key'],
    check: (stdout) => {
      const { done, text } = JSON.parse(stdout);
      if (!done || text.length !== 4 * (side === 'long' ? LONG : SHORT)) throw new Error(`floor: ${stdout.slice(0, 300)}`);
    },
  });
  const runs = runCount(6);
  const cpu = (result, side) => median(result.samples[side].map((s) => s.cpuMs));
  // Two warm-ups per side: in a fresh Home the first start of a build validates config.json and leaves no code cache
  // (packages/cli/src/build.ts), the second writes it, so on a machine without this build's cache no sample is cold.
  const perThousand = async (make) => {
    const result = await compare({ subject: make('long'), baseline: make('short'), runs, warmup: 2, scrubbed: true });
    return ((cpu(result, 'subject') - cpu(result, 'baseline')) * 1000) / (LONG - SHORT);
  };
  // The two sides alternate in halves, so drift on the machine falls on both.
  const subject = [];
  const baseline = [];
  for (let i = 0; i < 2; i++) {
    subject.push(await perThousand(crystal));
    baseline.push(await perThousand(floor));
  }
  const s = median(subject);
  const b = median(baseline);
  printFigure({
    figure: 'stream-cpu: crystal run CPU per 1,000 streamed tokens vs the node:http streaming floor (headless)',
    subject_cpu_ms: round(s),
    baseline_cpu_ms: round(b),
    ratio: round(s / b, 3),
    goal: 1.1,
    met: s / b <= 1.1,
    runs: runs * 2,
    environment: 'scrubbed',
  });
} finally {
  for (const fake of Object.values(fakes)) await fake.close();
  for (const home of Object.values(homes)) home.dispose();
}
