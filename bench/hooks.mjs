/**
 * Figure (issue 18, HOOK-1): a turn with ten tool calls under a `PreToolUse` hook that matches
 * every call, vs the same turn without hooks, in one process (engine dist, the fake provider over
 * HTTP), interleaved, medians. The hook's own cost is one `/bin/sh -c` spawn per call: that spawn
 * is measured alone in the same run and printed beside it, with the per-call overhead the hook
 * added. Goal: the per-call overhead stays within 2x of a bare spawn (the hook adds no cost of its own).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Session, assembleWorkspaceTools } from '../packages/engine/dist/index.js';
import { FakeProvider, fakeConfig } from '../packages/testkit/dist/index.js';
import { median, printFigure, runCount } from './lib/harness.mjs';

const CALLS = 10;
const runs = runCount(8);
const round = (n, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const reply = () => [
  { toolCalls: Array.from({ length: CALLS }, (_, i) => ({ id: `c${i}`, name: 'todoread', arguments: {} })) },
  { text: 'done' },
];

async function turn(withHook) {
  const fake = await FakeProvider.start({ replies: reply(), whenExhausted: 'error' });
  const home = mkdtempSync(join(tmpdir(), 'crystal-bench-hooks-'));
  try {
    const config = fakeConfig(
      fake.baseUri,
      withHook ? { hooks: { PreToolUse: [{ matcher: '*', hooks: [{ command: 'cat >/dev/null' }] }] } } : {},
    );
    const tools = await assembleWorkspaceTools({
      home,
      workspace: home,
      config,
      mode: 'work',
      sessionId: () => 'bench',
      imageInput: () => false,
    });
    const session = await Session.open({
      home,
      workspace: home,
      config,
      env: {},
      tools: tools.tools,
      policy: tools.policy,
      mapException: tools.mapException,
    });
    const start = performance.now();
    const result = await session.send('go');
    const ms = performance.now() - start;
    if (result.stopReason !== 'completed' || result.toolCalls.length !== CALLS)
      throw new Error(`turn did not complete: ${result.stopReason}`);
    return ms;
  } finally {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

function spawnOnce() {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn('/bin/sh', ['-c', 'cat >/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    child.on('error', reject);
    child.stdin.end('{}\n');
    child.on('close', () => resolve(performance.now() - start));
  });
}

const withHook = [];
const without = [];
const spawns = [];
for (let i = 0; i < runs + 2; i++) {
  const order = i % 2 === 0 ? [true, false] : [false, true];
  const pair = {};
  for (const hooked of order) pair[hooked] = await turn(hooked);
  const s = [];
  for (let k = 0; k < CALLS; k++) s.push(await spawnOnce());
  if (i < 2) continue;
  withHook.push(pair.true);
  without.push(pair.false);
  spawns.push(median(s));
}
const subject = median(withHook);
const baseline = median(without);
const spawnMs = median(spawns);
const perCall = (subject - baseline) / CALLS;
printFigure({
  figure: 'turn with 10 tool calls under a PreToolUse hook vs none',
  subject_ms: round(subject),
  baseline_ms: round(baseline),
  ratio: round(subject / baseline, 3),
  runs,
});
printFigure({
  figure: 'PreToolUse hook overhead per call vs one bare /bin/sh spawn',
  per_call_ms: round(perCall),
  spawn_ms: round(spawnMs),
  ratio: round(perCall / spawnMs, 3),
  goal: 2,
  met: perCall / spawnMs <= 2,
  runs,
});
