/**
 * REL-8 (issue 13 item 8): one stream frame is capped; a server sending 20 MB without a newline
 * fails the attempt as an invalid stream instead of being buffered without bound.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient, MAX_FRAME_BYTES, type Protocol } from '../src/index.js';
import { failure } from './stream-helpers.js';

const TOTAL = 20 * 1024 * 1024;
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** Streams `prefix` then 20 MB of 'x' with no newline, in 64 KiB writes that respect backpressure. */
async function flood(contentType: string, prefix: string): Promise<{ origin: string; written: () => number }> {
  let written = 0;
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': contentType });
    res.write(prefix);
    const block = Buffer.alloc(64 * 1024, 'x');
    const pump = (): void => {
      while (written < TOTAL && !res.destroyed) {
        written += block.length;
        if (!res.write(block)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    res.on('error', () => {});
    pump();
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, written: () => written };
}

const cases: Array<[Protocol, string, string, string]> = [
  ['openai', 'text/event-stream', 'data: {"choices":[{"delta":{"content":"', '/v1/'],
  ['anthropic', 'text/event-stream', 'event: content_block_delta\ndata: ', '/'],
  ['ollama', 'application/x-ndjson', '{"message":{"content":"', '/'],
];

describe('REL-8 the stream frame cap', () => {
  for (const [protocol, type, prefix, path] of cases) {
    it(`REL-8 ${protocol}: 20 MB without a newline fails as an invalid stream naming the cap`, async () => {
      const server = await flood(type, prefix);
      const c = await createChatClient(
        { name: 'acme', protocol, baseUri: `${server.origin}${path}`, apiKey: 'k' },
        { id: 'acme-model' },
      );
      const before = process.memoryUsage().rss;
      const error = await failure(c);
      expect(error.kind).toBe('incomplete_stream');
      expect(error.message).toContain('invalid stream');
      expect(error.message).toContain(`${MAX_FRAME_BYTES / (1024 * 1024)} MiB`);
      // The client stopped reading at the cap: the server could not write the whole 20 MB.
      expect(server.written()).toBeLessThan(TOTAL);
      expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    });
  }
});
