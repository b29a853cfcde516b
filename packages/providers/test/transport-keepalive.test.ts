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
