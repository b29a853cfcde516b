/**
 * Issue 22 item 1: the transport keeps connections alive between requests (a tool loop's
 * rounds reuse one connection instead of a new TCP and TLS handshake each), as fetch did.
 */
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { FakeProvider, sse } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient, createTransport, type Protocol } from '../src/index.js';
import { collect, failure } from './stream-helpers.js';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('keep-alive', () => {
  for (const protocol of ['openai', 'responses', 'anthropic', 'gemini', 'ollama'] as Protocol[]) {
    it(`${protocol}: three streamed requests in a row reuse one connection`, async () => {
      fake = await FakeProvider.start({ wire: protocol, replies: [{ text: 'one two three', usage: { input: 1, output: 3 } }] });
      const c = await createChatClient(
        { name: 'acme', protocol, baseUri: fake.baseUriFor(protocol), apiKey: 'k' },
        { id: 'acme-model' },
        { transport: createTransport({ env: {} }) },
      );
      for (let i = 0; i < 3; i++) expect((await collect(c)).at(-1)).toMatchObject({ type: 'finish' });
      expect(fake.requests).toHaveLength(3);
      expect(fake.connections).toBe(1);
    });
  }
});

describe('a body left open after its last event', () => {
  it('REL-5 the reply is not held back while the server keeps the body open: the rest is read in the background, and the connection goes back to the pool when the body ends', async () => {
    // Chunked, with every event and [DONE], and no terminating chunk until the test says so.
    const body =
      sse({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] }) +
      sse({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
      'data: [DONE]\n\n';
    const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    const sockets: Socket[] = [];
    const closed: boolean[] = [];
    const server = createServer((socket) => {
      const index = sockets.push(socket) - 1;
      closed[index] = false;
      socket.on('close', () => (closed[index] = true));
      socket.on('error', () => {});
      socket.on('data', () => {
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: keep-alive\r\n\r\n${chunk(body)}`,
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      // A drain grace far beyond the test's timeout: before, the last events waited for it.
      const transport = createTransport({ env: {}, drainGraceMs: 600_000 });
      const c = await createChatClient(
        { name: 'acme', protocol: 'openai', baseUri: `http://127.0.0.1:${port}/v1/`, apiKey: 'k' },
        { id: 'm' },
        { transport },
      );
      const events = await collect(c);
      expect(events.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text)).toEqual(['hi']);
      expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
      expect(closed).toEqual([false]);
      // The body ends: the connection is read to its end and kept for the next request.
      await new Promise((resolve) => sockets[0]?.write('0\r\n\r\n', resolve));
      for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
      expect((await collect(c)).at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
      expect(sockets).toHaveLength(1);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('RETRY-7 on a reused connection', () => {
  it('RETRY-7 a pooled connection the server drops as the next request arrives is body_write_closed', async () => {
    const body =
      sse({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] }) +
      sse({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
      'data: [DONE]\n\n';
    const sockets = new Set<Socket>();
    let requests = 0;
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('data', () => {
        requests++;
        if (requests === 1) {
          socket.write(
            `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: keep-alive\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          );
        } else {
          socket.resetAndDestroy();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const c = await createChatClient(
        { name: 'acme', protocol: 'openai', baseUri: `http://127.0.0.1:${port}/v1/`, apiKey: 'k' },
        { id: 'm' },
        { transport: createTransport({ env: {} }) },
      );
      expect((await collect(c)).at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
      const error = await failure(c);
      expect(sockets.size).toBe(1);
      expect(error.kind).toBe('body_write_closed');
      expect(error.retryable).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
