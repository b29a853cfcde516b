/**
 * Figure (issue 22 item 4): how long `crystal run` takes from spawn until its first request
 * reaches the provider, against the node:http floor making the same streaming POST
 * (lib/http-floor.mjs), interleaved, in a scrubbed environment, from this repository as the
 * workspace (a big tree: work that walks it would show). The gap is Crystal's start-up: module
 * loading plus everything done before the request (config, session, tools, prompt).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, printFigure, runCount, scrubbedEnv } from './lib/harness.mjs';

const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const round = (n, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 1, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const reply = `${chunk({ content: 'ok' })}${chunk({}, 'stop')}data: [DONE]\n\n`;

let arrived;
const server = http.createServer((req, res) => {
  arrived ??= performance.now();
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(reply);
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUri = `http://127.0.0.1:${server.address().port}/v1/`;
const home = mkdtempSync(join(tmpdir(), 'crystal-bench-first-'));
const models = { 'fake-model': { contextWindow: 128000 } };
const providers = { fake: { protocol: 'openai', baseUri, apiKey: 'bench-key', models } };
writeFileSync(join(home, 'config.json'), JSON.stringify({ provider: 'fake', model: 'fake-model', providers }));

/** Spawn to first request, in ms; rejects when the command fails or sends nothing. */
function once(argv) {
  arrived = undefined;
  const start = performance.now();
  const child = spawn(process.execPath, argv, {
    cwd: root('.'),
    env: { ...scrubbedEnv(), CRYSTAL_HOME: home },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 || arrived === undefined) reject(new Error(`${argv.join(' ')} exited ${code} without a request\n${stderr}`));
      else resolve(arrived - start);
    });
  });
}

try {
  const runs = runCount(10);
  const subject = [root('packages/cli/bin/crystal.js'), 'run', '--format', 'json', 'hi'];
  const floor = [root('bench/lib/http-floor.mjs'), baseUri, 'fake-model', 'bench-key'];
  const samples = { subject: [], floor: [] };
  for (let i = 0; i < runs + 2; i++) {
    const order = i % 2 === 0 ? ['floor', 'subject'] : ['subject', 'floor'];
    for (const side of order) {
      const ms = await once(side === 'subject' ? subject : floor);
      if (i >= 2) samples[side].push(ms);
    }
  }
  const crystal = median(samples.subject);
  const bare = median(samples.floor);
  printFigure({
    figure: 'first-request: crystal run, spawn to first request vs node:http floor (workspace: this repository)',
    subject_ms: round(crystal),
    baseline_ms: round(bare),
    startup_over_floor_ms: round(crystal - bare),
    ratio: round(crystal / bare, 3),
    goal: 1.2,
    met: crystal / bare <= 1.2,
    runs,
    subject_min_ms: round(Math.min(...samples.subject)),
    baseline_min_ms: round(Math.min(...samples.floor)),
    environment: 'scrubbed',
  });
} finally {
  server.close();
  rmSync(home, { recursive: true, force: true });
}
