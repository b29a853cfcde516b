/**
 * MCP figures (issue 17), in one run:
 *
 * - interactive start-up with three configured stdio MCP servers (server-everything) against the
 *   same start-up with none, both the real binary in a 120x40 pseudo-terminal: time to the first
 *   painted frame (goal: ratio ≤ 1.1; the servers connect after) and to ready for input (a key
 *   echoed), and, with servers, the time until all three are ready (seen through `/mcp`);
 * - per-call overhead of the server's `echo` tool through our whole layer (the engine's catalog
 *   tool over `@crystal/mcp`) against the bare SDK client on the same kind of server, both over
 *   stdio, calls interleaved in batches;
 * - the same call over Streamable HTTP (server-everything behind the SDK's server transport on
 *   127.0.0.1) with the fetch the host gives `@crystal/mcp` (the providers' node:http transport,
 *   which carries the proxy variables and caFile, issue 22 item 2) against the SDK's default,
 *   global `fetch` (goal: ratio ≤ 1.0, as for the providers' transport).
 *
 * Each figure is one JSON line with `met`. BENCH_RUNS sets the start-up runs (default 8).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pty from 'node-pty';
import { createServer } from 'node:http';
import { startMcpHost } from '../packages/engine/dist/index.js';
import { McpManager } from '../packages/mcp/dist/index.js';
import { createTransport, transportFetch } from '../packages/providers/dist/index.js';
import { FakeProvider, fakeConfig, tempDir, tempHome } from '../packages/testkit/dist/index.js';
import { printFigure, runCount } from './lib/harness.mjs';

const require = createRequire(fileURLToPath(new URL('../packages/mcp/package.json', import.meta.url)));
const everythingBin = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const { Client } = await import(require.resolve('@modelcontextprotocol/sdk/client/index.js'));
const { StdioClientTransport } = await import(require.resolve('@modelcontextprotocol/sdk/client/stdio.js'));
const { StreamableHTTPServerTransport } = await import(require.resolve('@modelcontextprotocol/sdk/server/streamableHttp.js'));
const everythingServer = await import(join(dirname(everythingBin), 'server', 'index.js'));

const crystal = fileURLToPath(new URL('../packages/cli/bin/crystal.js', import.meta.url));
const FRAME_END = '\x1b[?2026l';
const ECHO_PROMPT = '\x1b[90m › \x1b[0mx';
const round = (n, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const server = { command: process.execPath, args: [everythingBin, 'stdio'] };

function spawnPty(home, cwd) {
  const proc = pty.spawn(process.execPath, [crystal], {
    name: 'xterm-256color',
    cols: 120,
    rows: 40,
    cwd,
    env: { PATH: process.env.PATH, LANG: process.env.LANG ?? 'C.UTF-8', TERM: 'xterm-256color', HOME: home, CRYSTAL_HOME: home },
  });
  const run = { proc, output: '', exited: false, waiters: new Set() };
  proc.onData((data) => {
    run.output = (run.output + data).slice(-65_536);
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

/** Waits (up to 10 s) until no server-everything of an earlier sample is still running. */
async function quiet() {
  for (let i = 0; i < 200; i++) {
    const alive = readdirSync('/proc').some((pid) => {
      if (!/^\d+$/.test(pid)) return false;
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(everythingBin);
      } catch {
        return false;
      }
    });
    if (!alive) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One start-up: first frame, key echo, and (with servers) the time `/mcp` first shows all three ready. */
async function startupOnce(home, cwd, servers) {
  await quiet();
  const start = performance.now();
  const run = spawnPty(home, cwd);
  const first = (await until(run, (o) => o.includes(FRAME_END), 15_000, 'first frame')) - start;
  run.proc.write('x');
  const ready = (await until(run, (o) => o.includes(ECHO_PROMPT), 15_000, 'key echo')) - start;
  let serversReady;
  if (servers > 0) {
    run.proc.write('\x7f');
    for (let i = 0; i < 200 && serversReady === undefined; i++) {
      run.output = '';
      run.proc.write('/mcp');
      await until(run, (o) => o.includes('MCP servers: state'), 10_000, '/mcp picker');
      run.output = '';
      run.proc.write('\r');
      await until(run, (o) => /s\d {2}(ready|connecting|failed)/.test(o), 10_000, '/mcp');
      await new Promise((r) => setTimeout(r, 50));
      if ((run.output.match(/s\d {2}ready/g) ?? []).length >= servers) serversReady = performance.now() - start;
    }
  }
  await stop(run);
  return { first, ready, serversReady };
}

async function startupFigures() {
  const runs = runCount(8);
  const cwd = tempDir('crystal-bench-mcp-ws-');
  const fake = await FakeProvider.start({ replies: [{ text: 'ok' }] });
  const none = tempHome(fakeConfig(fake.baseUri));
  const three = tempHome(fakeConfig(fake.baseUri, { mcpServers: { s1: server, s2: server, s3: server } }));
  const samples = { none: { first: [], ready: [] }, three: { first: [], ready: [], servers: [] } };
  for (let i = 0; i < runs + 2; i++) {
    // Order flipped every pair, so neither side always follows the other.
    let a;
    let b;
    if (i % 2 === 0) {
      a = await startupOnce(none.path, cwd, 0);
      b = await startupOnce(three.path, cwd, 3);
    } else {
      b = await startupOnce(three.path, cwd, 3);
      a = await startupOnce(none.path, cwd, 0);
    }
    if (i < 2) continue;
    samples.none.first.push(a.first);
    samples.none.ready.push(a.ready);
    samples.three.first.push(b.first);
    samples.three.ready.push(b.ready);
    if (b.serversReady !== undefined) samples.three.servers.push(b.serversReady);
  }
  none.dispose();
  three.dispose();
  await fake.close();
  const firstRatio = median(samples.three.first) / median(samples.none.first);
  const readyRatio = median(samples.three.ready) / median(samples.none.ready);
  printFigure({
    figure: 'mcp: first painted frame, 3 stdio servers vs none',
    subject_ms: round(median(samples.three.first)),
    baseline_ms: round(median(samples.none.first)),
    ratio: round(firstRatio, 3),
    goal: 1.1,
    met: firstRatio <= 1.1,
    runs,
  });
  printFigure({
    figure: 'mcp: ready for input (key echoed), 3 stdio servers vs none',
    subject_ms: round(median(samples.three.ready)),
    baseline_ms: round(median(samples.none.ready)),
    ratio: round(readyRatio, 3),
    goal: 1.1,
    met: readyRatio <= 1.1,
    runs,
  });
  printFigure({
    figure: 'mcp: all 3 servers ready (seen through /mcp) vs first frame without servers',
    subject_ms: round(median(samples.three.servers)),
    baseline_ms: round(median(samples.none.first)),
    ratio: round(median(samples.three.servers) / median(samples.none.first), 3),
    goal: null,
    met: samples.three.servers.length === runs,
    runs: samples.three.servers.length,
  });
}

const PER_BATCH = 50;
const never = new AbortController().signal;

/**
 * Per-call milliseconds of `subject(i)` and `baseline(i)`, in batches of PER_BATCH calls each,
 * interleaved batch by batch with the order flipped every batch; the first two pairs warm up.
 */
async function interleaved(subject, baseline) {
  const batches = runCount(20);
  const time = async (call) => {
    const start = performance.now();
    for (let i = 0; i < PER_BATCH; i++) await call(i);
    return (performance.now() - start) / PER_BATCH;
  };
  const samples = { subject: [], baseline: [], runs: batches * PER_BATCH };
  for (let b = 0; b < batches + 2; b++) {
    const [x, y] =
      b % 2 === 0 ? [await time(subject), await time(baseline)] : [...[await time(baseline), await time(subject)].reverse()];
    if (b < 2) continue;
    samples.subject.push(x);
    samples.baseline.push(y);
  }
  return samples;
}

/** One call figure from `interleaved` samples: medians, the overhead per call, the ratio against `goal`. */
function printCallFigure(figure, samples, goal) {
  const [subject, baseline] = [median(samples.subject), median(samples.baseline)];
  printFigure({
    figure,
    subject_ms: round(subject, 3),
    baseline_ms: round(baseline, 3),
    overhead_ms: round(subject - baseline, 3),
    ratio: round(subject / baseline, 3),
    goal,
    met: subject / baseline <= goal,
    runs: samples.runs,
  });
}

async function callFigures() {
  const host = startMcpHost({
    home: tempDir('crystal-bench-mcp-home-'),
    workspace: tempDir('crystal-bench-mcp-ws-'),
    config: { mcpServers: { bench: server } },
    imageInput: () => false,
  });
  await host.manager.whenSettled();
  const tool = host.tools().find((t) => t.name === 'mcp__bench__echo');
  const bare = new Client({ name: 'bare', version: '1' });
  await bare.connect(new StdioClientTransport({ ...server, stderr: 'pipe' }));
  const samples = await interleaved(
    (i) => tool.execute({ message: `m${i}` }, { signal: never, callId: `c${i}` }),
    (i) => bare.callTool({ name: 'echo', arguments: { message: `m${i}` } }),
  );
  await bare.close();
  await host.close();
  printCallFigure('mcp: echo call through the catalog tool and @crystal/mcp vs the bare SDK client (stdio)', samples, 1.1);
}

/** server-everything over Streamable HTTP on 127.0.0.1 (`/mcp`, one MCP session per client); resolves `{ url, close }`. */
async function everythingOverHttp() {
  const sessions = new Map();
  const servers = [];
  const http = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      const { server } = everythingServer.createServer();
      servers.push(server);
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (session) => sessions.set(session, transport),
      });
      await server.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    close: async () => {
      for (const server of servers) await server.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

async function httpCallFigures() {
  const remote = await everythingOverHttp();
  const spec = { name: 'bench', source: 'home', file: 'bench', transport: 'http', url: remote.url, headers: {}, trust: false };
  const managerWith = async (fetch) => {
    const manager = new McpManager({ servers: [spec], workspace: tempDir('crystal-bench-mcp-ws-'), ...(fetch ? { fetch } : {}) });
    manager.start();
    await manager.whenSettled();
    const echo = manager.tools().find((t) => t.name === 'mcp__bench__echo');
    if (!echo) throw new Error(`the HTTP server did not come up: ${JSON.stringify(manager.status())}`);
    return { manager, echo };
  };
  const ours = await managerWith(transportFetch(createTransport({ env: {} })));
  const global = await managerWith(undefined);
  const samples = await interleaved(
    (i) => ours.echo.call({ message: `m${i}` }, never),
    (i) => global.echo.call({ message: `m${i}` }, never),
  );
  await ours.manager.close();
  await global.manager.close();
  await remote.close();
  printCallFigure('mcp: echo call over Streamable HTTP, the host fetch (node:http transport) vs global fetch', samples, 1);
}

await startupFigures();
await callFigures();
await httpCallFigures();
