/**
 * RETRY-1 for the transport failures that have no HTTP status: a refused connection (network)
 * and a request that timed out (timeout) are retried like a 5xx. Real sockets on 127.0.0.1: a
 * closed port, and a server that accepts and never answers (REL-5's first-byte timeout).
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeConfig } from '@crystal/testkit';
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

/** One turn against `baseUri` with two retries allowed; instant backoff waits. */
async function turnAgainst(baseUri: string, config: Partial<Config> = {}) {
  const home = mkdtempSync(join(tmpdir(), 'crystal-retry-kinds-'));
  const session = await Session.open({
    home,
    workspace: home,
    config: { ...(fakeConfig(baseUri) as Config), retry: { maxRetries: 2 }, ...config } as Config,
    env: {},
    clock: manualClock(),
  });
  const events: EngineEvent[] = [];
  session.on((e) => events.push(e));
  const result = await session.send('go');
  const reasons = events.filter((e) => e.type === 'retry-scheduled').map((e) => (e.type === 'retry-scheduled' ? e.reason : ''));
  return { result, reasons };
}

describe('RETRY-1 transport failures without a status are retried', () => {
  it('RETRY-1 a refused connection (network) is retried up to the retry cap, then the turn fails', async () => {
    const port = await closedPort();
    const { result, reasons } = await turnAgainst(`http://127.0.0.1:${port}/v1`);
    expect(reasons).toEqual(['network', 'network']);
    expect(result).toMatchObject({ stopReason: 'failed', retries: 2, modelCalls: 3, error: { kind: 'network' } });
  });

  it('RETRY-1 a request that times out (timeout) is retried up to the retry cap, then the turn fails', async () => {
    const port = await silentServer();
    const { result, reasons } = await turnAgainst(`http://127.0.0.1:${port}/v1`, {
      retry: { maxRetries: 2, firstByteTimeoutSeconds: 0.2 },
    } as Partial<Config>);
    expect(reasons).toEqual(['timeout', 'timeout']);
    expect(result).toMatchObject({ stopReason: 'failed', retries: 2, modelCalls: 3, error: { kind: 'timeout' } });
  });
});
