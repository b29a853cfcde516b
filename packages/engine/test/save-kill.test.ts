/**
 * REL-1 / issue 22: kill -9 in the middle of saves, again and again. A real process (the built
 * session store, packages/engine/dist) saves one session back to back, announcing `saving N` before
 * and `saved N` after each save; every fifth save rewrites the context (a new generation file,
 * the old one removed), the others append. It is killed at a random save, and the session is
 * loaded: it must hold exactly the last committed state or the one being saved (turns S or S+1
 * of the announced ones), whole and in order, with nothing reported damaged. The next process
 * resumes from what it loaded, so appends onto a torn tail are killed too.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChatMessage } from '@crystal/core';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionFiles } from '../src/index.js';

const dist = fileURLToPath(new URL('../dist/session-store.js', import.meta.url));
const KILLS = 60;
const ID = '20261201-000000-abcdef';

const child = `
const [dist, home, id, summaryEvery] = process.argv.slice(1);
const { SessionFiles } = await import(dist);
const text = (role, t) => ({ role, content: [{ type: 'text', text: t }] });
const system = text('system', 'live system');
let files, state, turn;
try {
  ({ files, state } = SessionFiles.load(home, id));
  state.context.unshift(system);
  turn = state.archive.length / 2;
} catch {
  files = SessionFiles.create(home, id);
  turn = 0;
  state = { id, workspace: '/ws', createdUtc: 'c', updatedUtc: 'u', provider: 'fake', model: 'm', context: [system], archive: [],
    userTurns: 0, modelCalls: 0, toolCalls: 0, usage: { inputTokens: 0, outputTokens: 0 }, cumulativeUsage: { inputTokens: 0, outputTokens: 0 },
    queued: [], images: [], imageMarkersTagged: true, pendingApprovals: [] };
}
process.stdout.write('start ' + turn + '\\n');
for (;;) {
  turn++;
  const pair = [text('user', 'question ' + turn + ' ' + 'q'.repeat(turn % 7 * 300)), text('assistant', 'answer ' + turn)];
  state.archive.push(...pair);
  if (turn % Number(summaryEvery) === 0) state.context = [system, text('user', '## Earlier context\\nsummary up to ' + turn), ...pair];
  else state.context.push(...pair);
  state.userTurns = turn;
  process.stdout.write('saving ' + turn + '\\n');
  await files.save(state);
  process.stdout.write('saved ' + turn + '\\n');
}
`;

interface Run {
  readonly start: number;
  readonly saving: number;
  readonly saved: number;
}

/**
 * One child, killed with -9 `delayMs` after it started saving (after its first save, when it
 * creates the session): the timer's jitter puts the kill at any point of a save.
 */
function runUntilKilled(home: string, delayMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--input-type=module', '-e', child, dist, home, ID, '5'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    let armed = false;
    proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (armed || !/^start (\d+)$/m.test(out)) return;
      if (/^start 0$/m.test(out) && !/^saved 1$/m.test(out)) return;
      armed = true;
      setTimeout(() => proc.kill('SIGKILL'), delayMs);
    });
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    proc.on('error', reject);
    proc.on('close', (_code, signal) => {
      if (signal !== 'SIGKILL') return reject(new Error(`the saving process ended without being killed:\n${stderr}`));
      // Pipes are synchronous on Linux: every line written before the kill is read by now.
      const last = (word: string): number => Number([...out.matchAll(new RegExp(`^${word} (\\d+)$`, 'gm'))].at(-1)?.[1] ?? 0);
      resolve({ start: last('start'), saving: last('saving'), saved: last('saved') });
    });
  });
}

const textOf = (m: ChatMessage): string => m.content.map((p) => (p.type === 'text' ? p.text : '')).join('');

const homes: string[] = [];
afterAll(() => {
  for (const dir of homes) rmSync(dir, { recursive: true, force: true });
});

describe('REL-1 issue 22 kill -9 during saves', () => {
  it(`REL-1 issue 22 ${KILLS} kills in the middle of back-to-back saves: every load is the last committed state or the one being saved, never damaged`, {
    timeout: 120_000,
  }, async () => {
    expect(existsSync(dist), `${dist} is missing: build first (npm run build)`).toBe(true);
    const home = mkdtempSync(join(tmpdir(), 'crystal-savekill-'));
    homes.push(home);
    let onDisk = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      const run = await runUntilKilled(home, Math.random() * 25);
      expect(run.start, `kill ${kill}: the process resumed from what was loaded`).toBe(onDisk);
      const { state, notes } = SessionFiles.load(home, ID);
      const turns = state.archive.length / 2;
      expect(notes, `kill ${kill}`).toEqual([]);
      // Committed: the last announced save (or what the process started from), or the one under way when the kill came.
      expect([Math.max(run.saved, run.start), run.saving], `kill ${kill}: ${turns} turns on disk`).toContain(turns);
      expect(state.archive.map(textOf).map((t) => t.split(' ').slice(0, 2).join(' '))).toEqual(
        Array.from({ length: turns }, (_, i) => [`question ${i + 1}`, `answer ${i + 1}`]).flat(),
      );
      // The context: from the last summary on (or from the start), whole turns in order.
      const context = state.context.map(textOf);
      const since = turns - (turns % 5);
      const expected =
        since === 0
          ? state.archive.map(textOf)
          : [`## Earlier context\nsummary up to ${since}`, ...state.archive.slice((since - 1) * 2).map(textOf)];
      expect(context, `kill ${kill}`).toEqual(expected);
      expect(state.userTurns).toBe(turns);
      onDisk = turns;
    }
    expect(onDisk).toBeGreaterThan(KILLS);
  });
});
