/**
 * Figures (issue 22): the wall time of one session save, new way (SessionFiles.save: page-cache
 * calls synchronous, the fsyncs in one parallel wait, then the folder's fsync) vs the old way
 * (lib/baseline/session-store.mjs, a copy of the store before the change, whose saves made ~20
 * sequential fs.promises calls: same files, bytes and fsync points), interleaved, medians.
 * 1. In a fresh process: the first save of a new session (what `crystal run` waits for before
 *    its first request, REL-1; the thread pool starts here) and the save of the reply after it.
 * 2. In one warm process: a new session's save and an appended turn's save.
 * 3. The thread-pool round trips of each save (async_hooks: FSREQCALLBACK, FSREQPROMISE and
 *    FILEHANDLECLOSEREQ requests made by the save), goal ≤ 4.
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, printFigure, runCount, scrubbedEnv } from './lib/harness.mjs';
import { SessionFiles as OldSessionFiles } from './lib/baseline/session-store.mjs';
import { benchState, timeTwoSaves } from './lib/save-state.mjs';

const { SessionFiles } = await import(new URL('../packages/engine/dist/index.js', import.meta.url).href);
const child = fileURLToPath(new URL('./lib/save-once.mjs', import.meta.url));
const round = (n, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const runs = runCount(20);

function once(way) {
  const home = mkdtempSync(join(tmpdir(), 'crystal-bench-hops-'));
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, way, home], { env: scrubbedEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    proc.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    proc.on('error', reject);
    proc.on('close', (code) => {
      rmSync(home, { recursive: true, force: true });
      if (code !== 0) reject(new Error(`save-once ${way} exited ${code}\n${err}`));
      else resolve(JSON.parse(out));
    });
  });
}

const fresh = { new: { first: [], append: [] }, old: { first: [], append: [] } };
for (let i = 0; i < runs + 2; i++) {
  for (const way of i % 2 === 0 ? ['old', 'new'] : ['new', 'old']) {
    const r = await once(way);
    if (i < 2) continue;
    fresh[way].first.push(r.first);
    fresh[way].append.push(r.append);
  }
}
for (const [key, label] of [
  ['first', 'the first save of a new session in a fresh process (before the first request)'],
  ['append', "the save of the reply after it (a fresh process's second save)"],
]) {
  const subject = median(fresh.new[key]);
  const baseline = median(fresh.old[key]);
  printFigure({
    figure: `save-hops: ${label}, new vs the store before (sequential fs.promises calls)`,
    subject_ms: round(subject),
    baseline_ms: round(baseline),
    ratio: round(subject / baseline),
    goal: 0.7,
    met: subject / baseline <= 0.7,
    runs,
  });
}

// In one warm process: a new session each time, then one appended turn on it.
const home = mkdtempSync(join(tmpdir(), 'crystal-bench-hops-warm-'));
try {
  const warm = { new: { first: [], append: [] }, old: { first: [], append: [] } };
  for (let i = 0; i < runs * 3 + 4; i++) {
    for (const way of i % 2 === 0 ? ['old', 'new'] : ['new', 'old']) {
      const id = `20261201-000000-${way === 'new' ? 'a' : 'b'}${String(i).padStart(5, '0')}`;
      const state = benchState(id);
      const files = (way === 'new' ? SessionFiles : OldSessionFiles).create(home, id);
      const { first, append } = await timeTwoSaves(files, state);
      if (i < 4) continue;
      warm[way].first.push(first);
      warm[way].append.push(append);
    }
  }
  for (const [key, label] of [
    ['first', 'a new session'],
    ['append', 'an appended turn'],
  ]) {
    const subject = median(warm.new[key]);
    const baseline = median(warm.old[key]);
    printFigure({
      figure: `save-hops: the save of ${label} in a warm process, new vs the store before (sequential fs.promises calls)`,
      subject_ms: round(subject),
      baseline_ms: round(baseline),
      ratio: round(subject / baseline),
      goal: 0.7,
      met: subject / baseline <= 0.7,
      runs: runs * 3,
    });
  }
  // Round trips: every file-system request a save hands to the thread pool.
  const counting = new AsyncLocalStorage();
  const POOL = new Set(['FSREQCALLBACK', 'FSREQPROMISE', 'FILEHANDLECLOSEREQ']);
  const hook = createHook({
    init(_id, type) {
      const tally = counting.getStore();
      if (tally && POOL.has(type)) tally.count++;
    },
  }).enable();
  const trips = async (save) => {
    const tally = { count: 0 };
    await counting.run(tally, save);
    return tally.count;
  };
  const hops = {};
  for (const [way, Store] of [
    ['new', SessionFiles],
    ['old', OldSessionFiles],
  ]) {
    const state = benchState(`20261201-000001-${way === 'new' ? 'aaaaaa' : 'bbbbbb'}`);
    const files = Store.create(home, state.id);
    const first = await trips(() => files.save(state));
    const reply = { role: 'assistant', content: [{ type: 'text', text: 'ok' }] };
    state.archive.push(reply);
    state.context.push(reply);
    hops[way] = { first, append: await trips(() => files.save(state)) };
  }
  hook.disable();
  printFigure({
    figure: 'save-hops: thread-pool round trips of one save (a new session / an appended turn), new vs the store before',
    subject_new_session: hops.new.first,
    subject_appended_turn: hops.new.append,
    baseline_new_session: hops.old.first,
    baseline_appended_turn: hops.old.append,
    goal: 4,
    met: hops.new.first <= 4 && hops.new.append <= 4,
  });
} finally {
  rmSync(home, { recursive: true, force: true });
}
