/**
 * RETRY-1 for the transport failures that have no HTTP status: a refused connection (network)
 * and a request that timed out (timeout) are retried like a 5xx. Real sockets on 127.0.0.1: the
 * first attempt goes to a closed port or to a server that never answers; the retry reaches the
 * fake provider.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, type EngineEvent, Session } from '../src/index.js';
import { manualClock } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A port where nothing listens any more (ECONNREFUSED). */
async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A server that accepts requests and never answers. */
async function silentServer(): Promise<number> {
  const server = createServer(() => {});
  const port = await listen(server);
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return port;
}

/** The first request goes to `firstUrl` (with `init` changed by `adjust`), later ones where they were meant to. */
function firstAttemptTo(firstUrl: string, adjust: (init: RequestInit) => RequestInit = (i) => i): typeof fetch {
  let calls = 0;
  return ((input: string | URL | Request, init?: RequestInit) => {
    calls++;
    if (calls > 1) return fetch(input, init);
    const path = new URL(String(input)).pathname;
    return fetch(`${firstUrl}${path}`, adjust(init ?? {}));
  }) as typeof fetch;
}

async function turnWith(fetchFn: typeof fetch) {
  const fake = await FakeProvider.start({ replies: [{ text: 'second attempt' }], whenExhausted: 'error' });
  closers.push(() => fake.close());
  const home = mkdtempSync(join(tmpdir(), 'crystal-retry-kinds-'));
  const session = await Session.open({
    home,
    workspace: home,
    config: fakeConfig(fake.baseUri) as Config,
    env: {},
    clock: manualClock(),
    clientOptions: { fetch: fetchFn },
  });
  const events: EngineEvent[] = [];
  session.on((e) => events.push(e));
  const result = await session.send('go');
  return { result, events, fake };
}

describe('RETRY-1 transport failures without a status are retried', () => {
  it('RETRY-1 a refused connection (network) is retried and the turn completes', async () => {
    const port = await closedPort();
    const { result, events, fake } = await turnWith(firstAttemptTo(`http://127.0.0.1:${port}`));
    expect(events.filter((e) => e.type === 'retry-scheduled').map((e) => e.type === 'retry-scheduled' && e.reason)).toEqual([
      'network',
    ]);
    expect(result).toMatchObject({ stopReason: 'completed', text: 'second attempt', retries: 1 });
    expect(fake.requests).toHaveLength(1);
  });

  it('RETRY-1 a request that timed out (timeout) is retried and the turn completes', async () => {
    const port = await silentServer();
    const { result, events, fake } = await turnWith(
      firstAttemptTo(`http://127.0.0.1:${port}`, (init) => ({ ...init, signal: AbortSignal.timeout(100) })),
    );
    expect(events.filter((e) => e.type === 'retry-scheduled').map((e) => e.type === 'retry-scheduled' && e.reason)).toEqual([
      'timeout',
    ]);
    expect(result).toMatchObject({ stopReason: 'completed', text: 'second attempt', retries: 1 });
    expect(fake.requests).toHaveLength(1);
  });
});
