/**
 * kill -9 at random points while a process runs consecutive turns (each ending in a save)
 * against the fake provider, until 200 turns have completed in all. After every kill the session
 * must load, hold whole turns only (a user message, then its reply unless the kill came before
 * the reply: REL-1 saves the message first), and never lose a turn the killed
 * process had reported as saved. Prints the kill count and the failures (goal: 0).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printFigure } from './lib/harness.mjs';

const TURNS = Number(process.env.KILL_TURNS ?? 200);
const engine = await import(new URL('../packages/engine/dist/index.js', import.meta.url).href);
const { FakeProvider, fakeConfig } = await import(new URL('../packages/testkit/dist/index.js', import.meta.url).href);
const child = new URL('./lib/turn-loop.mjs', import.meta.url).pathname;

const fake = await FakeProvider.start({ replies: [{ text: 'a short reply that is saved', usage: { input: 5, output: 6 } }] });
const home = mkdtempSync(join(tmpdir(), 'crystal-bench-kill-'));
writeFileSync(join(home, 'config.json'), JSON.stringify(fakeConfig(fake.baseUri)));
let sessionId = '';
let completed = 0;
let kills = 0;
const failures = [];

function runUntilKilled(delayMs) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, home, home, sessionId], { stdio: ['ignore', 'pipe', 'pipe'] });
    let doneHere = 0;
    let stderr = '';
    let candidate = '';
    proc.stdout.setEncoding('utf8').on('data', (chunk) => {
      for (const line of chunk.split('\n')) {
        if (line.startsWith('session ')) candidate = line.slice(8);
        if (line.startsWith('done ')) {
          doneHere++;
          // A session exists on disk once its first turn has saved; a kill before that leaves none.
          sessionId = candidate;
        }
      }
    });
    proc.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timer = setTimeout(() => proc.kill('SIGKILL'), delayMs);
    proc.on('error', reject);
    proc.on('close', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') return reject(new Error(`turn loop ended without being killed:\n${stderr}`));
      resolve(doneHere);
    });
  });
}

try {
  let expectedAtLeast = 0;
  while (completed < TURNS) {
    const doneHere = await runUntilKilled(80 + Math.floor(Math.random() * 400));
    kills++;
    completed += doneHere;
    expectedAtLeast += doneHere;
    if (!sessionId) continue;
    try {
      const { state } = engine.SessionFiles.load(home, sessionId);
      const turns = state.archive.filter((m) => m.role === 'user').length;
      if (turns < expectedAtLeast) failures.push(`kill ${kills}: ${turns} turns on disk, ${expectedAtLeast} reported saved`);
      // A reply follows its own user message; a user message may follow another one: REL-1 saves
      // the message before the request, so a turn killed while waiting for its reply keeps it.
      state.archive.forEach((m, i) => {
        const after = state.archive[i - 1]?.role;
        const whole = m.role === 'user' || (m.role === 'assistant' && after === 'user');
        if (!whole) failures.push(`kill ${kills}: item ${i} is ${m.role} after ${after ?? 'nothing'}`);
      });
      expectedAtLeast = turns;
    } catch (error) {
      if (expectedAtLeast > 0) failures.push(`kill ${kills}: session did not load: ${error.message}`);
    }
  }
  printFigure({
    figure: 'kill -9 during consecutive turns: unreadable or inconsistent session files',
    turns: completed,
    kills,
    failures: failures.length,
    goal: 0,
    met: failures.length === 0,
    ...(failures.length ? { examples: failures.slice(0, 5) } : {}),
  });
  if (failures.length) process.exitCode = 1;
} finally {
  await fake.close();
  rmSync(home, { recursive: true, force: true });
}
