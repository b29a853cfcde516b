/**
 * REL-5 (issue 13 item 5): a stalled provider becomes a retryable `timeout`. Real servers on
 * 127.0.0.1 that accept and never answer, stall after the headers, stall mid-stream, or trickle
 * bytes without ever finishing an event; small timeouts keep the tests short.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { FakeProvider, type FakeReply } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type ClientOptions, createChatClient, type Protocol } from '../src/index.js';
import { failure } from './stream-helpers.js';

let fake: FakeProvider | undefined;
let tcp: { server: Server; sockets: Set<Socket> } | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  if (tcp) {
    for (const socket of tcp.sockets) socket.destroy();
    await new Promise((resolve) => tcp?.server.close(resolve));
    tcp = undefined;
  }
});

async function client(protocol: Protocol, reply: FakeReply, options: ClientOptions) {
  fake = await FakeProvider.start({ wire: protocol, replies: [reply], whenExhausted: 'error' });
  return createChatClient(
    { name: 'acme', protocol, baseUri: fake.baseUriFor(protocol), apiKey: 'sk-rel5' },
    { id: 'acme-model' },
    options,
  );
}

/** A TCP server that accepts connections and never writes a byte. */
async function silentTcp(): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.resume();
  });
  tcp = { server, sockets };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('REL-5 stalled providers time out', () => {
  it('REL-5 a server that accepts the request and never answers hits the first-byte timeout', async () => {
    const c = await client('openai', { noAnswer: true }, { firstByteTimeoutMs: 200 });
    const error = await failure(c);
    expect(error.kind).toBe('timeout');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('retry.firstByteTimeoutSeconds');
  });

  it('REL-5 a TLS handshake that never completes hits the connect timeout', async () => {
    const port = await silentTcp();
    const c = await createChatClient(
      { name: 'acme', protocol: 'anthropic', baseUri: `https://127.0.0.1:${port}/`, apiKey: 'sk-rel5' },
      { id: 'acme-model' },
      { connectTimeoutMs: 200 },
    );
    const error = await failure(c);
    expect(error.kind).toBe('timeout');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('retry.connectTimeoutSeconds');
  });

  for (const protocol of ['openai', 'anthropic', 'gemini', 'ollama', 'responses'] as const) {
    it(`REL-5 ${protocol}: a stream that stalls after the headers hits the idle timeout`, async () => {
      const c = await client(protocol, { text: 'never sent', stallAfter: 0 }, { idleTimeoutMs: 200 });
      const error = await failure(c);
      expect(error.kind).toBe('timeout');
      expect(error.retryable).toBe(true);
      expect(error.message).toContain('retry.idleTimeoutSeconds');
    });
  }

  it('REL-5 a stream that stalls mid-way hits the idle timeout', async () => {
    const c = await client('openai', { text: 'one two three four five six', stallAfter: 3 }, { idleTimeoutMs: 200 });
    const events: string[] = [];
    let caught: unknown;
    try {
      for await (const event of c.stream({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })) {
        if (event.type === 'text-delta') events.push(event.text);
      }
    } catch (error) {
      caught = error;
    }
    expect(events.length).toBeGreaterThan(0);
    expect(caught).toMatchObject({ kind: 'timeout', message: expect.stringContaining('retry.idleTimeoutSeconds') });
  });

  it('REL-5 an error answer whose body stalls is classified from its status instead of hanging', async () => {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.once('data', () => {
        socket.write(
          'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{"error":',
        );
      });
    });
    tcp = { server, sockets };
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const c = await createChatClient(
      { name: 'acme', protocol: 'openai', baseUri: `http://127.0.0.1:${port}/v1/`, apiKey: 'k' },
      { id: 'm' },
      { idleTimeoutMs: 200 },
    );
    const error = await failure(c);
    expect(error).toMatchObject({ kind: 'server', status: 503 });
  });

  it('REL-5 a server trickling bytes without finishing an event hits the idle timeout', async () => {
    // One byte every 20 ms: the socket is never idle for the 300 ms timeout, but no event completes in time.
    const c = await client('anthropic', { text: 'a long enough reply to trickle', trickleMs: 20 }, { idleTimeoutMs: 300 });
    const error = await failure(c);
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('no stream event');
  });
});
