/** CKPT-1: how a batch finds what changed on a tree seen before (stat passes), and the bound on the first capture; real files. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Checkpoints } from '../src/index.js';

const temp = (p: string) => mkdtempSync(join(tmpdir(), p));
const bashCall = (id: string) => [{ id, name: 'bash', arguments: '{}', input: { command: 'x' } }];

async function batch(ck: Checkpoints, turn: number, id: string, work: () => void) {
  await ck.aroundBatch(turn, bashCall(id), async () => {
    work();
    return [];
  });
  await ck.flush();
}

describe('checkpoint scans', () => {
  it('CKPT-1 after the first walk a bash batch is a stat pass: an in-place edit, a new file in a new folder, a deletion and a rename are captured without another walk; a new .gitignore walks again', async () => {
    const home = temp('crystal-scan-home-');
    const ws = temp('crystal-scan-ws-');
    mkdirSync(join(ws, 'src', 'deep'), { recursive: true });
    for (let i = 0; i < 50; i++) writeFileSync(join(ws, 'src', `f${i}.ts`), `export const v${i} = ${i};\n`);
    writeFileSync(join(ws, 'src', 'deep', 'keep.ts'), 'keep\n');
    const ck = new Checkpoints({ home, workspace: ws, sessionId: 'scan' });
    await ck.beforeTurn(1, 'one', []);
    // The first walk starts with the turn's first tool call that may change files (issue 22 item 4).
    ck.toolCallStreaming('bash');
    await ck.settled();
    expect(ck.tracker.counts.walks).toBe(1);

    await batch(ck, 1, 'b1', () => {
      writeFileSync(join(ws, 'src', 'f1.ts'), 'edited in place\n');
      mkdirSync(join(ws, 'src', 'new', 'deeper'), { recursive: true });
      writeFileSync(join(ws, 'src', 'new', 'deeper', 'made.ts'), 'made\n');
      unlinkSync(join(ws, 'src', 'f2.ts'));
      writeFileSync(join(ws, 'src', 'deep', 'keep.ts'), 'keep, changed\n');
    });
    await batch(ck, 1, 'b2', () => {
      const body = readFileSync(join(ws, 'src', 'f3.ts'));
      unlinkSync(join(ws, 'src', 'f3.ts'));
      writeFileSync(join(ws, 'src', 'renamed.ts'), body);
    });
    expect(ck.tracker.counts.walks).toBe(1);
    expect(ck.tracker.counts.statPasses).toBe(4);
    const log = await ck.records();
    const changed = log.records.flatMap((r) =>
      r.kind === 'batch' ? r.changes.map((c) => `${c.path}:${c.before.kind}>${c.after.kind}`) : [],
    );
    expect(changed.sort()).toEqual(
      [
        'src/deep/keep.ts:file>file',
        'src/f1.ts:file>file',
        'src/f2.ts:file>absent',
        'src/f3.ts:file>absent',
        'src/new/deeper/made.ts:absent>file',
        'src/renamed.ts:absent>file',
      ].sort(),
    );

    // A new .gitignore changes what the walk takes: the batch walks again and the ignored file drops out of view.
    await batch(ck, 1, 'b3', () => {
      writeFileSync(join(ws, 'src', '.gitignore'), 'ignored.ts\n');
      writeFileSync(join(ws, 'src', 'ignored.ts'), 'not tracked\n');
    });
    expect(ck.tracker.counts.walks).toBe(2);
    const last = (await ck.records()).records.at(-1);
    expect(last?.kind === 'batch' ? last.changes.map((c) => c.path) : []).toEqual(['src/.gitignore']);

    // Everything rewinds to before turn 1.
    const result = await ck.rewind({ to: 1, code: true, chat: false });
    expect(result.applied).toBe(true);
    expect(readFileSync(join(ws, 'src', 'f1.ts'), 'utf8')).toBe('export const v1 = 1;\n');
    expect(readFileSync(join(ws, 'src', 'f2.ts'), 'utf8')).toBe('export const v2 = 2;\n');
    expect(readFileSync(join(ws, 'src', 'f3.ts'), 'utf8')).toBe('export const v3 = 3;\n');
    expect(readFileSync(join(ws, 'src', 'deep', 'keep.ts'), 'utf8')).toBe('keep\n');
    expect(() => readFileSync(join(ws, 'src', 'renamed.ts'))).toThrow();
    expect(() => readFileSync(join(ws, 'src', 'new', 'deeper', 'made.ts'))).toThrow();
    await ck.stop();
    rmSync(ws, { recursive: true, force: true });
  });

  it('CKPT-1 a bash batch never waits for the whole first capture: past the bound it runs, and a file it changes that was not read yet is recorded as not restorable, never as wrong content', async () => {
    const home = temp('crystal-bound-home-');
    const ws = temp('crystal-bound-ws-');
    writeFileSync(join(ws, 'a.txt'), 'original a\n');
    writeFileSync(join(ws, 'b.txt'), 'original b\n');
    // Older than the racy window (tracker.ts RACY_MS), so a stat pass trusts their stat and does not read them.
    await new Promise((r) => setTimeout(r, 1100));
    const ck = new Checkpoints({ home, workspace: ws, sessionId: 'bound' });
    // The content reading of the first capture never finishes (a tree too large to read in time).
    ck.tracker.fillPending = () => new Promise<number>(() => {});
    await ck.beforeTurn(1, 'one', []);
    // An edit names its file: it is read before the edit, whatever the first capture is doing.
    await ck.aroundBatch(1, [{ id: 'e', name: 'write', arguments: '{}', input: { path: 'b.txt' } }], async () => {
      writeFileSync(join(ws, 'b.txt'), 'written b\n');
      return [];
    });
    await batch(ck, 1, 'b1', () => writeFileSync(join(ws, 'a.txt'), 'changed a\n'));
    const changes = (await ck.records()).records.flatMap((r) => (r.kind === 'batch' ? r.changes : []));
    expect(changes.find((c) => c.path === 'b.txt')?.before.kind).toBe('file');
    expect(changes.find((c) => c.path === 'a.txt')?.before).toMatchObject({
      kind: 'unrestorable',
      reason: expect.stringContaining('first checkpoint of this workspace had read it'),
    });
    const result = await ck.rewind({ to: 1, code: true, chat: false });
    expect(result.notRestorable.map((n) => n.path)).toEqual(['a.txt']);
    expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('original b\n');
    expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('changed a\n');
  });

  it('CKPT-1 a session that ends stops the first walk: nothing more is listed, no note, and the next session walks the tree', async () => {
    const home = temp('crystal-scan-home-');
    const ws = temp('crystal-scan-ws-');
    for (let d = 0; d < 20; d++) {
      mkdirSync(join(ws, `d${d}`));
      for (let i = 0; i < 100; i++) writeFileSync(join(ws, `d${d}`, `f${i}.txt`), `${d}/${i}\n`);
    }
    const notes: string[] = [];
    const ck = new Checkpoints({
      home,
      workspace: ws,
      sessionId: 'stopped',
      publish: (e) => {
        if (e.type === 'note') notes.push(e.text);
      },
    });
    await ck.beforeTurn(1, 'one', []);
    ck.toolCallStreaming('bash');
    await ck.stop();
    await ck.settled();
    expect(ck.tracker.size).toBeLessThan(2000);
    expect(notes).toEqual([]);

    const next = new Checkpoints({ home, workspace: ws, sessionId: 'next' });
    await next.beforeTurn(1, 'one', []);
    next.toolCallStreaming('bash');
    await next.settled();
    expect(next.tracker.size).toBe(2000);
  });
});
