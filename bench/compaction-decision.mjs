/**
 * Figure: the per-round compaction decision (incremental estimate + threshold, COMPACT-1) on a
 * 10,000-item model context as a ratio to a 100-item one; goal under 3 (cost independent of
 * history). A full re-estimate of the same context is printed beside it for comparison.
 */
import { printFigure, runCount } from './lib/harness.mjs';

const engine = await import(new URL('../packages/engine/dist/index.js', import.meta.url).href);
const { ContextMeter, estimateTokens, shouldCompact, compactionLimit } = engine;

const msg = (role, i) => ({ role, content: [{ type: 'text', text: `message ${i} ${'lorem ipsum '.repeat(20)}` }] });
const limit = compactionLimit({ contextWindow: 1_000_000, maxTokens: 8000 });
const rounds = runCount(20000);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function perRound(size, incremental) {
  const context = [{ role: 'system', content: [{ type: 'text', text: 'system' }] }];
  for (let i = 0; i < size; i++) context.push(msg(i % 2 ? 'assistant' : 'user', i));
  const meter = new ContextMeter();
  meter.estimate(context);
  const start = performance.now();
  for (let r = 0; r < rounds; r++) {
    context.push(msg('user', size + r));
    const estimate = incremental ? meter.estimate(context) : estimateTokens(context);
    shouldCompact({ estimate, lastReportedTokens: 1000, limit });
  }
  return ((performance.now() - start) * 1000) / rounds;
}

// Warm up the JIT on both sizes, then alternate and take medians.
perRound(100, true);
perRound(10000, true);
const smalls = [];
const larges = [];
for (let i = 0; i < 7; i++) {
  smalls.push(perRound(100, true));
  larges.push(perRound(10000, true));
}
const small = median(smalls);
const large = median(larges);
const fullLarge = perRound(10000, false);
printFigure({
  figure: 'compaction-decision: per-round estimate + threshold, 10,000 vs 100 items',
  small_us: Number(small.toFixed(3)),
  large_us: Number(large.toFixed(3)),
  ratio: Number((large / small).toFixed(2)),
  full_reestimate_large_us: Number(fullLarge.toFixed(1)),
  goal: 3,
  met: large / small < 3,
  rounds,
});
