/**
 * Figure (issue 22 item 4): how long `crystal run` takes from spawn until its first request
 * reaches the provider, against the node:http floor making the same streaming POST
 * (lib/http-floor.mjs), interleaved, in a scrubbed environment, from this repository as the
 * workspace (a big tree: work that walks it would show). The gap is Crystal's start-up: module
 * loading plus everything done before the request (config, session, tools, prompt).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, printFigure, runCount, scrubbedEnv } from './lib/harness.mjs';
import { startTinyChatServer } from './lib/tiny-chat-server.mjs';

const root = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const round = (n, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

let arrived;
const { server, baseUri } = await startTinyChatServer(() => {
  arrived ??= performance.now();
});
const home = mkdtempSync(join(tmpdir(), 'crystal-bench-first-'));
const models = { 'fake-model': { contextWindow: 128000 } };
const providers = { fake: { protocol: 'openai', baseUri, apiKey: 'bench-key', models } };
writeFileSync(join(home, 'config.json'), JSON.stringify({ provider: 'fake', model: 'fake-model', providers }));

/** Spawn to first request, in ms; rejects when the command fails or sends nothing. */
function once(argv, extraEnv = {}) {
  arrived = undefined;
  const start = performance.now();
  const child = spawn(process.execPath, argv, {
    cwd: root('.'),
    env: { ...scrubbedEnv(), CRYSTAL_HOME: home, ...extraEnv },
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
  // BENCH_CRYSTAL_BIN: another build's bin, for a before/after comparison.
  const subject = [process.env.BENCH_CRYSTAL_BIN ?? root('packages/cli/bin/crystal.js'), 'run', '--format', 'json', 'hi'];
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
  // REL-1 on a slower disk: the save of the user message (two fsync waits: the files, then the
  // folder) overlaps the request's preparation and connection (ChatRequest.sendAfter). Each fsync
  // is made SLOW_FSYNC_MS slower by a preload (the real fsync still runs); the other side preloads
  // the same wrapper without the delay. A save in series would add both waits to the first request.
  const SLOW_FSYNC_MS = 8;
  const fsyncPreload = join(home, 'fsync-delay.cjs');
  writeFileSync(
    fsyncPreload,
    "const fs = require('node:fs'); const real = fs.fsync; const ms = Number(process.env.FSYNC_DELAY_MS);\n" +
      'fs.fsync = (fd, callback) => (ms > 0 ? setTimeout(() => real(fd, callback), ms) : real(fd, callback));\n',
  );
  const disk = { slow: [], real: [] };
  for (let i = 0; i < runs + 2; i++) {
    for (const side of i % 2 === 0 ? ['real', 'slow'] : ['slow', 'real']) {
      const delay = side === 'slow' ? SLOW_FSYNC_MS : 0;
      const ms = await once(subject, { NODE_OPTIONS: `--require ${fsyncPreload}`, FSYNC_DELAY_MS: String(delay) });
      if (i >= 2) disk[side].push(ms);
    }
  }
  const slow = median(disk.slow);
  const real = median(disk.real);
  printFigure({
    figure: `first-request: crystal run, spawn to first request with every fsync ${SLOW_FSYNC_MS} ms slower vs on this disk (REL-1's save overlaps the request's preparation)`,
    subject_ms: round(slow),
    baseline_ms: round(real),
    added_ms: round(slow - real),
    serial_save_would_add_ms: 2 * SLOW_FSYNC_MS,
    hidden_ms: round(2 * SLOW_FSYNC_MS - (slow - real)),
    runs,
    environment: 'scrubbed',
  });
  // Which Node built-ins each side loaded by its exit (a preloaded probe writes process.moduleLoadList):
  // what Crystal loads beyond the floor is start-up work the request did not need (issue 22 item 4).
  const probe = join(home, 'builtins-probe.cjs');
  writeFileSync(
    probe,
    `process.on('exit', () => require('node:fs').writeFileSync(process.env.BUILTINS_FILE, process.moduleLoadList.filter((m) => m.startsWith('NativeModule ') && !m.includes('internal/')).map((m) => m.slice(13)).join('\\n')));\n`,
  );
  const loaded = {};
  for (const [side, argv] of [
    ['subject', subject],
    ['floor', floor],
  ]) {
    const file = join(home, `${side}.builtins`);
    await once(argv, { NODE_OPTIONS: `--require ${probe}`, BUILTINS_FILE: file });
    loaded[side] = readFileSync(file, 'utf8').split('\n');
  }
  printFigure({
    figure: 'first-request: public Node built-ins loaded by crystal run vs the node:http floor',
    subject_count: loaded.subject.length,
    baseline_count: loaded.floor.length,
    beyond_floor: loaded.subject.filter((name) => !loaded.floor.includes(name)).sort(),
    environment: 'scrubbed',
  });
} finally {
  server.close();
  rmSync(home, { recursive: true, force: true });
}
