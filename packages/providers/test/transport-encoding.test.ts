/**
 * The transport sends no `accept-encoding`, but a proxy may compress anyway; a gzip, deflate or
 * brotli stream is decoded (fetch did this too) instead of failing as an invalid stream.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { sse } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient, createTransport } from '../src/index.js';
import { collect } from './stream-helpers.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

const body =
  sse({ choices: [{ index: 0, delta: { content: 'packed ' }, finish_reason: null }] }) +
  sse({ choices: [{ index: 0, delta: { content: 'text' }, finish_reason: 'stop' }] }) +
  'data: [DONE]\n\n';

const encodings: Array<[string, (b: Buffer) => Buffer]> = [
  ['gzip', gzipSync],
  ['deflate', deflateSync],
  ['br', brotliCompressSync],
];

describe('compressed streams', () => {
  for (const [name, compress] of encodings) {
    it(`a ${name}-encoded SSE stream is decoded`, async () => {
      let acceptEncoding: string | undefined;
      server = createServer((req, res) => {
        acceptEncoding = req.headers['accept-encoding'];
        req.resume();
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': name });
        res.end(compress(Buffer.from(body)));
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      const c = await createChatClient(
        { name: 'acme', protocol: 'openai', baseUri: `http://127.0.0.1:${port}/v1/`, apiKey: 'k' },
        { id: 'm' },
      );
      const events = await collect(c);
      const text = events.flatMap((e) => (e.type === 'text-delta' ? [e.text] : [])).join('');
      expect(text).toBe('packed text');
      expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
      expect(acceptEncoding).toBeUndefined();
    });
  }
});

describe('a body ended with nobody reading it', () => {
  for (const encoding of [undefined, 'gzip']) {
    it(`destroying an unread ${encoding ?? 'plain'} body with an error raises no uncaught exception`, async () => {
      server = createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'text/event-stream', ...(encoding ? { 'content-encoding': encoding } : {}) });
        res.write(encoding ? gzipSync(Buffer.from(body)).subarray(0, 10) : 'data: {');
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      const response = await createTransport({ env: {} }).request({
        url: `http://127.0.0.1:${port}/`,
        method: 'POST',
        body: '{}',
      });
      const uncaught: unknown[] = [];
      const onUncaught = (error: unknown) => uncaught.push(error);
      process.on('uncaughtException', onUncaught);
      try {
        response.destroy(new Error('stop here'));
        await new Promise((resolve) => setTimeout(resolve, 50));
      } finally {
        process.off('uncaughtException', onUncaught);
      }
      expect(uncaught).toEqual([]);
    });
  }
});
