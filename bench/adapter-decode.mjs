/**
 * Figure per wire: the cost of decoding a 20,000-token stream through the adapter, as a ratio to
 * the raw framing parse of the same bytes (SSE through eventsource-parser, or NDJSON lines, plus
 * JSON.parse of every event). Goal: adapter overhead under 1.5x. In-process, no network: the
 * adapter gets the bytes through an in-memory transport, in 16 KiB reads like a socket would give.
 */
import { createParser } from 'eventsource-parser';
import { printFigure, runCount } from './lib/harness.mjs';

const providers = await import(new URL('../packages/providers/dist/index.js', import.meta.url).href);
const testkit = await import(new URL('../packages/testkit/dist/index.js', import.meta.url).href);

const TOKENS = 20_000;
const READ = 16 * 1024;
const runs = runCount(15);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function bytesOf(wire) {
  const encoder = testkit.wireByName(wire);
  const { chunks, contentType } = encoder.encodeStream(
    { reasoning: 'thinking first', textTokens: TOKENS, usage: { input: 10, output: TOKENS } },
    { path: '/', body: { model: 'm' } },
  );
  return { bytes: new TextEncoder().encode(chunks.join('')), contentType };
}

function reads(bytes) {
  const out = [];
  for (let i = 0; i < bytes.length; i += READ) out.push(bytes.subarray(i, i + READ));
  return out;
}

function rawParse(bytes, ndjson) {
  const decoder = new TextDecoder();
  let events = 0;
  if (ndjson) {
    let buffer = '';
    for (const chunk of reads(bytes)) {
      buffer += decoder.decode(chunk, { stream: true });
      let start = 0;
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n', start)) {
        const line = buffer.slice(start, nl);
        start = nl + 1;
        if (line.trim() !== '') {
          JSON.parse(line);
          events++;
        }
      }
      buffer = buffer.slice(start);
    }
    return events;
  }
  const parser = createParser({
    onEvent: (e) => {
      if (e.data !== '[DONE]') JSON.parse(e.data);
      events++;
    },
  });
  for (const chunk of reads(bytes)) parser.feed(decoder.decode(chunk, { stream: true }));
  return events;
}

async function adapterDecode(protocol, bytes, contentType) {
  const parts = reads(bytes);
  // An in-memory transport (the provider `Transport` interface) hands the adapter the bytes.
  const transport = {
    async request(request) {
      let next = 0;
      return {
        status: 200,
        url: request.url,
        headers: { get: (name) => (name.toLowerCase() === 'content-type' ? contentType : null) },
        body: {
          [Symbol.asyncIterator]: () => ({
            next: () =>
              Promise.resolve(next < parts.length ? { value: parts[next++], done: false } : { value: undefined, done: true }),
          }),
        },
        text: async () => '',
        destroy() {},
        close: async () => {},
      };
    },
  };
  const client = await providers.createChatClient(
    { name: 'bench', protocol, baseUri: 'http://127.0.0.1:9/', apiKey: 'k' },
    { id: 'm', thinking: true },
    { transport },
  );
  // The client joins the deltas of one read into one event (providers/src/wire-client.ts), so the
  // tokens are counted in the text: each is `tok `.
  let text = '';
  for await (const event of client.stream({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })) {
    if (event.type === 'text-delta') text += event.text;
  }
  return text.split('tok ').length - 1;
}

for (const protocol of ['openai', 'deepseek', 'responses', 'anthropic', 'gemini', 'ollama']) {
  const { bytes, contentType } = bytesOf(protocol);
  const ndjson = protocol === 'ollama';
  const raw = [];
  const adapter = [];
  for (let i = 0; i < runs + 3; i++) {
    let t = performance.now();
    rawParse(bytes, ndjson);
    const rawMs = performance.now() - t;
    t = performance.now();
    const deltas = await adapterDecode(protocol, bytes, contentType);
    const adapterMs = performance.now() - t;
    if (deltas !== TOKENS) throw new Error(`${protocol}: the adapter decoded ${deltas} tokens of text, expected ${TOKENS}`);
    if (i >= 3) {
      raw.push(rawMs);
      adapter.push(adapterMs);
    }
  }
  const ratio = median(adapter) / median(raw);
  printFigure({
    figure: `adapter-decode: ${protocol} 20,000-token stream vs raw ${ndjson ? 'NDJSON' : 'SSE'} parse`,
    adapter_ms: Number(median(adapter).toFixed(2)),
    raw_ms: Number(median(raw).toFixed(2)),
    bytes: bytes.length,
    ratio: Number(ratio.toFixed(3)),
    goal: 1.5,
    met: ratio < 1.5,
    runs,
  });
}
