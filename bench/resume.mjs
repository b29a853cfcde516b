/**
 * Figures (issue 22 item 5): resuming a long session costs what resuming a short one costs.
 *
 * - headless: `crystal run --resume ID --format json hi` (a 10-token reply from the fake provider) on a 2,000-item
 *   session vs the same on a 10-item one (goal: ratio ≤ 1.1);
 * - terminal: `crystal --resume ID` in a 120x40 pty until ready for input (a key echoed), 2,000 vs 10 items, for the
 *   inline and the full-screen view (goal: ratio ≤ 1.05).
 *
 * Both sessions are in the companion format a save writes (head + archive + context files) and hold the same
 * model context (the last 8 messages, as after compaction), so only the archive differs: 2,000 messages of user
 * prompts, assistant Markdown, `read` tool calls and their results (about 1.6 MB). Every run starts from a fresh copy
 * of the session (restored untimed), in a scrubbed environment, the two sides interleaved with medians compared.
 */
import { closeSync, cpSync, fsyncSync, mkdirSync, openSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pty from 'node-pty';
import { SessionFiles } from '../packages/engine/dist/index.js';
import { FakeProvider, fakeConfig, tempDir, tempHome } from '../packages/testkit/dist/index.js';
import { compare, median, printFigure, runCount, scrubbedEnv, timeFigure } from './lib/harness.mjs';

const crystal = fileURLToPath(new URL('../packages/cli/bin/crystal.js', import.meta.url));
const LONG = 2000;
const SHORT = 10;
const CONTEXT = 8;
const FILE_TEXT = Array.from(
  { length: 40 },
  (_, i) => `${String(i + 1).padStart(4)}  export const value${i} = compute(${i}, 'some text');`,
).join('\n');
const ANSWER = [
  '## Step {n}',
  '',
  'I looked at **the module** and changed `parseThing()` so it handles the empty case.',
  '',
  '- kept the public signature',
  '- added a test for the edge case',
  '',
  '```ts',
  'export function parseThing(input: string): Thing | undefined {',
  "  return input === '' ? undefined : build(input);",
  '}',
  '```',
].join('\n');

/** Message `i` of a session: user, assistant with a `read` call, its result, assistant answer (repeating). */
function message(i) {
  const turn = Math.floor(i / 4);
  switch (i % 4) {
    case 0:
      return { role: 'user', content: [{ type: 'text', text: `Please handle case ${turn} of the parser in src/thing.ts.` }] };
    case 1:
      return {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading the file first.' },
          { type: 'tool-call', id: `call_${turn}`, name: 'read', arguments: JSON.stringify({ path: 'src/thing.ts' }) },
        ],
      };
    case 2:
      return {
        role: 'tool',
        content: [{ type: 'tool-result', callId: `call_${turn}`, name: 'read', content: [{ type: 'text', text: FILE_TEXT }] }],
      };
    default:
      return { role: 'assistant', content: [{ type: 'text', text: ANSWER.replace('{n}', String(turn)) }] };
  }
}

async function writeSession(home, workspace, items) {
  const archive = Array.from({ length: items }, (_, i) => message(i));
  const now = new Date().toISOString();
  const id = `20260101-000000-${String(items).padStart(6, '0')}`;
  await SessionFiles.create(home, id).save({
    id,
    workspace,
    createdUtc: now,
    updatedUtc: now,
    provider: 'fake',
    model: 'fake-model',
    // The same model context for both: the tail after a compaction, starting at a user message.
    context: archive.slice(-CONTEXT),
    archive,
    userTurns: Math.ceil(items / 4),
    modelCalls: Math.ceil(items / 2),
    toolCalls: Math.ceil(items / 4),
    usage: { inputTokens: 0, outputTokens: 0 },
    cumulativeUsage: { inputTokens: 0, outputTokens: 0 },
    queued: [],
    images: [],
    imageMarkersTagged: true,
    pendingApprovals: [],
  });
  return id;
}

// ---- the terminal: ready for input after a resume ---------------------------------------------

function spawnPty(argv, { home, cwd }) {
  const env = { ...scrubbedEnv(), LANG: 'C.UTF-8', TERM: 'xterm-256color', HOME: home, CRYSTAL_HOME: home };
  const proc = pty.spawn(argv[0], argv.slice(1), { name: 'xterm-256color', cols: 120, rows: 40, cwd, env });
  const run = { proc, output: '', exited: false, waiters: new Set() };
  proc.onData((data) => {
    run.output = (run.output + data).slice(-16_384);
    for (const wake of [...run.waiters]) wake();
  });
  proc.onExit(() => {
    run.exited = true;
    for (const wake of [...run.waiters]) wake();
  });
  return run;
}

function until(run, test, timeoutMs, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`${what}: timed out.\n${run.output.slice(-2000)}`)), timeoutMs);
    const check = () => {
      if (test(run.output)) finish(undefined, performance.now());
      else if (run.exited) finish(new Error(`${what}: the process exited.\n${run.output.slice(-2000)}`));
    };
    const finish = (error, at) => {
      clearTimeout(timer);
      run.waiters.delete(check);
      if (error) reject(error);
      else resolve(at);
    };
    run.waiters.add(check);
    check();
  });
}

/** Spawn to the first key echoed in the composer, in ms. */
async function readyOnce(id, places, view) {
  const start = performance.now();
  const run = spawnPty([process.execPath, crystal, '--resume', id, `--${view}`], places);
  try {
    await until(run, (o) => o.includes('\x1b[?2026l'), 15_000, `resume ${id}: first frame`);
    run.proc.write('x');
    return (await until(run, (o) => o.includes('\x1b[90m › \x1b[0mx'), 15_000, `resume ${id}: key echo`)) - start;
  } finally {
    if (!run.exited) {
      run.proc.kill();
      await until(run, () => false, 5000, 'exit').catch(() => undefined);
    }
  }
}

const round = (n, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

async function terminalFigure(view, sessions, places, restore) {
  const runs = runCount(20);
  const samples = { long: [], short: [] };
  for (let i = 0; i < runs + 2; i++) {
    for (const side of i % 2 === 0 ? ['short', 'long'] : ['long', 'short']) {
      restore();
      const ms = await readyOnce(sessions[side], places, view);
      if (i >= 2) samples[side].push(ms);
    }
  }
  const long = median(samples.long);
  const short = median(samples.short);
  printFigure({
    figure: `resume (${view} terminal): ready for input, ${LONG} vs ${SHORT} items`,
    subject_ms: round(long),
    baseline_ms: round(short),
    ratio: round(long / short, 3),
    goal: 1.05,
    met: long / short <= 1.05,
    runs,
    environment: 'scrubbed',
  });
}

// ---- main ---------------------------------------------------------------------------------------

const fake = await FakeProvider.start({ replies: [{ textTokens: 10, usage: { input: 10, output: 10 } }] });
const home = tempHome(fakeConfig(fake.baseUri));
const workspace = tempDir('crystal-bench-ws-');
const pristine = tempDir('crystal-bench-sessions-');
try {
  const sessions = {
    long: await writeSession(home.path, workspace, LONG),
    short: await writeSession(home.path, workspace, SHORT),
  };
  const sessionsDir = join(home.path, 'sessions');
  cpSync(sessionsDir, pristine, { recursive: true });
  // The copy is flushed before the run, so the run's own fsync does not write back the restore's pages.
  const restore = () => {
    rmSync(sessionsDir, { recursive: true, force: true });
    mkdirSync(sessionsDir, { recursive: true });
    cpSync(pristine, sessionsDir, { recursive: true });
    for (const name of readdirSync(sessionsDir)) {
      const fd = openSync(join(sessionsDir, name), 'r+');
      fsyncSync(fd);
      closeSync(fd);
    }
  };
  const headless = (id) => ({
    argv: [process.execPath, crystal, 'run', '--resume', id, '--format', 'json', 'hi'],
    env: { CRYSTAL_HOME: home.path },
    cwd: workspace,
    prepare: restore,
    check: (stdout) => {
      const { stopReason } = JSON.parse(stdout);
      if (stopReason !== 'completed') throw new Error(`crystal run --resume ${id} did not complete: ${stdout}`);
    },
  });
  const result = await compare({
    subject: headless(sessions.long),
    baseline: headless(sessions.short),
    runs: runCount(20),
    scrubbed: true,
  });
  printFigure({
    ...timeFigure(`resume (headless): crystal run --resume, ${LONG} vs ${SHORT} items`, result, 1.1),
    environment: 'scrubbed',
  });
  for (const view of ['inline', 'fullscreen']) await terminalFigure(view, sessions, { home: home.path, cwd: workspace }, restore);
} finally {
  await fake.close();
  home.dispose();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(pristine, { recursive: true, force: true });
}
