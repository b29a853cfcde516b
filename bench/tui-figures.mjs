/**
 * Terminal UI figures (issue 8), in one run, the real binary in a 120x40 pseudo-terminal against
 * the fake provider:
 *
 * - time to the first painted frame (goal under 150 ms) and to ready for input (a key echoed,
 *   goal under 300 ms), from spawn; a bare `node` printing one frame is the floor of the run;
 * - CPU of the crystal process per 1,000 tokens while a 20,000-token reply streams at about
 *   500 tokens/s (`textTokens: 20000, delayMs: 2`; goal under 150 ms), under a 10-item and under
 *   a 5,000-item resumed transcript (goal: ratio under 1.2), each the median of three runs;
 * - idle CPU over 10 s (goal zero: no timer while idle) and idle RSS (goal under 100 MB);
 * - the engine floor: `crystal run` streaming the same way without a terminal UI, so the TUI's
 *   own share of the CPU figure is visible; and the machine's floor: a bare `node:http` client
 *   reading the same stream and JSON-parsing each event, no Crystal code at all, the median of
 *   three runs (the CPU figures carry their ratio to both, measured in the same run);
 * - issue 22's goal, the terminal at most 1.1x the node:http floor, as a figure of its own: each
 *   terminal stream has that client reading a stream of its own beside it, at the same time and
 *   pace, and the figure is the ratio of the two medians with a paired bootstrap interval
 *   (`ratio_ci95`, `met_ci95`), since this VM's cost of the same work drifts by a third within
 *   minutes;
 * - in-process, the CPU of one frame while text streams at 10 vs 5,000 transcript items (the
 *   renderer's own figure, the one an Ink spike would have been compared on): process CPU
 *   time, not wall time (on a shared machine wall time measures the neighbours), five trials
 *   of 20,000 frames each, interleaved after a warm-up of both sizes, the medians compared.
 *
 * Every figure is measured for both views side by side (TUIX-8): `inline` (the default: finished
 * entries in the terminal's scroll-back, only the live region repainted) and `fullscreen` (the
 * alternate-screen view), the figure name saying which.
 *
 * Each figure is one JSON line with `met`. Set BENCH_RUNS to change the startup runs (default 10);
 * `--startup` prints the start-up figures alone, `--stream-cpu` the streaming CPU figures alone.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pty from 'node-pty';
import { serialiseSession } from '../packages/engine/dist/index.js';
import { FakeProvider, fakeConfig, tempDir, tempHome } from '../packages/testkit/dist/index.js';
import { AssistantEntry, TerminalApp, UserEntry, loadMarkdown } from '../packages/tui/dist/index.js';
import { printFigure, ratioInterval, runCount } from './lib/harness.mjs';

const crystal = fileURLToPath(new URL('../packages/cli/bin/crystal.js', import.meta.url));
const COLS = 120;
const ROWS = 40;
const TOKENS = 20_000;
const FRAME_END = '\x1b[?2026l';
const TICK_MS = 10; // CLK_TCK = 100 on Linux
const VIEWS = ['inline', 'fullscreen'];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (n, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** utime + stime of a process, in ms. */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

function spawnPty(argv, { home, cwd }) {
  const proc = pty.spawn(argv[0], argv.slice(1), {
    name: 'xterm-256color',
    cols: COLS,
    rows: ROWS,
    cwd,
    env: { PATH: process.env.PATH, LANG: process.env.LANG ?? 'C.UTF-8', TERM: 'xterm-256color', HOME: home, CRYSTAL_HOME: home },
  });
  const run = { proc, output: '', bytes: 0, exited: false, waiters: new Set() };
  proc.onData((data) => {
    run.bytes += data.length;
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
    const check = () => {
      if (test(run.output)) {
        done();
        resolve(performance.now());
      } else if (run.exited) {
        done();
        reject(new Error(`${what}: the process exited.\n${run.output.slice(-2000)}`));
      }
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${what}: timed out.\n${run.output.slice(-2000)}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      run.waiters.delete(check);
    };
    run.waiters.add(check);
    check();
  });
}

async function stop(run) {
  if (run.exited) return;
  run.proc.kill();
  await until(run, () => false, 5000, 'exit').catch(() => undefined);
}

// ---- startup --------------------------------------------------------------------------------

async function startupOnce(argv, env, { settle = false } = {}) {
  const start = performance.now();
  const run = spawnPty(argv, env);
  const first = (await until(run, (o) => o.includes(FRAME_END), 10_000, 'first frame')) - start;
  run.proc.write('x');
  const ready = (await until(run, (o) => o.includes('\x1b[90m › \x1b[0mx'), 10_000, 'key echo')) - start;
  // A warm-up run lives until its session is open, as a user's first session does: the bin keeps
  // the code cache only for a process that got that far (packages/core/src/warm-start.ts).
  if (settle) await until(run, (o) => o.includes('CTX 0%'), 10_000, 'session open');
  await stop(run);
  return { first, ready };
}

async function floorOnce(env) {
  const start = performance.now();
  const run = spawnPty([process.execPath, '-e', `process.stdout.write('\\x1b[?1049h\\x1b[?2026hx${FRAME_END}')`], env);
  const first = (await until(run, (o) => o.includes(FRAME_END), 10_000, 'floor')) - start;
  await stop(run);
  return first;
}

async function startupFigures(home, cwd, view) {
  const runs = runCount(10);
  const env = { home, cwd };
  const first = [];
  const ready = [];
  const floor = [];
  for (let i = 0; i < runs + 2; i++) {
    const sample = await startupOnce([process.execPath, crystal, `--${view}`], env, { settle: i < 2 });
    const bare = await floorOnce(env);
    if (i < 2) continue;
    first.push(sample.first);
    ready.push(sample.ready);
    floor.push(bare);
  }
  const floorMs = median(floor);
  const firstMs = median(first);
  const readyMs = median(ready);
  printFigure({
    figure: `tui (${view}): first painted frame from spawn (120x40 pty)`,
    median_ms: round(firstMs),
    min_ms: round(Math.min(...first)),
    max_ms: round(Math.max(...first)),
    node_floor_ms: round(floorMs),
    ratio_to_floor: round(firstMs / floorMs, 2),
    goal_ms: 150,
    met: firstMs < 150,
    runs,
  });
  printFigure({
    figure: `tui (${view}): ready for input (first key echoed) from spawn`,
    median_ms: round(readyMs),
    min_ms: round(Math.min(...ready)),
    max_ms: round(Math.max(...ready)),
    goal_ms: 300,
    met: readyMs < 300,
    // Issue 22's goal: ready within 1.5x a bare Node process in the same terminal.
    node_floor_ms: round(floorMs),
    ratio_to_floor: round(readyMs / floorMs, 2),
    goal_ratio: 1.5,
    met_ratio: readyMs / floorMs <= 1.5,
    runs,
  });
}

// ---- streaming under a resumed transcript ----------------------------------------------------

const ASSISTANT = [
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

/** A saved session whose archive holds `items` messages (user and assistant alternating). */
function writeSession(home, workspace, items) {
  const archive = [];
  for (let i = 0; i < items; i++) {
    archive.push(
      i % 2 === 0
        ? { role: 'user', content: [{ type: 'text', text: `Please handle case ${i / 2} of the parser.` }] }
        : { role: 'assistant', content: [{ type: 'text', text: ASSISTANT.replace('{n}', String((i - 1) / 2)) }] },
    );
  }
  const now = new Date().toISOString();
  const id = `20260101-000000-${String(items).padStart(6, '0')}`;
  const state = {
    id,
    workspace,
    createdUtc: now,
    updatedUtc: now,
    provider: 'fake',
    model: 'fake-model',
    // The model context is a short tail, as after compaction: the transcript shown is the archive.
    context: archive.slice(-4),
    archive,
    userTurns: items / 2,
    modelCalls: items / 2,
    toolCalls: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    cumulativeUsage: { inputTokens: 0, outputTokens: 0 },
    queued: [],
    images: [],
    imageMarkersTagged: true,
    pendingApprovals: [],
  };
  mkdirSync(join(home, 'sessions'), { recursive: true });
  writeFileSync(join(home, 'sessions', `${id}.json`), serialiseSession(state));
  return id;
}

/**
 * One terminal stream, and beside it, at the same time, the node:http floor reading a stream of
 * its own from the same fake provider at the same pace (`pairedFloor`): CPU per 1,000 tokens of
 * each. The two run together, not one after the other, because this VM's cost of the same work
 * moves by a third within a minute (the floor read 51 and 73 ms per 1,000 tokens in streams a
 * minute apart); side by side, each pair meets the same machine. Together they use about a
 * sixth of one of the two cores.
 */
async function streamUnder(items, fake, home, view) {
  const workspace = tempDir('crystal-bench-ws-');
  const id = writeSession(home, workspace, items);
  fake.enqueue({ textTokens: TOKENS, delayMs: 2, usage: { input: 10, output: TOKENS } });
  const before = fake.requests.length;
  const run = spawnPty([process.execPath, crystal, '--resume', id, `--${view}`], { home, cwd: workspace });
  await until(run, (o) => o.includes('parseThing') && o.includes(FRAME_END), 15_000, 'resumed frame');
  run.proc.write('go\r');
  while (fake.requests.length === before) await sleep(1);
  const cpu0 = cpuMs(run.proc.pid);
  const t0 = performance.now();
  const floor = pairedFloor(fake, TOKENS);
  // Its failure is read at the `await` below; a terminal stream that fails first reports its own error.
  floor.catch(() => undefined);
  const t1 = await until(run, (o) => o.includes('OUT 20k'), 120_000, 'stream end');
  const cpu1 = cpuMs(run.proc.pid);
  const rss = rssMb(run.proc.pid);
  await stop(run);
  const seconds = (t1 - t0) / 1000;
  return { cpuPer1000: (cpu1 - cpu0) / (TOKENS / 1000), tokensPerSecond: TOKENS / seconds, seconds, rss, floor: await floor };
}

// ---- idle ------------------------------------------------------------------------------------

/**
 * A session left alone: CPU over [1 s, 11 s] after its first frame, and over [13 s, 23 s] (after
 * V8's one-off memory-reducer GC, which runs about 8 s after start-up work ends), plus the bytes
 * it wrote meanwhile (0: nothing repaints) and its RSS. Runs beside the other figures; CPU time is
 * per process.
 */
function idleProbe(home, view) {
  const run = spawnPty([process.execPath, crystal, `--${view}`], { home, cwd: tempDir('crystal-bench-ws-') });
  return (async () => {
    await until(run, (o) => o.includes(FRAME_END), 10_000, 'idle first frame');
    const window = async (from, to) => {
      await sleep(from);
      const cpu0 = cpuMs(run.proc.pid);
      const bytes0 = run.bytes;
      await sleep(to - from);
      return { cpuMs: cpuMs(run.proc.pid) - cpu0, bytes: run.bytes - bytes0 };
    };
    const first = await window(1000, 11_000);
    const settled = await window(2000, 12_000);
    const rss = rssMb(run.proc.pid);
    await stop(run);
    return { first, settled, rss };
  })();
}

// ---- the engine floor: crystal run, no terminal UI --------------------------------------------

/** CPU of one `crystal run` from the request to its exit, in ms. */
async function runCpu(fake, home, tokens) {
  const { spawn } = await import('node:child_process');
  fake.enqueue({ textTokens: tokens, delayMs: 2, usage: { input: 10, output: tokens } });
  const before = fake.requests.length;
  const child = spawn(process.execPath, [crystal, 'run', '--format', 'json', 'go'], {
    cwd: tempDir('crystal-bench-ws-'),
    env: { PATH: process.env.PATH, HOME: home, CRYSTAL_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.resume();
  child.stderr.resume();
  const closed = new Promise((r) => child.on('close', r));
  while (fake.requests.length === before) await sleep(1);
  const cpu0 = cpuMs(child.pid);
  let last = cpu0;
  const poll = setInterval(() => {
    try {
      last = cpuMs(child.pid);
    } catch {}
  }, 5);
  await closed;
  clearInterval(poll);
  return last - cpu0;
}

/**
 * The engine's own cost per 1,000 streamed tokens, without a terminal UI: `crystal run` with
 * 5,000 tokens minus a 10-token run (the turn's fixed costs: save, exit), per 1,000 tokens.
 */
async function runFloor(fake, home) {
  const fixed = await runCpu(fake, home, 10);
  const long = await runCpu(fake, home, 5000);
  return (long - fixed) / 4.99;
}

/** A bare node:http client: reads the stream, JSON-parses each event, keeps the text, prints its length at the end. */
const FLOOR_CLIENT = `
const http = require('node:http');
const req = http.request(process.argv[1] + 'chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' } }, (res) => {
  let buf = ''; let text = '';
  res.setEncoding('utf8');
  res.on('data', (d) => {
    buf += d;
    for (let i = buf.indexOf('\\n\\n'); i !== -1; i = buf.indexOf('\\n\\n')) {
      const data = buf.slice(0, i).replace(/^data: /, '');
      buf = buf.slice(i + 2);
      if (data !== '[DONE]') text += JSON.parse(data).choices?.[0]?.delta?.content ?? '';
    }
  });
  res.on('end', () => process.stdout.write(String(text.length)));
});
req.end(JSON.stringify({ model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'go' }] }));
`;

/** The machine's floor: CPU of a bare node:http client reading the stream, per 1,000 tokens. */
async function nodeFloor(fake) {
  const { spawn } = await import('node:child_process');
  const once = async (tokens) => {
    fake.enqueue({ textTokens: tokens, delayMs: 2, usage: { input: 10, output: tokens } });
    const before = fake.requests.length;
    const child = spawn(process.execPath, ['-e', FLOOR_CLIENT, fake.baseUri], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const closed = new Promise((r) => child.on('close', r));
    while (fake.requests.length === before) await sleep(1);
    const cpu0 = cpuMs(child.pid);
    let last = cpu0;
    const poll = setInterval(() => {
      try {
        last = cpuMs(child.pid);
      } catch {}
    }, 5);
    await closed;
    clearInterval(poll);
    if (out !== String(tokens * 4)) throw new Error(`node floor: read ${out} characters, expected ${tokens * 4}`);
    return last - cpu0;
  };
  // The median of three pairs: one pair read anywhere from 90 to 186 ms on this VM.
  const pairs = [];
  for (let i = 0; i < 3; i++) {
    const fixed = await once(10);
    const long = await once(5000);
    pairs.push((long - fixed) / 4.99);
  }
  return pairs.sort((a, b) => a - b)[1];
}

/**
 * The node:http floor beside a terminal stream (issue 22): the same client reading a reply of
 * `tokens` tokens at the same pace, its CPU from its request to the end of its stream (it prints
 * when the stream ends, before it exits), per 1,000 tokens. The terminal's figure is taken the
 * same way (from the request to the last token painted): neither side carries start-up or exit.
 */
async function pairedFloor(fake, tokens) {
  const { spawn } = await import('node:child_process');
  fake.enqueue({ textTokens: tokens, delayMs: 2, usage: { input: 10, output: tokens } });
  const before = fake.requests.length;
  const child = spawn(process.execPath, ['-e', FLOOR_CLIENT, fake.baseUri], { stdio: ['ignore', 'pipe', 'inherit'] });
  const closed = new Promise((r) => child.on('close', r));
  while (fake.requests.length === before) await sleep(1);
  const cpu0 = cpuMs(child.pid);
  // Read at its one write (the length, at the stream's end); a client that dies first reads as ''.
  const { out, cpu1 } = await Promise.race([
    new Promise((resolve) => child.stdout.once('data', (d) => resolve({ out: String(d), cpu1: cpuMs(child.pid) }))),
    closed.then(() => ({ out: '', cpu1: 0 })),
  ]);
  await closed;
  if (out !== String(tokens * 4)) throw new Error(`node floor: read ${out} characters, expected ${tokens * 4}`);
  return (cpu1 - cpu0) / (tokens / 1000);
}

// ---- in-process frame cost -------------------------------------------------------------------

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function frameCost(items, view) {
  await loadMarkdown();
  let written = 0;
  const app = new TerminalApp({
    host: { write: (d) => (written += d.length), size: () => ({ cols: COLS, rows: ROWS }) },
    intents: {},
    view,
    status: {
      mode: 'work',
      approval: 'default',
      model: 'fake/fake-model',
      workspace: '/w',
      inputTokens: 0,
      outputTokens: 0,
      queued: 0,
    },
  });
  for (let i = 0; i < items; i++) {
    app.transcript.push(
      i % 2 === 0 ? new UserEntry(`Please handle case ${i / 2}.`) : AssistantEntry.of(ASSISTANT.replace('{n}', String(i))),
    );
  }
  app.start();
  const live = new AssistantEntry();
  app.transcript.push(live);
  app.render();
  // 20,000 frames (about 0.15 s a trial): 2,500 (about 20 ms) read anywhere from 0.5x to 4x between trials.
  const frames = 20_000;
  const start = performance.now();
  const cpu0 = cpuNow();
  for (let f = 0; f < frames; f++) {
    for (let t = 0; t < 8; t++) live.append('tok ');
    app.render();
  }
  const cpuPerFrame = (cpuNow() - cpu0) / frames;
  const perFrame = (performance.now() - start) / frames;
  app.stop();
  return { cpuPerFrameMs: cpuPerFrame, perFrameMs: perFrame, bytes: written };
}

// ---- run ------------------------------------------------------------------------------------

const fake = await FakeProvider.start({ replies: [], whenExhausted: 'error' });
const home = tempHome(fakeConfig(fake.baseUri));
try {
  // `--startup`: the first-paint and ready figures of both views only (a quick check of start-up work).
  const startupOnly = process.argv.includes('--startup');
  // `--stream-cpu`: the streaming CPU figures alone (engine floor, node:http floor, both views).
  const streamCpuOnly = process.argv.includes('--stream-cpu');
  const idle = startupOnly || streamCpuOnly ? {} : Object.fromEntries(VIEWS.map((view) => [view, idleProbe(home.path, view)]));
  if (!streamCpuOnly) for (const view of VIEWS) await startupFigures(home.path, tempDir('crystal-bench-ws-'), view);
  if (startupOnly) process.exit(0);
  const floor = await runFloor(fake, home.path);
  const machine = await nodeFloor(fake);
  printFigure({
    figure: 'crystal run: CPU per 1,000 streamed tokens vs a bare node:http client on the same stream',
    cpu_ms_per_1000_tokens: round(floor),
    node_floor_ms: round(machine),
    ratio: round(floor / machine, 2),
  });
  // Each of the four streams three times, in rounds (every view and size once per round, so drift
  // on the machine falls on all of them); each figure is the median of its three runs. One run
  // of a 40-second stream varied by up to 30% from the next on this VM.
  const STREAM_RUNS = 3;
  const samples = new Map();
  // The order turns by one each round, so no figure always runs first or after the same one.
  const order = VIEWS.flatMap((view) => [10, 5000].map((items) => ({ view, items })));
  for (let pass = 0; pass < STREAM_RUNS; pass++) {
    for (let k = 0; k < order.length; k++) {
      const { view, items } = order[(k + pass) % order.length];
      const key = `${view} ${items}`;
      const run = await streamUnder(items, fake, home.path, view);
      samples.set(key, [...(samples.get(key) ?? []), run]);
    }
  }
  const medianRun = (view, items) => {
    const runs = samples.get(`${view} ${items}`);
    const pick = (f) => median(runs.map(f));
    return {
      cpuPer1000: pick((r) => r.cpuPer1000),
      tokensPerSecond: pick((r) => r.tokensPerSecond),
      seconds: pick((r) => r.seconds),
      rss: pick((r) => r.rss),
      all: runs.map((r) => round(r.cpuPer1000)),
      floors: runs.map((r) => r.floor),
      runs: runs.map((r) => r.cpuPer1000),
    };
  };
  for (const view of VIEWS) {
    const small = medianRun(view, 10);
    const large = medianRun(view, 5000);
    for (const [label, r] of [
      ['10-item', small],
      ['5,000-item', large],
    ]) {
      const toFloor = r.cpuPer1000 / machine;
      printFigure({
        figure: `tui (${view}): CPU per 1,000 streamed tokens under a ${label} transcript`,
        cpu_ms_per_1000_tokens: round(r.cpuPer1000),
        goal_ms: 150,
        met: r.cpuPer1000 < 150,
        engine_floor_ms: round(floor),
        tui_share_ms: round(r.cpuPer1000 - floor),
        ratio_to_engine_floor: round(r.cpuPer1000 / floor, 2),
        node_floor_ms: round(machine),
        ratio_to_node_floor: round(toFloor, 2),
        tokens_per_second: round(r.tokensPerSecond),
        stream_seconds: round(r.seconds),
        rss_mb_after: round(r.rss),
        runs_cpu_ms_per_1000_tokens: r.all,
      });
      // Issue 22's goal, a figure of its own: streaming CPU in the terminal at most 1.1x the node:http
      // floor, each terminal stream paired with the floor streaming beside it (the floor measured
      // once, apart, read 62 and 106 ms per 1,000 tokens in runs an hour apart on this VM, and so
      // judged the terminal by the hour it ran in). The ratio of the medians, with a paired
      // bootstrap interval over the runs (three: a wide interval).
      const floorMedian = median(r.floors);
      const paired = r.cpuPer1000 / floorMedian;
      const [low, high] = ratioInterval(r.runs, r.floors);
      printFigure({
        figure: `tui (${view}): CPU per 1,000 streamed tokens vs the node:http floor, ${label} transcript`,
        subject_cpu_ms: round(r.cpuPer1000),
        baseline_cpu_ms: round(floorMedian),
        ratio: round(paired, 2),
        ratio_ci95: [round(low, 2), round(high, 2)],
        goal: 1.1,
        met: paired <= 1.1,
        met_ci95: high <= 1.1,
        runs_floor_cpu_ms_per_1000_tokens: r.floors.map((f) => round(f)),
      });
    }
    const ratio = large.cpuPer1000 / small.cpuPer1000;
    printFigure({
      figure: `tui (${view}): streaming CPU, 5,000-item vs 10-item transcript`,
      ratio: round(ratio, 3),
      goal: 1.2,
      met: ratio < 1.2,
    });
  }
  if (!streamCpuOnly) {
    for (const view of VIEWS) {
      const idleResult = await idle[view];
      printFigure({
        figure: `tui (${view}): idle CPU over 10 s (from 13 s after the first frame)`,
        cpu_ms: idleResult.settled.cpuMs,
        bytes_written: idleResult.settled.bytes,
        first_window_cpu_ms: idleResult.first.cpuMs,
        first_window_bytes: idleResult.first.bytes,
        resolution_ms: TICK_MS,
        goal_ms: 0,
        met: idleResult.settled.cpuMs === 0 && idleResult.settled.bytes === 0,
      });
      printFigure({ figure: `tui (${view}): idle RSS`, rss_mb: round(idleResult.rss), goal_mb: 100, met: idleResult.rss < 100 });
    }
    for (const view of VIEWS) {
      // Warm-up of both sizes: every measured run gets the same optimised code.
      await frameCost(10, view);
      await frameCost(5000, view);
      const f10 = [];
      const f5000 = [];
      for (let trial = 0; trial < 5; trial++) {
        f10.push(await frameCost(10, view));
        f5000.push(await frameCost(5000, view));
      }
      const cpu10 = median(f10.map((f) => f.cpuPerFrameMs));
      const cpu5000 = median(f5000.map((f) => f.cpuPerFrameMs));
      const frameRatio = cpu5000 / cpu10;
      printFigure({
        figure: `tui (${view}): in-process frame CPU while streaming, 5,000 vs 10 transcript items`,
        frame_cpu_ms_10: round(cpu10, 3),
        frame_cpu_ms_5000: round(cpu5000, 3),
        ratio: round(frameRatio, 3),
        wall_ms_10: round(median(f10.map((f) => f.perFrameMs)), 3),
        wall_ms_5000: round(median(f5000.map((f) => f.perFrameMs)), 3),
        trials: 5,
        goal: 1.2,
        met: frameRatio < 1.2,
      });
    }
  }
} finally {
  await fake.close();
  home.dispose();
}
