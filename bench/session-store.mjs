/**
 * Figures: the cost of a save after one more turn, and of a load, for sessions of 100, 1,000 and
 * 10,000 transcript items, as ratios large/small (goal: a save at 10,000 items costs at most 5x
 * a save at 100); and the longest event-loop stall while saving the 10,000-item session (a
 * frame is 16 ms). Runs in-process against the built engine (packages/engine/dist).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { printFigure, runCount } from './lib/harness.mjs';

const { SessionFiles } = await import(new URL('../packages/engine/dist/index.js', import.meta.url).href);

const text = (i) => `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(8)}`;
const user = (i) => ({ role: 'user', content: [{ type: 'text', text: text(i) }] });
const assistant = (i) => ({ role: 'assistant', content: [{ type: 'text', text: text(i) }] });

function stateOf(id, items) {
  const archive = [];
  for (let i = 0; i < items; i++) archive.push(i % 2 === 0 ? user(i) : assistant(i));
  return {
    id,
    workspace: '/bench',
    createdUtc: new Date().toISOString(),
    updatedUtc: new Date().toISOString(),
    provider: 'fake',
    model: 'm',
    context: [{ role: 'system', content: [{ type: 'text', text: 'system' }] }, ...archive],
    archive,
    userTurns: items / 2,
    modelCalls: items / 2,
    toolCalls: 0,
    usage: { inputTokens: 1, outputTokens: 1 },
    cumulativeUsage: { inputTokens: 1, outputTokens: 1 },
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const home = mkdtempSync(join(tmpdir(), 'crystal-bench-store-'));
const runs = runCount(15);
const results = {};
try {
  for (const size of [100, 1000, 10000]) {
    const state = stateOf(`bench-${size}`, size);
    const files = SessionFiles.create(home, state.id);
    await files.save(state);
    const saves = [];
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    for (let i = 0; i < runs; i++) {
      const turn = [user(size + 2 * i), assistant(size + 2 * i + 1)];
      state.archive.push(...turn);
      state.context.push(...turn);
      const t = performance.now();
      await files.save(state);
      saves.push(performance.now() - t);
    }
    histogram.disable();
    const loads = [];
    for (let i = 0; i < Math.min(runs, 7); i++) {
      const t = performance.now();
      const loaded = SessionFiles.load(home, state.id);
      loads.push(performance.now() - t);
      if (loaded.state.archive.length !== state.archive.length) throw new Error(`load of ${size} lost items`);
    }
    results[size] = { save: median(saves), load: median(loads), stallMs: histogram.max / 1e6 };
  }
  const ratio = (a, b) => Number((a / b).toFixed(2));
  printFigure({
    figure: 'session-store: save after one more turn, 10,000 vs 100 items',
    save_100_ms: Number(results[100].save.toFixed(2)),
    save_1000_ms: Number(results[1000].save.toFixed(2)),
    save_10000_ms: Number(results[10000].save.toFixed(2)),
    ratio_1000: ratio(results[1000].save, results[100].save),
    ratio: ratio(results[10000].save, results[100].save),
    goal: 5,
    met: results[10000].save / results[100].save <= 5,
    runs,
  });
  printFigure({
    figure: 'session-store: load, 10,000 vs 100 items',
    load_100_ms: Number(results[100].load.toFixed(2)),
    load_1000_ms: Number(results[1000].load.toFixed(2)),
    load_10000_ms: Number(results[10000].load.toFixed(2)),
    ratio_1000: ratio(results[1000].load, results[100].load),
    ratio: ratio(results[10000].load, results[100].load),
  });
  printFigure({
    figure: 'session-store: longest event-loop stall while saving the 10,000-item session',
    stall_ms: Number(results[10000].stallMs.toFixed(2)),
    goal_ms: 16,
    met: results[10000].stallMs < 16,
  });
} finally {
  rmSync(home, { recursive: true, force: true });
}
