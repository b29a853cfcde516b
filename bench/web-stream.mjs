/**
 * Figure for the Web page's streaming cost (issue 19): Chromium's main-thread busy time
 * (CDP `Performance.getMetrics` TaskDuration) per 1,000 streamed tokens while a 20,000-token
 * answer streams into a page that already shows a 500-message transcript, against the same
 * answer streamed into an empty page, in the same run. Both pages are served by the real
 * `crystal web` binary against the fake provider. Goal: ratio <= 1.2 (the rendering cost of a
 * token must not grow with the transcript: only the live message re-renders).
 *
 * `web_stream_busy_per_1k_tokens`: subject = the 500-message page, baseline = the empty page;
 * medians of BENCH_RUNS runs (default 5), the two pages interleaved.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { printFigure, runCount } from './lib/harness.mjs';

const root = new URL('..', import.meta.url).pathname;
const { FakeProvider } = await import(`${root}packages/testkit/dist/index.js`);
const { chromium } = await import('playwright-core');

const TOKENS = 20_000;
const MESSAGES = 500;
const runs = runCount(5);
const GOAL = 1.2;

const FILL_ANSWER = [
  'Here is **what I found** in `src/module.ts`:',
  '',
  '- the parser keeps a cache',
  '- the cache is never cleared',
  '',
  '```ts',
  'const cache = new Map<string, Node>();',
  '```',
].join('\n');

async function startHost(replies) {
  const fake = await FakeProvider.start({ wire: 'openai', replies });
  const home = mkdtempSync(join(tmpdir(), 'crystal-bench-stream-'));
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      provider: 'fake',
      model: 'fake-model',
      workspaceTrust: false,
      retry: { maxRetries: 0 },
      providers: {
        fake: {
          protocol: 'openai',
          baseUri: fake.baseUri,
          apiKey: 'bench',
          models: { 'fake-model': { contextWindow: 10_000_000 } },
        },
      },
    }),
  );
  const child = spawn(process.execPath, [`${root}packages/cli/bin/crystal.js`, 'web', '--home', home], {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const m = /(http:\/\/\S+\/\?token=\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('close', (code) => reject(new Error(`crystal web exited ${code}: ${err}`)));
  });
  const parsed = new URL(url);
  const token = parsed.searchParams.get('token');
  return {
    url,
    origin: parsed.origin,
    token,
    async close() {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('close', resolve));
      await fake.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

function frame(scope, text) {
  const manifest = Buffer.from(JSON.stringify({ scope, input: { kind: 'message', text, images: [] } }));
  const head = Buffer.alloc(8);
  head.write('CRB1', 0, 'latin1');
  head.writeUInt32BE(manifest.length, 4);
  return Buffer.concat([head, manifest]);
}

async function api(host, path, init = {}) {
  const response = await fetch(`${host.origin}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${host.token}`, ...(init.headers ?? {}) },
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** 250 short turns (500 messages) through the host's own API, one after another. */
async function fill(host) {
  let state = await api(host, '/api/state');
  for (let i = 0; i < MESSAGES / 2; i++) {
    await api(host, '/api/send', {
      method: 'POST',
      headers: { 'content-type': 'application/x-crystal-input' },
      body: frame(state.scope, `Question ${i + 1}: what does the parser cache?`),
    });
    const want = (i + 1) * 2;
    for (;;) {
      state = await api(host, '/api/state');
      if (state.activity === 'idle' && state.history.length >= want) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  return state.history.length;
}

/** Streams one answer into the page and returns the main thread's busy seconds meanwhile. */
async function streamOnce(page, cdp) {
  const before = await taskDuration(cdp);
  const assistants = await page.locator('article.assistant').count();
  await page.getByRole('textbox', { name: 'Message' }).fill('Stream the long answer.');
  await page.getByRole('textbox', { name: 'Message' }).press('Enter');
  await page.waitForFunction(
    (n) => document.querySelectorAll('article.assistant').length > n && document.body.dataset.activity === 'idle',
    assistants,
    { timeout: 300_000, polling: 100 },
  );
  const after = await taskDuration(cdp);
  return after - before;
}

async function taskDuration(cdp) {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0;
}

async function openPage(browser, host) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(host.url);
  await page.waitForFunction(() => document.getElementById('activity')?.textContent === 'Ready', undefined, {
    timeout: 60_000,
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  return { page, cdp };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const stream = { textTokens: TOKENS };
const full = await startHost([...Array.from({ length: MESSAGES / 2 }, () => ({ text: FILL_ANSWER })), stream]);
const empty = await startHost([stream]);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const filled = await fill(full);
  const subject = [];
  const baseline = [];
  for (let run = 0; run < runs; run++) {
    // A fresh page each run: the full one loads the whole archive (500 messages and up), the empty one /clear first.
    const f = await openPage(browser, full);
    const shown = await f.page.locator('#transcript > article').count();
    if (shown < MESSAGES) throw new Error(`The full page shows ${shown} messages, fewer than ${MESSAGES}.`);
    subject.push(await streamOnce(f.page, f.cdp));
    await f.page.close();

    const e = await openPage(browser, empty);
    await e.page.getByRole('textbox', { name: 'Message' }).fill('/clear');
    await e.page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await e.page.waitForFunction(() => document.querySelectorAll('#transcript > article').length === 0, undefined, {
      timeout: 30_000,
    });
    baseline.push(await streamOnce(e.page, e.cdp));
    await e.page.close();
  }
  const per1k = (seconds) => (seconds * 1000) / (TOKENS / 1000);
  const s = per1k(median(subject));
  const b = per1k(median(baseline));
  const ratio = s / b;
  printFigure({
    figure: 'web_stream_busy_per_1k_tokens',
    subject_ms: Math.round(s * 10) / 10,
    baseline_ms: Math.round(b * 10) / 10,
    ratio: Math.round(ratio * 1000) / 1000,
    goal: GOAL,
    met: ratio <= GOAL,
    runs,
    transcript_messages: filled,
    tokens: TOKENS,
    subject_runs_ms: subject.map((x) => Math.round(per1k(x) * 10) / 10),
    baseline_runs_ms: baseline.map((x) => Math.round(per1k(x) * 10) / 10),
  });
} finally {
  await browser.close();
  await full.close();
  await empty.close();
}
