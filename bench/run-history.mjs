/**
 * Figure (issue 22 items 4 and 5): `crystal run --format json hi` in a Home with a long checkpoint history (400
 * packs written by earlier sessions, as months of turns and captures leave) against the same run in a fresh Home
 * (goal: ratio <= 1.05). A turn's checkpoint record used to read every pack index in Home at its first store write,
 * so every `run` grew with the history. Both Homes get the same config; each run is a new session. Scrubbed
 * environment, interleaved, medians compared; the CPU-time ratio is printed beside.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChunkStore } from '../packages/engine/dist/index.js';
import { compare, printFigure, runCount, timeFigure } from './lib/harness.mjs';
import { startTinyChatServer } from './lib/tiny-chat-server.mjs';

const PACKS = 400;
const crystal = process.env.BENCH_CRYSTAL_BIN ?? fileURLToPath(new URL('../packages/cli/bin/crystal.js', import.meta.url));
const { server, baseUri } = await startTinyChatServer();
const config = JSON.stringify({
  provider: 'fake',
  model: 'fake-model',
  providers: { fake: { protocol: 'openai', baseUri, apiKey: 'bench-key', models: { 'fake-model': { contextWindow: 128000 } } } },
});
const root = mkdtempSync(join(tmpdir(), 'crystal-bench-history-'));
const fresh = join(root, 'fresh');
const long = join(root, 'long');
try {
  for (const home of [fresh, long]) {
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'config.json'), config);
  }
  // The history: PACKS earlier sessions' packs (each a few pieces: turn contexts, captured files).
  for (let i = 0; i < PACKS; i++) {
    const store = ChunkStore.forHome(long);
    for (let j = 0; j < 4; j++) await store.put(Buffer.from(`session ${i} piece ${j}: ${'context '.repeat(40 + j)}`));
    await store.flush();
  }
  const side = (home) => ({
    argv: [process.execPath, crystal, 'run', '--format', 'json', 'hi'],
    env: { CRYSTAL_HOME: home, CRYSTAL_COMPILE_CACHE: join(root, 'compile-cache') },
    cwd: root,
    check: (stdout) => {
      if (JSON.parse(stdout).stopReason !== 'completed') throw new Error(`crystal run did not complete: ${stdout}`);
    },
  });
  const result = await compare({ subject: side(long), baseline: side(fresh), runs: runCount(10), scrubbed: true });
  printFigure({
    ...timeFigure(`run-history: crystal run in a Home with ${PACKS} checkpoint packs vs a fresh Home`, result, 1.05),
    environment: 'scrubbed',
    packs: PACKS,
  });
} finally {
  server.close();
  rmSync(root, { recursive: true, force: true });
}
