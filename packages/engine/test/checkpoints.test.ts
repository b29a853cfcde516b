/** CKPT-2 (store, bounds) and CKPT-3/4 (commands through the controller) on real files and a real bash. */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ChunkStore,
  Checkpoints,
  type Config,
  type ControllerEvent,
  collectGarbage,
  SessionController,
  sha256,
} from '../src/index.js';
import { until, bashReply as bash } from './helpers.js';

const temp = (p: string) => mkdtempSync(join(tmpdir(), p));

function storedBytes(dir: string): number {
  let total = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else total += statSync(join(d, e.name)).size;
    }
  };
  walk(dir);
  return total;
}

describe('checkpoint store', () => {
  it('CKPT-2 content-defined chunks: an edit in the middle of a 1 MB file stores a small fraction; the same bytes store nothing; packs 0600 in 0700', async () => {
    const home = temp('crystal-ckpt-store-');
    const store = ChunkStore.forHome(home);
    const lines = Array.from({ length: 16_000 }, (_, i) => `line ${i} ${'y'.repeat(50)}`);
    const first = Buffer.from(lines.join('\n'));
    const h1 = await store.put(first);
    expect(h1).toBe(sha256(first));
    await store.flush();
    const afterFirst = storedBytes(join(home, 'checkpoints'));
    lines.splice(8000, 0, 'an inserted line shifts everything after it');
    const second = Buffer.from(lines.join('\n'));
    await store.put(second);
    await store.flush();
    const grown = storedBytes(join(home, 'checkpoints')) - afterFirst;
    expect(grown).toBeLessThan(second.length * 0.05);
    const again = storedBytes(join(home, 'checkpoints'));
    const other = new ChunkStore(join(home, 'checkpoints'));
    await other.put(second);
    await other.flush();
    expect(storedBytes(join(home, 'checkpoints'))).toBe(again);
    expect(other.packsWritten).toBe(0);
    expect((await store.get(sha256(second))).equals(second)).toBe(true);
    expect((await new ChunkStore(join(home, 'checkpoints')).get(h1)).equals(first)).toBe(true);
    const packs = join(home, 'checkpoints', 'packs');
    expect(statSync(packs).mode & 0o777).toBe(0o700);
    const names = readdirSync(packs).sort();
    expect(names.filter((n) => n.endsWith('.pack'))).toHaveLength(2);
    expect(names.filter((n) => n.endsWith('.idx'))).toHaveLength(2);
    for (const name of names) expect(statSync(join(packs, name)).mode & 0o777).toBe(0o600);
    // A damaged piece is reported, never returned.
    for (const name of names.filter((n) => n.endsWith('.pack'))) {
      const bytes = readFileSync(join(packs, name));
      bytes.fill(0x41, 100, 400);
      writeFileSync(join(packs, name), bytes);
    }
    const fresh = new ChunkStore(join(home, 'checkpoints'));
    const results = await Promise.allSettled([fresh.get(h1), fresh.get(sha256(second))]);
    expect(results.every((r) => r.status === 'rejected' && /damaged|missing/.test(String(r.reason)))).toBe(true);
  });

  it('CKPT-2 gc prunes the oldest turns past the session cap, frees unreferenced chunks and reports it; the newest turn still rewinds', async () => {
    const home = temp('crystal-ckpt-gc-home-');
    const ws = temp('crystal-ckpt-gc-ws-');
    const checkpoints = new Checkpoints({ home, workspace: ws, sessionId: 'gc-session' });
    const body = (n: number) => Buffer.from(Array.from({ length: 3000 }, (_, i) => `${n}-${i}-${(i * n) % 97}`).join('\n'));
    writeFileSync(join(ws, 'f.txt'), body(0));
    for (let turn = 1; turn <= 6; turn++) {
      await checkpoints.beforeTurn(turn, `turn ${turn}`, []);
      await checkpoints.aroundBatch(turn, [{ id: `c${turn}`, name: 'bash', arguments: '{}', input: {} }], async () => {
        writeFileSync(join(ws, 'f.txt'), body(turn));
        return [];
      });
    }
    await checkpoints.settled();
    const report = await collectGarbage(home, { limits: { sessionCapBytes: 60_000 }, graceMs: 0 });
    expect(report.prunedTurns).toBeGreaterThan(0);
    expect(report.freedBytes).toBeGreaterThan(0);
    expect(report.bytesAfter).toBe(report.bytesBefore - report.freedBytes);
    const reopened = new Checkpoints({ home, workspace: ws, sessionId: 'gc-session' });
    const turns = (await reopened.entries()).map((e) => e.turn);
    expect(turns.at(-1)).toBe(6);
    expect(turns[0]).toBeGreaterThan(1);
    await expect(reopened.rewind({ to: 1, code: true, chat: false })).rejects.toThrow(/older turns were pruned by the size caps/);
    const result = await reopened.rewind({ to: 6, code: true, chat: false });
    expect(result.applied).toBe(true);
    expect(readFileSync(join(ws, 'f.txt')).equals(body(5))).toBe(true);
    // Nothing more to free the second time.
    expect((await collectGarbage(home, { limits: { sessionCapBytes: 60_000 }, graceMs: 0 })).freedBytes).toBe(0);
  });
});

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  await fake?.close();
  fake = undefined;
  controller = undefined;
});

describe('/rewind and /undo through the controller', () => {
  it('CKPT-3 CKPT-4 /rewind lists earlier messages, /undo restores the last turn, a conflict is asked about, chat rewind puts the message back', async () => {
    const home = temp('crystal-ckpt-ctl-home-');
    const ws = temp('crystal-ckpt-ctl-ws-');
    writeFileSync(join(ws, 'a.txt'), 'zero\n');
    fake = await FakeProvider.start({
      replies: [
        bash('echo one > a.txt'),
        { text: 'ok' },
        bash('echo two > a.txt'),
        { text: 'ok' },
        bash('echo three > a.txt'),
        { text: 'ok' },
        { text: 'fine' },
      ],
      whenExhausted: 'error',
    });
    const ctl = await SessionController.open({
      home,
      workspace: ws,
      config: { ...(fakeConfig(fake.baseUri) as Config), approval: 'full' },
      env: {},
    });
    controller = ctl;
    const events: ControllerEvent[] = [];
    ctl.on((e) => {
      events.push(e);
      if (e.type === 'approval-requested') ctl.answerApproval(e.prompt.id, 'once');
    });
    const finished = () => events.filter((e) => e.type === 'turn-finished').length;
    const outputs = () =>
      events.filter((e) => e.type === 'command-output').map((e) => (e as { output: { kind: string; text?: string } }).output);
    const command = async (text: string) => {
      const n = outputs().length;
      ctl.submit(text);
      await until(() => outputs().length > n);
      return outputs().at(-1) as { kind: string; text: string };
    };
    const read = () => readFileSync(join(ws, 'a.txt'), 'utf8');

    ctl.submit('first message');
    await until(() => finished() === 1);
    ctl.submit('second message');
    await until(() => finished() === 2);
    expect(read()).toBe('two\n');

    const list = await command('/rewind');
    expect(list.text).toMatch(/1 {2}first message {2}\(1 file changed since\)/);
    expect(list.text).toMatch(/2 {2}second message {2}\(1 file changed since\)/);
    const picker = events.find((e) => e.type === 'rewind-picker') as { entries: Array<{ turn: number; text: string }> };
    expect(picker.entries.map((e) => [e.turn, e.text])).toEqual([
      [1, 'first message'],
      [2, 'second message'],
    ]);

    const undo = await command('/undo');
    expect(undo.text).toContain('restored 1 file (a.txt)');
    expect(read()).toBe('one\n');
    await command('/undo');
    expect(read()).toBe('zero\n');
    expect((await command('/undo')).text).toContain('Nothing to undo');

    ctl.submit('third message');
    await until(() => finished() === 3);
    expect(read()).toBe('three\n');
    writeFileSync(join(ws, 'a.txt'), 'mine\n');
    const refused = await command('/rewind 3 code');
    expect(refused.kind).toBe('error');
    expect(refused.text).toContain('a.txt: changed since the checkpoint by someone else');
    expect(refused.text).toContain('/rewind 3 code force');
    expect(read()).toBe('mine\n');
    expect((await command('/rewind 3 code force')).kind).toBe('text');
    expect(read()).toBe('zero\n');

    const chat = await command('/rewind 2 chat');
    expect(chat.text).toContain('the conversation is back to before message 2');
    const restored = events.filter((e) => e.type === 'checkpoint-restored').at(-1);
    expect(restored).toMatchObject({ turn: 2, chat: true, code: false, composerText: 'second message' });
    ctl.submit('second, edited');
    await until(() => finished() === 4);
    const users = (fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> }).messages
      .filter((m) => m.role === 'user')
      .map((m) => m.content);
    expect(users).toEqual(['first message', 'second, edited']);
    expect(ctl.session.history().some((m) => m.content.some((p) => p.type === 'text' && p.text === 'third message'))).toBe(true);
  });
});

describe('hostile store', () => {
  it('CKPT-2 a pack index naming huge, negative or malformed pieces is ignored: reads say missing, nothing is allocated or crashes', async () => {
    const home = temp('crystal-ckpt-hostile-');
    const store = ChunkStore.forHome(home);
    const body = Buffer.from('a small file\n');
    const hash = await store.put(body);
    await store.flush();
    const packs = join(home, 'checkpoints', 'packs');
    const bogus = 'f'.repeat(64);
    writeFileSync(join(packs, `${bogus}.pack`), 'x'.repeat(100));
    writeFileSync(
      join(packs, `${bogus}.idx`),
      JSON.stringify([
        [`c${'a'.repeat(64)}`, 0, 1e12],
        [`c${'b'.repeat(64)}`, -5, 10],
        ['../../etc/passwd', 0, 10],
        'nonsense',
        [`m${'c'.repeat(64)}`, 0, 10],
      ]),
    );
    writeFileSync(join(packs, `${'e'.repeat(64)}.idx`), '{not json');
    const fresh = new ChunkStore(join(home, 'checkpoints'));
    expect((await fresh.get(hash)).equals(body)).toBe(true);
    await expect(fresh.get('a'.repeat(64))).rejects.toThrow(/missing or damaged/);
    await expect(fresh.get('b'.repeat(64))).rejects.toThrow(/missing or damaged/);
    // The one well-formed row points at junk: it is reported damaged, never returned.
    await expect(fresh.get('c'.repeat(64))).rejects.toThrow(/damaged|missing/);
  });
});

describe('hostile workspace', () => {
  it('CKPT-4 a folder replaced by a link to outside the workspace is never written through by a restore', async () => {
    const { mkdirSync, symlinkSync, rmSync, existsSync } = await import('node:fs');
    const home = temp('crystal-ckpt-link-home-');
    const ws = temp('crystal-ckpt-link-ws-');
    const outside = temp('crystal-ckpt-outside-');
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub', 'f.txt'), 'inside\n');
    const checkpoints = new Checkpoints({ home, workspace: ws, sessionId: 'link-session' });
    await checkpoints.beforeTurn(1, 'turn', []);
    await checkpoints.aroundBatch(1, [{ id: 'c', name: 'bash', arguments: '{}', input: {} }], async () => {
      // The batch deletes the folder and puts a link to a folder outside in its place.
      rmSync(join(ws, 'sub'), { recursive: true });
      symlinkSync(outside, join(ws, 'sub'));
      return [];
    });
    const result = await checkpoints.rewind({ to: 1, code: true, chat: false, force: true });
    expect(existsSync(join(outside, 'f.txt'))).toBe(false);
    expect(result.notRestorable.map((n) => n.path)).toEqual(['sub/f.txt']);
    expect(result.notRestorable[0]?.reason).toContain('leads outside the workspace through a link');
  });
});
