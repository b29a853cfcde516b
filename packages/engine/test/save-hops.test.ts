/**
 * Issue 22: a save costs a small fixed number of thread-pool round trips (each a hop main thread
 * → libuv pool → main thread, 0.1–0.5 ms here; a save used to make ~20 in sequence). Counted with
 * async_hooks: every file-system request the pool runs for an operation (FSREQCALLBACK for the
 * callback API, FSREQPROMISE and FILEHANDLECLOSEREQ for fs.promises) is one round trip. Real files.
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemMessage, userMessage } from '@crystal/core';
import { afterAll, describe, expect, it } from 'vitest';
import { assistant, stateOf, textOf } from './saved-state.js';
import { Checkpoints, readLog, SessionFiles, writeFileAtomic } from '../src/index.js';

const POOL_REQUESTS = new Set(['FSREQCALLBACK', 'FSREQPROMISE', 'FILEHANDLECLOSEREQ']);
const counting = new AsyncLocalStorage<{ count: number; types: string[] }>();
const hook = createHook({
  init(_id, type) {
    const tally = counting.getStore();
    if (tally && POOL_REQUESTS.has(type)) {
      tally.count++;
      tally.types.push(type);
    }
  },
}).enable();
afterAll(() => hook.disable());

/** The thread-pool requests `run` makes (only those of its own async chain are counted). */
async function poolTrips(run: () => Promise<unknown>): Promise<{ count: number; types: string[] }> {
  const tally = { count: 0, types: [] as string[] };
  await counting.run(tally, run);
  if (process.env.HOPS_DEBUG) console.log(tally.count, tally.types.join(' '));
  // Every durable write fsyncs at least once: a count of 0 would mean nothing was counted.
  expect(tally.count).toBeGreaterThan(0);
  return tally;
}

const homes: string[] = [];
const home = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-hops-'));
  homes.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of homes) rmSync(dir, { recursive: true, force: true });
});

describe('issue 22 session saves take few thread-pool round trips', () => {
  it('issue 22 the save of a new session (REL-1: the user message before the first request) takes at most 4 round trips', async () => {
    const dir = home();
    const state = stateOf('hops-new', [userMessage('first question')]);
    const files = SessionFiles.create(dir, state.id);
    const trips = await poolTrips(() => files.save(state));
    // The fsyncs of both transcripts and of the head's temp file (one parallel wait), then the folder's.
    expect(trips.count, trips.types.join(' ')).toBeLessThanOrEqual(4);
    const loaded = SessionFiles.load(dir, state.id);
    expect(loaded.notes).toEqual([]);
    expect(loaded.state.archive.map(textOf)).toEqual(['first question']);
    expect(readdirSync(join(dir, 'sessions')).sort()).toEqual([
      'hops-new.archive.1.jsonl',
      'hops-new.context.2.jsonl',
      'hops-new.json',
    ]);
  });

  it('issue 22 the save of an appended turn (the committed round) takes at most 4 round trips', async () => {
    const dir = home();
    const state = stateOf('hops-append', [userMessage('first question')]);
    const files = SessionFiles.create(dir, state.id);
    await files.save(state);
    for (const n of [1, 2, 3]) {
      const reply = assistant(`answer ${n}`);
      state.archive.push(reply);
      state.context.push(reply);
      const trips = await poolTrips(() => files.save(state));
      expect(trips.count, trips.types.join(' ')).toBeLessThanOrEqual(4);
      const next = userMessage(`question ${n + 1}`);
      state.archive.push(next);
      state.context.push(next);
    }
    await files.save(state);
    const loaded = SessionFiles.load(dir, state.id);
    expect(loaded.state.archive.map(textOf)).toEqual([
      'first question',
      'answer 1',
      'question 2',
      'answer 2',
      'question 3',
      'answer 3',
      'question 4',
    ]);
    expect(loaded.state.context.map(textOf)).toEqual(loaded.state.archive.map(textOf));
  });

  it('issue 22 a rewritten context (a new generation file, the old one removed) takes at most 4 round trips', async () => {
    const dir = home();
    const state = stateOf('hops-gen', [userMessage('q'), assistant('a')]);
    const files = SessionFiles.create(dir, state.id);
    await files.save(state);
    state.context = [systemMessage('live system'), userMessage('## Earlier context\nsummary')];
    const trips = await poolTrips(() => files.save(state));
    expect(trips.count, trips.types.join(' ')).toBeLessThanOrEqual(4);
    expect(readdirSync(join(dir, 'sessions')).sort()).toEqual([
      'hops-gen.archive.1.jsonl',
      'hops-gen.context.3.jsonl',
      'hops-gen.json',
    ]);
    expect(SessionFiles.load(dir, state.id).state.context.map(textOf)).toEqual(['## Earlier context\nsummary']);
  });

  it('issue 22 writeFileAtomic (head writes, checkpoint logs, the stat index) takes 2 round trips, in a folder it makes too', async () => {
    const dir = home();
    const target = join(dir, 'new', 'deeper', 'file.json');
    const trips = await poolTrips(() => writeFileAtomic(target, '{"a":1}\n'));
    // The temp file's fsync, then the folder's.
    expect(trips.count, trips.types.join(' ')).toBeLessThanOrEqual(2);
    expect(readFileSync(target, 'utf8')).toBe('{"a":1}\n');
    const again = await poolTrips(() => writeFileAtomic(target, '{"a":2}\n'));
    expect(again.count).toBeLessThanOrEqual(2);
    expect(readFileSync(target, 'utf8')).toBe('{"a":2}\n');
    expect(readdirSync(join(dir, 'new', 'deeper'))).toEqual(['file.json']);
  });

  it('issue 22 the checkpoint turn records of a new session take at most 2 round trips for the first turn and 5 for a later one', async () => {
    const dir = home();
    const ws = join(dir, 'ws');
    mkdirSync(ws);
    writeFileSync(join(ws, 'a.txt'), 'a\n');
    // The daily prune ran today (it is a sweep of Home, not part of recording a turn).
    mkdirSync(join(dir, 'checkpoints'), { recursive: true });
    writeFileSync(join(dir, 'checkpoints', 'last-gc'), new Date().toISOString());
    const checkpoints = new Checkpoints({ home: dir, workspace: ws, sessionId: 'ckpt-hops' });
    // Turn 1 of a new session: the empty context (nothing stored), the log written.
    const first = await poolTrips(() => checkpoints.beforeTurn(1, 'first question', []));
    expect(first.count, first.types.join(' ')).toBeLessThanOrEqual(2);
    // Turn 2: its context is stored (a pack and its index), then the log.
    const context = [userMessage('first question'), assistant('first answer')];
    const second = await poolTrips(() => checkpoints.beforeTurn(2, 'second question', context));
    expect(second.count, second.types.join(' ')).toBeLessThanOrEqual(5);
    const log = await readLog(dir, 'ckpt-hops');
    expect(log?.records.map((r) => (r.kind === 'turn' ? r.text : r.kind))).toEqual(['first question', 'second question']);
    expect((await checkpoints.contextBefore(2)).map(textOf)).toEqual(['first question', 'first answer']);
    const packs = readdirSync(join(dir, 'checkpoints', 'packs'));
    expect(packs.filter((n) => n.endsWith('.pack'))).toHaveLength(1);
    expect(packs.filter((n) => n.endsWith('.idx'))).toHaveLength(1);
    expect(packs.filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
