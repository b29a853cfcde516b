/**
 * CKPT-1 and issue 22 item 4: the first capture of the workspace (a walk of the whole tree) waits
 * for the session's first tool call that may change files. A turn that only talks walks nothing;
 * a bash batch after the deferred start still rewinds to the tree as its turn began. Real files,
 * a real bash, the fake provider over HTTP.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { Checkpoints, type Config, SessionController } from '../src/index.js';
import { bashReply as bash, drive, until } from './helpers.js';

const temp = (p: string) => mkdtempSync(join(tmpdir(), p));
let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close();
  controller = undefined;
  await fake?.close();
  fake = undefined;
});

function tree(): string {
  const ws = temp('crystal-deferred-ws-');
  mkdirSync(join(ws, 'src', 'sub'), { recursive: true });
  for (let i = 0; i < 40; i++) writeFileSync(join(ws, 'src', `f${i}.ts`), `export const v${i} = ${i};\n`);
  writeFileSync(join(ws, 'a.txt'), 'zero\n');
  writeFileSync(join(ws, 'b.txt'), 'bee\n');
  writeFileSync(join(ws, 'src', 'sub', 'c.txt'), 'see\n');
  return ws;
}

async function open(home: string, ws: string, replies: FakeReply[]) {
  fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  const ctl = await SessionController.open({
    home,
    workspace: ws,
    config: { ...(fakeConfig(fake.baseUri) as Config), approval: 'full' },
    env: {},
  });
  controller = ctl;
  const { send, command } = drive(ctl);
  return { ctl, send, command, checkpoints: ctl.session.checkpoints as Checkpoints };
}

describe('the first capture waits for a tool call (issue 22 item 4)', () => {
  it('CKPT-1 a turn that only talks walks nothing: the tracker never scans the tree and no stat index is written; the turn still has its checkpoint', async () => {
    const home = temp('crystal-deferred-home-');
    const ws = tree();
    const { send, checkpoints } = await open(home, ws, [{ text: 'just talking' }, { text: 'still talking' }]);
    await send('hello');
    await send('and again');
    await checkpoints.settled();
    expect(checkpoints.tracker.counts).toEqual({ walks: 0, statPasses: 0 });
    expect(checkpoints.tracker.size).toBe(0);
    const indexDir = join(home, 'checkpoints', 'index');
    expect(existsSync(indexDir) ? readdirSync(indexDir) : []).toEqual([]);
    // A conversation rewind still has both turns to go back to.
    expect((await checkpoints.entries()).map((e) => [e.turn, e.text])).toEqual([
      [1, 'hello'],
      [2, 'and again'],
    ]);
  });

  it('CKPT-1 CKPT-3 a write and a bash batch after turns that only talked rewind to the tree as their turn began (changed, deleted and new files)', async () => {
    const home = temp('crystal-deferred-home-');
    const ws = tree();
    const { send, command, checkpoints } = await open(home, ws, [
      { text: 'only talk first' },
      { toolCalls: [{ name: 'write', arguments: { path: 'b.txt', contents: 'written\n' } }] },
      bash('echo one > a.txt && rm src/sub/c.txt && echo new > n.txt && echo edited > src/f7.ts'),
      { text: 'done' },
    ]);
    await send('first, no tools');
    expect(checkpoints.tracker.counts.walks).toBe(0);
    await send('second, with tools');
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('one\n');
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('written\n');
    expect(existsSync(join(ws, 'n.txt'))).toBe(true);
    // The bash batch started the one walk of the session.
    expect(checkpoints.tracker.counts.walks).toBe(1);

    const out = await command('/rewind 2 code');
    expect(out.kind).toBe('text');
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('zero\n');
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('bee\n');
    expect(readFileSync(join(ws, 'src', 'sub', 'c.txt'), 'utf8')).toBe('see\n');
    expect(readFileSync(join(ws, 'src', 'f7.ts'), 'utf8')).toBe('export const v7 = 7;\n');
    expect(existsSync(join(ws, 'n.txt'))).toBe(false);
  });

  it('CKPT-1 the first request does not wait for the turn record: a store slow to write holds the end of the turn, not its request', async () => {
    const home = temp('crystal-deferred-home-');
    const ws = tree();
    const { ctl, checkpoints } = await open(home, ws, [{ text: 'answered' }]);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const put = checkpoints.store.put.bind(checkpoints.store);
    checkpoints.store.put = async (bytes) => {
      await held;
      return put(bytes);
    };
    let finished = false;
    ctl.on((e) => {
      if (e.type === 'turn-finished') finished = true;
    });
    ctl.submit('hello');
    await until(() => (fake as FakeProvider).requests.length === 1);
    expect(finished).toBe(false);
    release();
    await until(() => finished);
    expect((await checkpoints.entries()).map((e) => e.text)).toEqual(['hello']);
  });

  it('CKPT-1 a write batch waits for a first walk a streaming call started: the walk never takes the written file for the tree as it was, so the write still rewinds', async () => {
    const home = temp('crystal-deferred-home-');
    const ws = tree();
    const ck = new Checkpoints({ home, workspace: ws, sessionId: 'walk-race' });
    await ck.beforeTurn(1, 'one', []);
    // The worst order, made certain: the walk a streaming bash call started lists the tree only
    // once the write has run, and the scan after the write comes only once the walk is done.
    let ran!: () => void;
    const runCalled = new Promise<void>((resolve) => {
      ran = resolve;
    });
    let walkDone!: () => void;
    const walked = new Promise<void>((resolve) => {
      walkDone = resolve;
    });
    const scanAll = ck.tracker.scanAll.bind(ck.tracker);
    ck.tracker.scanAll = async (options) => {
      if (options?.statOnly) {
        await Promise.race([runCalled, new Promise((r) => setTimeout(r, 300))]);
        const changes = await scanAll(options);
        walkDone();
        return changes;
      }
      return scanAll(options);
    };
    const scanPaths = ck.tracker.scanPaths.bind(ck.tracker);
    let pathScans = 0;
    ck.tracker.scanPaths = async (paths) => {
      if (++pathScans === 2) await walked;
      return scanPaths(paths);
    };
    ck.toolCallStreaming('bash');
    await ck.aroundBatch(1, [{ id: 'w', name: 'write', arguments: '{}', input: { path: 'b.txt' } }], async () => {
      ran();
      writeFileSync(join(ws, 'b.txt'), 'written\n');
      return [];
    });
    await ck.flush();
    await ck.settled();
    const changes = (await ck.records()).records.flatMap((r) => (r.kind === 'batch' ? r.changes : []));
    expect(changes.map((c) => [c.path, c.before.kind, c.after.kind])).toEqual([['b.txt', 'file', 'file']]);
    const result = await ck.rewind({ to: 1, code: true, chat: false });
    expect(result.restored).toEqual(['b.txt']);
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('bee\n');
    await ck.stop();
  });
});

describe("the turn's checkpoint record waits for its first request (issue 22)", () => {
  async function openWith(home: string, ws: string, replyFor: (seen: { recorded: boolean }) => FakeReply) {
    const seen: Array<{ recorded: boolean }> = [];
    let sessionId = '';
    fake = await FakeProvider.start({
      replyFor: () => {
        // The session's checkpoint file is where its turn records are kept (checkpoints/log.ts).
        const at = { recorded: existsSync(join(home, 'checkpoints', 'sessions', `${sessionId}.json`)) };
        seen.push(at);
        return replyFor(at);
      },
    });
    const ctl = await SessionController.open({
      home,
      workspace: ws,
      config: { ...(fakeConfig(fake.baseUri) as Config), approval: 'full' },
      env: {},
    });
    controller = ctl;
    sessionId = ctl.session.id;
    return { ctl, seen, checkpoints: ctl.session.checkpoints as Checkpoints, ...drive(ctl) };
  }

  it("CKPT-1 issue 22: the record is not started before the round opens its request (it no longer shares the REL-1 save's and the request's time); it is written during the turn", async () => {
    const home = temp('crystal-deferred-home-');
    const ws = tree();
    const { ctl, send, checkpoints } = await openWith(home, ws, () => ({ text: 'hello back' }));
    // Controller events are delivered synchronously: `round-started` comes just before the round
    // hands its request to the client, and the record starts only after that (turn.ts afterRequest).
    const atRoundStart: boolean[] = [];
    const logFile = join(home, 'checkpoints', 'sessions', `${ctl.session.id}.json`);
    ctl.on((event) => {
      if (event.type === 'round-started') atRoundStart.push(existsSync(logFile));
    });
    await send('hello');
    expect(atRoundStart).toEqual([false]);
    await checkpoints.settled();
    expect((await checkpoints.entries()).map((e) => [e.turn, e.text])).toEqual([[1, 'hello']]);
  });

  it('CKPT-1 issue 22: a turn whose request fails is still recorded, and a tool batch in a later round rewinds to the tree as its turn began', async () => {
    const home = temp('crystal-deferred-home-');
    const ws = tree();
    let n = 0;
    const { send, checkpoints } = await openWith(home, ws, () => {
      n++;
      if (n === 1) return { error: { status: 400, message: 'refused' } };
      if (n === 2) return { toolCalls: [{ name: 'write', arguments: { path: 'b.txt', contents: 'written\n' } }] };
      return { text: 'done' };
    });
    await send('this one fails');
    await send('now write');
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('written\n');
    await checkpoints.settled();
    const entries = await checkpoints.entries();
    expect(entries.map((e) => [e.turn, e.text])).toEqual([
      [1, 'this one fails'],
      [2, 'now write'],
    ]);
    await checkpoints.rewind({ to: 2, code: true, chat: false });
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('bee\n');
  });

  it('CKPT-1 issue 22: a turn interrupted before its first request left is recorded at its end', async () => {
    const home = temp('crystal-deferred-home-');
    const ws = tree();
    const { ctl, send, seen, checkpoints } = await openWith(home, ws, () => ({ text: 'never asked' }));
    // Interrupted as it starts, before any request (the operator's Ctrl+C).
    ctl.on((event) => {
      if (event.type === 'turn-started') ctl.ctrlC(true);
    });
    await send('stop at once');
    expect(seen).toEqual([]);
    await checkpoints.settled();
    expect((await checkpoints.entries()).map((e) => [e.turn, e.text])).toEqual([[1, 'stop at once']]);
  });
});
