/**
 * Issue 22 item 1: the lean transport (node:http + keep-alive agent, packages/providers/src/transport) against global
 * fetch behind the same WireClient, each a fresh node process in a scrubbed environment:
 * - one bare GET (whole process: start, load, request, body);
 * - the 2,000-token streamed request and parse through the OpenAI Chat wire (whole process);
 * - streaming CPU per 1,000 tokens (process CPU from the request to the last event, measured in the process).
 * Goals: each ratio (transport / fetch) ≤ 1.0, i.e. the transport is never the slower one. Also the same 2,000-token
 * request through a local forward proxy (HTTP_PROXY) against direct: goal ≤ 1.2.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeProvider, stopFakeProvider } from './lib/fake-provider.mjs';
import { compare, median, printFigure, runCount, timeFigure } from './lib/harness.mjs';

const TOKENS = 2000;
const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));

/** The test forward proxy of packages/testkit as a process; resolves `{ child, url }`. */
function startProxy() {
  const code = `import(${JSON.stringify(root('packages/testkit/dist/proxy.js'))}).then(async (m) => { const p = await m.startTestProxy(); process.stdout.write(p.url + '\\n'); })`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').once('data', (d) => resolve({ child, url: d.trim() }));
    child.on('exit', (code) => reject(new Error(`proxy exited ${code}`)));
  });
}

const client = (mode, kind, url, check) => ({
  argv: [process.execPath, root('bench/lib/transport-client.mjs'), mode, kind, url],
  check,
});
const cpuOf = (samples) => median(samples.map((s) => JSON.parse(s.stdout).cpuMs));

const dir = mkdtempSync(join(tmpdir(), 'crystal-bench-transport-'));
const scriptFile = join(dir, 'script.json');
writeFileSync(scriptFile, JSON.stringify({ replies: [{ textTokens: TOKENS, usage: { input: 10, output: TOKENS } }] }));
let fake;
let proxy;
try {
  fake = await startFakeProvider(scriptFile);
  const runs = runCount(8);
  const get = await compare({
    subject: client('transport', 'get', fake.url),
    baseline: client('fetch', 'get', fake.url),
    runs,
    scrubbed: true,
  });
  printFigure(timeFigure('transport: one bare GET (process), node:http transport vs fetch', get, 1.0));

  const complete = (stdout) => {
    if (JSON.parse(stdout).tokens !== TOKENS) throw new Error(`stream incomplete: ${stdout}`);
  };
  const stream = await compare({
    subject: client('transport', 'stream', fake.baseUri, complete),
    baseline: client('fetch', 'stream', fake.baseUri, complete),
    runs,
    scrubbed: true,
  });
  printFigure(timeFigure(`transport: ${TOKENS}-token request + parse (process), node:http transport vs fetch`, stream, 1.0));

  const subjectCpu = (cpuOf(stream.samples.subject) * 1000) / TOKENS;
  const baselineCpu = (cpuOf(stream.samples.baseline) * 1000) / TOKENS;
  const ratio = subjectCpu / baselineCpu;
  printFigure({
    figure: 'transport: streaming CPU per 1,000 tokens, node:http transport vs fetch',
    subject_ms: Math.round(subjectCpu * 10) / 10,
    baseline_ms: Math.round(baselineCpu * 10) / 10,
    ratio: Math.round(ratio * 1000) / 1000,
    goal: 1.0,
    met: ratio <= 1.0,
    runs,
  });

  // Issue 22 goal: a request through a local forward proxy (HTTP_PROXY, absolute form) against the same request
  // direct. `provider.test` resolves only at the proxy, which dials 127.0.0.1.
  proxy = await startProxy();
  const proxied = { ...client('transport', 'stream', fake.baseUri.replace('127.0.0.1', 'provider.test'), complete) };
  proxied.env = { HTTP_PROXY: proxy.url };
  const throughProxy = await compare({
    subject: proxied,
    baseline: client('transport', 'stream', fake.baseUri, complete),
    runs,
    scrubbed: true,
  });
  printFigure(timeFigure(`transport: ${TOKENS}-token request through a local HTTP proxy vs direct`, throughProxy, 1.2));
} finally {
  proxy?.child.kill();
  stopFakeProvider(fake);
  rmSync(dir, { recursive: true, force: true });
}
