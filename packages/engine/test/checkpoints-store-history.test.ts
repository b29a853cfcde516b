/**
 * CKPT-2 and issue 22 items 4/5: the checkpoint a turn records before it starts (its model context)
 * costs the same however long Home's history is. It used to read every pack index in Home at the
 * first store write (one more file per earlier turn or capture), and to hash, store and fsync a
 * pack for the empty context of every new session. Real files in a temp Home.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChatMessage, text } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { Checkpoints, ChunkStore, collectGarbage, EMPTY_CONTEXT_HASH } from '../src/index.js';

const temp = (p: string) => mkdtempSync(join(tmpdir(), p));

/** `packs` earlier sessions, each of which wrote one pack (a distinct piece). */
async function homeWithHistory(packs: number): Promise<string> {
  const home = temp('crystal-ckpt-history-');
  for (let i = 0; i < packs; i++) {
    const store = ChunkStore.forHome(home);
    await store.put(Buffer.from(`earlier session ${i}: ${'x'.repeat(300)}`));
    await store.flush();
  }
  return home;
}

const message = (role: 'user' | 'assistant', value: string): ChatMessage => ({ role, content: [text(value)] });

async function recordTwoTurns(home: string): Promise<{ checkpoints: Checkpoints; indexesRead: number; packs: number[] }> {
  const checkpoints = new Checkpoints({ home, workspace: temp('crystal-ckpt-ws-'), sessionId: '20261201-120000-abcdef' });
  const packs: number[] = [];
  await checkpoints.beforeTurn(1, 'hi', []);
  packs.push(checkpoints.store.packsWritten);
  await checkpoints.beforeTurn(2, 'again', [message('user', 'hi'), message('assistant', 'hello there')]);
  packs.push(checkpoints.store.packsWritten);
  await checkpoints.flush();
  return { checkpoints, indexesRead: checkpoints.store.indexesRead, packs };
}

describe('CKPT-2 a turn record does not grow with the history in Home (issue 22 items 4 and 5)', () => {
  it('CKPT-2 recording turns reads no pack index, with 1 earlier pack or 60; the first turn (empty context) writes no pack at all', async () => {
    for (const history of [1, 60]) {
      const home = await homeWithHistory(history);
      expect(readdirSync(join(home, 'checkpoints', 'packs')).filter((n) => n.endsWith('.idx'))).toHaveLength(history);
      const { checkpoints, indexesRead, packs } = await recordTwoTurns(home);
      expect(indexesRead, `pack indexes read with ${history} earlier packs`).toBe(0);
      // Turn 1's context is the empty one, a piece every store has: nothing hashed, nothing written.
      expect(packs).toEqual([0, 1]);
      // Both records still rewind, from a fresh reader (another process).
      const reader = new Checkpoints({ home, workspace: checkpoints.workspace, sessionId: checkpoints.sessionId });
      expect(await reader.contextBefore(1)).toEqual([]);
      expect(await reader.contextBefore(2)).toEqual([message('user', 'hi'), message('assistant', 'hello there')]);
    }
  });

  it('CKPT-2 the empty context is a built-in piece: named by its real SHA-256, read back without a file, kept by gc', async () => {
    expect(EMPTY_CONTEXT_HASH).toBe(createHash('sha256').update('[]').digest('hex'));
    const home = temp('crystal-ckpt-empty-');
    const store = ChunkStore.forHome(home);
    expect(await store.put(Buffer.from('[]'))).toBe(EMPTY_CONTEXT_HASH);
    await store.flush();
    expect(store.packsWritten).toBe(0);
    expect((await store.get(EMPTY_CONTEXT_HASH)).toString('utf8')).toBe('[]');
    const { checkpoints } = await recordTwoTurns(home);
    await collectGarbage(home, { graceMs: 0 });
    const reader = new Checkpoints({ home, workspace: checkpoints.workspace, sessionId: checkpoints.sessionId });
    expect(await reader.contextBefore(1)).toEqual([]);
    expect(await reader.contextBefore(2)).toHaveLength(2);
  });

  it('CKPT-2 content of several pieces stored by an earlier session is still found and not stored again', async () => {
    const home = await homeWithHistory(5);
    let seed = 7;
    const big = Buffer.alloc(300 * 1024);
    for (let i = 0; i < big.length; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      big[i] = 97 + ((seed >>> 24) % 26);
    }
    const first = ChunkStore.forHome(home);
    const hash = await first.put(big, { lookup: 'loaded' });
    await first.flush();
    expect(first.packsWritten).toBe(1);
    const later = ChunkStore.forHome(home);
    expect(await later.put(big, { lookup: 'loaded' })).toBe(hash);
    await later.flush();
    expect(later.packsWritten).toBe(0);
    expect((await later.get(hash)).equals(big)).toBe(true);
  });
});
