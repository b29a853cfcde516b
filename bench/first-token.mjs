/**
 * Figure (issue 22, read coalescing): time to the first text token must not grow. The fake provider streams an
 * Anthropic reply paced a frame every millisecond (message_start, ping, content_block_start, then the text deltas:
 * the first text is the fourth frame, each its own network read), so the transport's coalescing window would show
 * here if it opened before the first text. Subject: Crystal's own client (`createChatClient`, the lean transport with
 * read coalescing) from the request to its first `text-delta`; baseline: a bare `node:http` POST to the same
 * server, from the request to the first body bytes that hold a `text_delta`. Same process, interleaved, warm,
 * medians compared. Goal: ratio ≤ 1.1. A second figure, the time to the whole reply, shows the price of the window:
 * the last frames of a paced reply may wait for it (at most COALESCE_WINDOW_MS, 16 ms), printed as `added_ms`.
 */
import http from 'node:http';
import { createChatClient } from '../packages/providers/dist/index.js';
import { FakeProvider } from '../packages/testkit/dist/index.js';
import { median, printFigure, runCount } from './lib/harness.mjs';

const TOKENS = 40;
const round = (n, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const reply = { textTokens: TOKENS, delayMs: 1, usage: { input: 1, output: TOKENS } };

const fake = await FakeProvider.start({ wire: 'anthropic', replies: [], whenExhausted: 'error' });
const baseUri = fake.baseUriFor('anthropic');
const client = await createChatClient({ name: 'fake', protocol: 'anthropic', baseUri, apiKey: 'k' }, { id: 'fake-model' });
const agent = new http.Agent({ keepAlive: true });

async function crystalOnce() {
  fake.enqueue(reply);
  const start = performance.now();
  let first;
  let text = '';
  for await (const event of client.stream({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })) {
    if (event.type !== 'text-delta') continue;
    first ??= performance.now() - start;
    text += event.text;
  }
  if (text !== 'tok '.repeat(TOKENS)) throw new Error(`crystal client read ${JSON.stringify(text.slice(0, 80))}`);
  return { first, all: performance.now() - start };
}

function floorOnce() {
  fake.enqueue(reply);
  const body = JSON.stringify({
    model: 'fake-model',
    max_tokens: 100,
    stream: true,
    messages: [{ role: 'user', content: 'hi' }],
  });
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL('v1/messages', baseUri),
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-api-key': 'k' },
      },
      (res) => {
        let first;
        let seen = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          if (first === undefined) {
            seen += chunk;
            if (seen.includes('text_delta')) first = performance.now() - start;
          }
        });
        res.on('end', () =>
          first === undefined ? reject(new Error('floor: no text_delta')) : resolve({ first, all: performance.now() - start }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

try {
  const runs = runCount(30);
  for (let i = 0; i < 3; i++) {
    await crystalOnce();
    await floorOnce();
  }
  const subject = [];
  const baseline = [];
  for (let i = 0; i < runs; i++) {
    subject.push(await crystalOnce());
    baseline.push(await floorOnce());
  }
  for (const [key, what] of [
    ['first', 'time to the first text token'],
    ['all', 'time to the whole reply'],
  ]) {
    const s = median(subject.map((r) => r[key]));
    const b = median(baseline.map((r) => r[key]));
    printFigure({
      figure: `first-token: Crystal's client, ${what} of an Anthropic reply paced a frame per ms, vs a bare node:http reader`,
      subject_ms: round(s),
      baseline_ms: round(b),
      ratio: round(s / b, 3),
      ...(key === 'first' ? { goal: 1.1, met: s / b <= 1.1 } : { added_ms: round(s - b) }),
      runs,
    });
  }
} finally {
  agent.destroy();
  await fake.close();
}
