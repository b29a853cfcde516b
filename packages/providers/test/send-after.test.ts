/**
 * Issue 22 / REL-1: `ChatRequest.sendAfter`. The engine hands the first request of a turn the
 * save of the user message; every wire opens its connection and builds the request meanwhile,
 * and writes nothing (not even the headers) until that save settles. Real HTTP to the fake
 * provider: a request it never received was never written.
 */
import type { ChatEvent } from '@crystal/core';
import { ProviderError } from '@crystal/core';
import { FakeProvider } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type ClientOptions, createChatClient, createTransport, type Protocol } from '../src/index.js';
import { collect } from './stream-helpers.js';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function client(protocol: Protocol, options: ClientOptions = {}, noAnswer = false) {
  fake = await FakeProvider.start({
    wire: protocol,
    replies: [noAnswer ? { noAnswer: true } : { text: 'one two three', usage: { input: 1, output: 3 } }],
  });
  return createChatClient(
    { name: 'acme', protocol, baseUri: fake.baseUriFor(protocol), apiKey: 'k' },
    { id: 'acme-model' },
    { transport: createTransport({ env: {} }), ...options },
  );
}

/** A promise settled by hand. */
function gate(): { promise: Promise<void>; open(): void; fail(error: Error): void } {
  let open = (): void => {};
  let fail = (_error: Error): void => {};
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  // The transport handles a rejection; this keeps a test that never reaches it quiet too.
  promise.catch(() => undefined);
  return { promise, open, fail };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !predicate(); i++) await sleep(10);
  expect(predicate()).toBe(true);
}

describe('issue 22 REL-1 a request waits for sendAfter', () => {
  for (const protocol of ['openai', 'deepseek', 'responses', 'anthropic', 'gemini', 'ollama'] as const) {
    it(`issue 22 REL-1 ${protocol}: the connection opens while sendAfter is pending, the request is written only once it settles`, async () => {
      const c = await client(protocol);
      const saved = gate();
      const events = collect(c, { sendAfter: saved.promise });
      await until(() => (fake as FakeProvider).connections === 1);
      // Connected, and nothing written: had the headers gone, the server would have the request by now.
      await sleep(150);
      expect((fake as FakeProvider).requests).toHaveLength(0);
      saved.open();
      expect((await events).at(-1)).toMatchObject({ type: 'finish' });
      expect((fake as FakeProvider).requests).toHaveLength(1);
    });
  }

  it('issue 22 a sendAfter that rejects still lets the request go (it settles either way)', async () => {
    const c = await client('openai');
    const saved = gate();
    const events = collect(c, { sendAfter: saved.promise });
    await until(() => (fake as FakeProvider).connections === 1);
    saved.fail(new Error('disk full'));
    expect((await events).at(-1)).toMatchObject({ type: 'finish' });
    expect((fake as FakeProvider).requests).toHaveLength(1);
  });

  it('issue 22 a request cancelled while it waits is never written, and the stream ends with an AbortError', async () => {
    const c = await client('anthropic');
    const saved = gate();
    const abort = new AbortController();
    const events: Promise<ChatEvent[]> = collect(c, { sendAfter: saved.promise }, abort.signal);
    await until(() => (fake as FakeProvider).connections === 1);
    abort.abort();
    const error = await events.then(
      () => undefined,
      (e: unknown) => e,
    );
    // The contract's cancel: an AbortError, as for any cancelled stream.
    expect((error as Error).name).toBe('AbortError');
    saved.open();
    await sleep(150);
    expect((fake as FakeProvider).requests).toHaveLength(0);
  });

  it('REL-5 issue 22 the first-byte timeout runs from the write, not from the connection: a long wait is not a timeout', async () => {
    const c = await client('openai', { firstByteTimeoutMs: 150 });
    const saved = gate();
    const events = collect(c, { sendAfter: saved.promise });
    await until(() => (fake as FakeProvider).connections === 1);
    await sleep(400);
    saved.open();
    expect((await events).at(-1)).toMatchObject({ type: 'finish' });
  });

  it('REL-5 issue 22 a request written after a wait still times out when no answer comes', async () => {
    const c = await client('openai', { firstByteTimeoutMs: 150 }, true);
    const saved = gate();
    const started = Date.now();
    const events = collect(c, { sendAfter: saved.promise }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await sleep(300);
    saved.open();
    const error = (await events) as ProviderError;
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('retry.firstByteTimeoutSeconds');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300 + 150 - 20);
  });
});
