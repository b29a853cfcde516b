/**
 * SEC-7 (issue 12 hole 8): provider requests never carry credentials to another origin. A real
 * server on 127.0.0.1 redirects to a second server on another port that records what arrives.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeProvider } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient, type Protocol } from '../src/index.js';
import { collect, failure } from './stream-helpers.js';

const KEY = 'sk-sec7-secret-key-0123456789';

interface Recorded {
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The second origin: records every request and answers 500. */
async function recorder(): Promise<{ origin: string; seen: Recorded[] }> {
  const seen: Recorded[] = [];
  const origin = await listen(
    createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      req.resume();
      res.writeHead(500).end();
    }),
  );
  return { origin, seen };
}

/** The provider origin: answers every request with `status` and a Location. */
async function redirector(status: number, location: (path: string) => string): Promise<string> {
  return listen(
    createServer((req, res) => {
      req.resume();
      res.writeHead(status, { location: location(req.url ?? '/') }).end();
    }),
  );
}

const cases: Array<[Protocol, string]> = [
  ['anthropic', 'x-api-key'],
  ['gemini', 'x-goog-api-key'],
  ['openai', 'authorization'],
  ['responses', 'authorization'],
];

describe('SEC-7 no credentials to another origin', () => {
  for (const [protocol, header] of cases) {
    for (const status of [307, 308, 302]) {
      it(`SEC-7 ${protocol}: a ${status} redirect to another origin is refused and no key arrives there (${header})`, async () => {
        const target = await recorder();
        const provider = await redirector(status, (path) => `${target.origin}${path}`);
        const base = protocol === 'openai' || protocol === 'responses' ? `${provider}/v1/` : `${provider}/`;
        const c = await createChatClient({ name: 'acme', protocol, baseUri: base, apiKey: KEY }, { id: 'acme-model' });
        const error = await failure(c);
        expect(target.seen).toEqual([]);
        for (const request of target.seen) {
          expect(JSON.stringify(request)).not.toContain(KEY);
          expect(request.url).not.toMatch(/key=/);
        }
        expect(error.message).toContain(target.origin);
        expect(error.message).toMatch(/another origin/);
        expect(error.retryable).toBe(false);
      });
    }
  }

  it('SEC-7 a same-origin 307 redirect is followed with the key (it stays on the origin)', async () => {
    const fake = await FakeProvider.start({ wire: 'anthropic', replies: [{ text: 'moved fine' }] });
    try {
      // One origin both redirects (/old/...) and answers (relaying to the fake provider's stream).
      const shared = createServer((req, res) => {
        if (req.url === '/old/v1/messages') {
          req.resume();
          res.writeHead(307, { location: '/v1/messages' }).end();
          return;
        }
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', async () => {
          const upstream = await fetch(`${fake.url}v1/messages`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': String(req.headers['x-api-key']) },
            body: Buffer.concat(chunks),
          });
          res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/event-stream' });
          res.end(Buffer.from(await upstream.arrayBuffer()));
        });
      });
      const origin = await listen(shared);
      const c = await createChatClient(
        { name: 'acme', protocol: 'anthropic', baseUri: `${origin}/old/`, apiKey: KEY },
        { id: 'acme-model' },
      );
      const events = await collect(c);
      expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
      expect(fake.requests[0]?.headers['x-api-key']).toBe(KEY);
    } finally {
      await fake.close();
    }
  });
});
