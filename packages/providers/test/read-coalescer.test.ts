/**
 * Issue 22 (streaming CPU per 1,000 tokens ≤ 1.1x the node:http floor): read coalescing.
 * A stream paced a frame every 2 ms over a real socket on 127.0.0.1 must reach the reader in far
 * fewer reads than frames, nothing lost or reordered; the first bytes after the request and
 * after a quiet gap must not wait for more; an abort inside a window must settle at once; a fast
 * stream must not be paused; a keep-alive socket must be read again for the next request.
 * Counts and orderings only, no timings asserted.
 */
import http, { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { makeTestCertificates } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { bodyReader } from '../src/transport/body-reader.js';
import { coalesceReads, PROMPT_READS } from '../src/transport/read-coalescer.js';
import { createTransport } from '../src/transport/transport.js';

const FRAMES = 200;
const frame = (n: number): string => `data: {"n":${n}}\n\n`;
const allFrames = (count: number): string => Array.from({ length: count }, (_, i) => frame(i)).join('');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let servers: Array<Server | https.Server> = [];
afterEach(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  servers = [];
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, tls?: { key: string; cert: string }) {
  const server = tls ? https.createServer(tls, handler) : createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** Writes `count` frames, one per timer tick `everyMs` apart, then ends (or holds the connection open). */
function paced(count: number, everyMs: number, hold = false) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let next = 0;
    const step = (): void => {
      if (res.destroyed) return;
      if (next === count) {
        if (!hold) res.end();
        return;
      }
      res.write(frame(next++));
      setTimeout(step, everyMs);
    };
    step();
  };
}

function request(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, resolve);
    req.on('error', reject);
    req.end();
  });
}

async function readBody(body: AsyncIterable<Uint8Array>): Promise<{ text: string; reads: number }> {
  let text = '';
  let reads = 0;
  for await (const chunk of body) {
    reads++;
    text += Buffer.from(chunk).toString('utf8');
  }
  return { text, reads };
}

describe('issue 22: read coalescing in the transport', () => {
  it('issue 22 a stream paced a frame every 2 ms reaches the reader in far fewer reads than frames, nothing lost or reordered', async () => {
    const url = await listen(paced(FRAMES, 2));
    const response = await createTransport().request({ url, coalesceReads: true });
    const { text, reads } = await readBody(response.body);
    expect(text).toBe(allFrames(FRAMES));
    // One read per frame without coalescing; a 33 ms window over 2 ms frames gathers about sixteen.
    expect(reads).toBeLessThanOrEqual(FRAMES / 3);
  });

  it('issue 22 the same over TLS: the TLS socket is paused and read in fewer reads than frames', async () => {
    const certs = makeTestCertificates('localhost');
    const url = await listen(paced(FRAMES, 2), { key: certs.key, cert: certs.cert });
    const response = await createTransport({ caFile: certs.caFile }).request({ url, coalesceReads: true });
    const { text, reads } = await readBody(response.body);
    expect(text).toBe(allFrames(FRAMES));
    expect(reads).toBeLessThanOrEqual(FRAMES / 3);
  });

  it('issue 22 the first bytes after the request, and the first after a quiet gap, reach the reader before the next frame is sent', async () => {
    const order: string[] = [];
    let seen: ((n: number) => void) | undefined;
    // Waits until the client has the frame (or a generous fallback, so a failure is an order, not a hang).
    const seenOrFallback = (n: number): Promise<void> =>
      new Promise((resolve) => {
        const fallback = setTimeout(resolve, 2000);
        seen = (got) => {
          if (got !== n) return;
          clearTimeout(fallback);
          resolve();
        };
      });
    const url = await listen((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void (async () => {
        const send = (n: number): void => {
          order.push(`sent ${n}`);
          res.write(frame(n));
        };
        send(0);
        await seenOrFallback(0);
        for (let n = 1; n < 20; n++) {
          send(n);
          await sleep(2);
        }
        await sleep(100); // quiet: longer than the coalescing window
        send(20);
        await seenOrFallback(20);
        send(21);
        res.end();
      })();
    });
    const response = await createTransport().request({ url, coalesceReads: true });
    let text = '';
    for await (const chunk of response.body) {
      const part = Buffer.from(chunk).toString('utf8');
      text += part;
      for (const match of part.matchAll(/"n":(\d+)/g)) {
        const n = Number(match[1]);
        order.push(`seen ${n}`);
        seen?.(n);
      }
    }
    expect(text).toBe(allFrames(22));
    expect(order.indexOf('seen 0')).toBeLessThan(order.indexOf('sent 1'));
    expect(order.indexOf('seen 20')).toBeLessThan(order.indexOf('sent 21'));
  });

  it('issue 22 an abort inside a coalescing window settles the waiting read at once (the server sends nothing more)', async () => {
    let sent = 0;
    const url = await listen((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const step = (): void => {
        if (res.destroyed || sent === 40) return; // then holds the connection open, silent
        res.write(frame(sent++));
        setTimeout(step, 2);
      };
      step();
    });
    const res = await request(url);
    res.on('error', () => {});
    const coalescer = coalesceReads(res);
    const reader = bodyReader(res);
    // Read until a window is open (decided on the turn after a read).
    let inWindow = false;
    let received = '';
    while (!inWindow && !received.includes(frame(39))) {
      const next = await reader.next();
      expect(next.done).toBe(false);
      received += Buffer.from(next.value as Uint8Array).toString('utf8');
      await new Promise((resolve) => setImmediate(resolve));
      inWindow = coalescer.paused;
    }
    expect(inWindow).toBe(true);
    const pending = reader.next();
    const sentAtAbort = sent;
    const abort = Object.assign(new Error('The request was cancelled.'), { name: 'AbortError' });
    res.destroy(abort);
    await expect(pending).rejects.toThrow('The request was cancelled.');
    // Settled on the abort itself, before the server wrote another frame, and the window is gone.
    expect(sent).toBe(sentAtAbort);
    expect(coalescer.paused).toBe(false);
  });

  it('issue 22 a fast stream (32 KiB every 5 ms, over many wake-ups) opens no window', async () => {
    const piece = 'x'.repeat(32 * 1024);
    const url = await listen((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      let left = 40;
      const step = (): void => {
        if (res.destroyed) return;
        if (left-- === 0) {
          res.end();
          return;
        }
        res.write(piece);
        setTimeout(step, 5);
      };
      step();
    });
    const res = await request(url);
    const coalescer = coalesceReads(res);
    const { text } = await readBody(bodyReader(res));
    expect(text.length).toBe(40 * piece.length);
    // Big reads mean the data outruns the reader: pausing would only cost throughput.
    expect(coalescer.pauses).toBeLessThanOrEqual(1);
  });

  it('issue 22 time to first token: the first reads after the headers and after a quiet gap open no window', async () => {
    // The server sends the next frame only once the client has taken the last one (rapid reads,
    // each its own), so a window opened by any of them would show in `pauses`.
    let taken: (() => void) | undefined;
    const nextTaken = (): Promise<void> => new Promise((resolve) => (taken = resolve));
    const url = await listen((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void (async () => {
        let n = 0;
        for (let i = 0; i < PROMPT_READS; i++) {
          const wait = nextTaken();
          res.write(frame(n++));
          await wait;
        }
        for (let i = 0; i < 40; i++) {
          res.write(frame(n++));
          await sleep(2);
        }
        await sleep(100); // quiet: longer than the window
        for (let i = 0; i < PROMPT_READS; i++) {
          const wait = nextTaken();
          res.write(frame(n++));
          await wait;
        }
        res.end();
      })();
    });
    const res = await request(url);
    const coalescer = coalesceReads(res);
    const reader = bodyReader(res);
    const pausesAt: number[] = [];
    let text = '';
    for (;;) {
      const next = await reader.next();
      if (next.done) break;
      text += Buffer.from(next.value).toString('utf8');
      await new Promise((resolve) => setImmediate(resolve)); // the window is decided on this turn
      pausesAt.push(coalescer.pauses);
      taken?.();
    }
    expect(text).toBe(allFrames(2 * PROMPT_READS + 40));
    // No window during the first reads; windows while frames came every 2 ms; none after the gap.
    expect(pausesAt.slice(0, PROMPT_READS).every((p) => p === 0)).toBe(true);
    const paced = pausesAt.at(-PROMPT_READS - 1) as number;
    expect(paced).toBeGreaterThan(0);
    expect(pausesAt.slice(-PROMPT_READS).every((p) => p === paced)).toBe(true);
  });

  it('issue 22 a keep-alive socket that ended inside a window is read again for the next request on it', async () => {
    let connections = 0;
    const url = await listen(paced(30, 2));
    servers[0]?.on('connection', () => connections++);
    const transport = createTransport();
    const first = await transport.request({ url, coalesceReads: true });
    expect((await readBody(first.body)).text).toBe(allFrames(30));
    await first.close();
    const second = await transport.request({ url, coalesceReads: true });
    expect((await readBody(second.body)).text).toBe(allFrames(30));
    expect(connections).toBe(1);
  });
});
