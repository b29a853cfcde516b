/**
 * CKPT-1 CKPT-2 CKPT-6: the first checkpoint of a tree is packed (one fsync per pack); a
 * `crystal` killed with -9 in the middle of it (between a pack and its index, the worst point)
 * leaves a store where every piece that is named can be read and proven, gc sweeps what the kill
 * left, and the next session goes on and rewinds. Real binary, real files, real kill -9.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChunkStore } from '@crystal/engine';
import { crystalBin, FakeProvider, fakeConfig, runCrystal, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let fake: FakeProvider | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

/** Every piece an index names reads back and hashes to its name; every file copy a record names is whole. */
async function assertConsistent(homePath: string): Promise<{ packs: number; orphans: number }> {
  const dir = join(homePath, 'checkpoints', 'packs');
  const names = readdirSync(dir);
  const store = new ChunkStore(join(homePath, 'checkpoints'));
  let packs = 0;
  for (const name of names.filter((n) => n.endsWith('.idx'))) {
    packs++;
    expect(names).toContain(`${name.slice(0, -4)}.pack`);
    const rows = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Array<[string, number, number]>;
    for (const [key] of rows) {
      const plain = await store.pieceOf(key);
      expect(plain, key).toBeDefined();
      if (!plain) continue;
      if (key.startsWith('c')) expect(sha(plain)).toBe(key.slice(1));
      else
        for (const [chunk] of JSON.parse(plain.toString('utf8')).chunks as Array<[string]>)
          expect(await store.rawOf(`c${chunk}`)).toBeDefined();
    }
  }
  // What the session log and the stat index name is readable and proven (get re-hashes).
  const named: string[] = [];
  for (const log of readdirSync(join(homePath, 'checkpoints', 'sessions')).filter((n) => n.endsWith('.json'))) {
    const records = JSON.parse(readFileSync(join(homePath, 'checkpoints', 'sessions', log), 'utf8')).records as Array<{
      kind: string;
      context?: string;
      changes?: Array<{ before: { kind: string; hash?: string }; after: { kind: string; hash?: string } }>;
    }>;
    for (const r of records) {
      if (r.context) named.push(r.context);
      for (const c of r.changes ?? []) for (const s of [c.before, c.after]) if (s.kind === 'file' && s.hash) named.push(s.hash);
    }
  }
  const indexDir = join(homePath, 'checkpoints', 'index');
  if (existsSync(indexDir))
    for (const name of readdirSync(indexDir))
      for (const row of JSON.parse(readFileSync(join(indexDir, name), 'utf8')) as Array<unknown[]>) {
        const state = row[5] as { kind: string; hash?: string };
        if (state.kind === 'file' && state.hash) named.push(state.hash);
      }
  expect(named.length).toBeGreaterThan(0);
  for (const hash of named) expect(sha(await store.get(hash))).toBe(hash);
  const orphans = names.filter((n) => n.endsWith('.pack') && !names.includes(`${n.slice(0, -5)}.idx`)).length;
  return { packs, orphans };
}

describe('first capture', () => {
  it('CKPT-6 CKPT-2 kill -9 in the middle of the first capture (a pack written, its index not): the store stays consistent, gc sweeps the orphan, the next session goes on and rewinds', async () => {
    const ws = tempDir('crystal-capture-ws-');
    const body = (i: number) => {
      let text = '';
      for (let k = 0; text.length < 2048; k++) text += sha(`${i}-${k}`);
      return `${text}\n`;
    };
    const names = Array.from({ length: 600 }, (_, i) => `f${String(i).padStart(3, '0')}.txt`);
    for (const [i, n] of names.entries()) writeFileSync(join(ws, n), body(i));
    fake = await FakeProvider.start({
      // Turn 1's bash call starts to stream and stalls: the first capture (started by the call,
      // issue 22 item 4) runs beside a waiting turn, and the kill comes before the call ends.
      replies: [
        { toolCalls: [{ name: 'bash', arguments: { command: 'true' } }], stallAfter: 2 },
        { toolCalls: [{ name: 'write', arguments: { path: 'f000.txt', contents: 'overwritten\n' } }] },
        { text: 'done' },
      ],
      whenExhausted: 'error',
    });
    home = tempHome(fakeConfig(fake.baseUri));
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: home.path,
      CRYSTAL_HOME: home.path,
      CRYSTAL_CHECKPOINT_TEST_PACK_BYTES: '16384',
      CRYSTAL_CHECKPOINT_TEST_PAUSE_PACK: '5',
    };
    const child = spawn(process.execPath, [crystalBin, 'run', '--approval', 'full', '-w', ws, 'capture this tree'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('checkpoint pack 5 paused before its index')) resolve();
      });
      child.on('close', () => reject(new Error(`crystal ended before the pause: ${err}`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));

    const killed = await assertConsistent(home.path);
    expect(killed.orphans).toBe(1);
    expect(killed.packs).toBeGreaterThanOrEqual(4);
    const id = (readdirSync(join(home.path, 'checkpoints', 'sessions'))[0] as string).replace(/\.json$/, '');

    const gc = await runCrystal(['checkpoints', 'gc', '--grace', '0', '--json'], { home: home.path });
    expect(gc.stderr).toBe('');
    expect(JSON.parse(gc.stdout).freedFiles).toBeGreaterThanOrEqual(1);
    expect((await assertConsistent(home.path)).orphans).toBe(0);

    // The next session resumes, overwrites a file, and a rewind brings the original back.
    const next = await runCrystal(['run', '--approval', 'full', '-w', ws, '--resume', id, 'overwrite f000'], {
      home: home.path,
      cwd: ws,
    });
    expect(next.code).toBe(0);
    expect(readFileSync(join(ws, 'f000.txt'), 'utf8')).toBe('overwritten\n');
    const rewound = await runCrystal(['rewind', id, '--to', '2', '--code'], { home: home.path });
    expect(rewound.stderr).toBe('');
    expect(rewound.stdout).toContain('restored 1 file (f000.txt)');
    expect(readFileSync(join(ws, 'f000.txt'), 'utf8')).toBe(body(0));
    await assertConsistent(home.path);
  });
});
