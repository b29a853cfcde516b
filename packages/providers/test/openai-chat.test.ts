import type { ChatEvent, StreamingChatClient } from '@crystal/core';
import { ProviderError, userMessage } from '@crystal/core';
import { FakeProvider, type FakeReply, serveRecorded } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient } from '../src/index.js';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function client(replies: FakeReply[], model: Record<string, unknown> = {}, protocol: 'openai' | 'deepseek' = 'openai') {
  fake = await FakeProvider.start({ replies });
  return createChatClient({ name: 'acme', protocol, baseUri: fake.baseUri, apiKey: 'sk-test' }, { id: 'acme-1', ...model });
}

async function collect(c: StreamingChatClient, text = 'hi'): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  for await (const event of c.stream({ messages: [userMessage(text)] })) events.push(event);
  return events;
}

async function failure(c: StreamingChatClient): Promise<ProviderError> {
  try {
    await collect(c);
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  throw new Error('expected the stream to fail');
}

describe('openai-chat adapter against the fake server', () => {
  it('streams text and reasoning deltas, usage and the finish with its raw value', async () => {
    const c = await client([{ reasoning: 'think hard', text: 'Hello there', usage: { input: 11, output: 4, reasoning: 2 } }]);
    const events = await collect(c);
    expect(
      events
        .filter((e) => e.type === 'text-delta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('Hello there');
    expect(
      events
        .filter((e) => e.type === 'reasoning-delta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('think hard');
    expect(events).toContainEqual({ type: 'usage', usage: { inputTokens: 11, outputTokens: 4, reasoningTokens: 2 } });
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop', raw: 'stop' });
  });

  it('sends the model, the messages, stream options, the bearer key and the user agent', async () => {
    const c = await client([{ text: 'ok' }], { maxTokens: 77, temperature: 0.3 });
    await collect(c, 'what is 2+2?');
    const request = fake?.requests[0];
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.headers['user-agent']).toBe('Crystal Code');
    expect(request?.body).toMatchObject({
      model: 'acme-1',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 77,
      temperature: 0.3,
      messages: [{ role: 'user', content: 'what is 2+2?' }],
    });
  });

  it('assembles several tool calls whose arguments arrive split across chunks', async () => {
    const c = await client([
      {
        text: 'Let me look.',
        toolCalls: [
          { id: 'call_a', name: 'read', arguments: { path: 'src/index.ts', offset: 10 }, chunks: 4 },
          { id: 'call_b', name: 'glob', arguments: '{"pattern":"**/*.md"}', chunks: 3 },
        ],
      },
    ]);
    const events = await collect(c);
    const calls = events.filter((e) => e.type === 'tool-call');
    expect(calls).toEqual([
      {
        type: 'tool-call',
        id: 'call_a',
        name: 'read',
        arguments: '{"path":"src/index.ts","offset":10}',
        input: { path: 'src/index.ts', offset: 10 },
      },
      { type: 'tool-call', id: 'call_b', name: 'glob', arguments: '{"pattern":"**/*.md"}', input: { pattern: '**/*.md' } },
    ]);
    expect(events.filter((e) => e.type === 'tool-call-delta').length).toBeGreaterThanOrEqual(7);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls', raw: 'tool_calls' });
  });

  it('normalises length and content_filter and keeps an unknown raw finish value', async () => {
    for (const [raw, reason] of [
      ['length', 'length'],
      ['content_filter', 'content_filter'],
      ['weird_reason', 'other'],
    ] as const) {
      const c = await client([{ text: 'x', finish: raw }]);
      const events = await collect(c);
      expect(events.at(-1)).toEqual({ type: 'finish', reason, raw });
      await fake?.close();
      fake = undefined;
    }
  });

  it('maps a 401 to a non-retryable auth error naming the provider', async () => {
    const c = await client([{ error: { status: 401, message: 'Incorrect API key provided' } }]);
    const error = await failure(c);
    expect(error.kind).toBe('auth');
    expect(error.retryable).toBe(false);
    expect(error.status).toBe(401);
    expect(error.message).toContain('acme');
    expect(error.message).toContain('Incorrect API key provided');
  });

  it('maps a 429 with retry-after-ms to a retryable rate limit carrying the delay', async () => {
    const c = await client([{ error: { status: 429, headers: { 'retry-after-ms': '300' }, message: 'slow down' } }]);
    const error = await failure(c);
    expect(error).toMatchObject({ kind: 'rate_limit', status: 429, retryAfterMs: 300 });
    expect(error.retryable).toBe(true);
  });

  it('maps quota and context-overflow error bodies to their own non-retryable kinds', async () => {
    let c = await client([
      {
        error: {
          status: 429,
          body: { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } },
        },
      },
    ]);
    expect((await failure(c)).kind).toBe('quota');
    await fake?.close();
    c = await client([
      {
        error: {
          status: 400,
          body: { error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } },
        },
      },
    ]);
    const overflow = await failure(c);
    expect(overflow.kind).toBe('context_overflow');
    expect(overflow.retryable).toBe(false);
  });

  it('reports a stream cut mid-way as a retryable incomplete_stream', async () => {
    const c = await client([{ text: 'one two three four five six', dropAfter: 3 }]);
    const error = await failure(c);
    expect(error.kind).toBe('incomplete_stream');
    expect(error.retryable).toBe(true);
  });

  it('reports a stream that ends without a finish as incomplete_stream', async () => {
    const c = await client([{ text: 'no finish here', finish: null }]);
    expect((await failure(c)).kind).toBe('incomplete_stream');
  });

  it('replays DeepSeek reasoning_content on assistant messages', async () => {
    fake = await FakeProvider.start({ replies: [{ text: 'ok' }] });
    const c = await createChatClient(
      { name: 'ds', protocol: 'deepseek', baseUri: fake.baseUri, apiKey: 'k' },
      { id: 'deepseek-flash' },
    );
    const stream = c.stream({
      messages: [
        userMessage('q1'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'thought' },
            { type: 'text', text: 'a1' },
          ],
        },
        userMessage('q2'),
      ],
    });
    for await (const _ of stream) {
      // drain
    }
    expect((fake.requests[0]?.body as { messages: unknown[] }).messages[1]).toEqual({
      role: 'assistant',
      content: 'a1',
      reasoning_content: 'thought',
    });
  });

  it('stops at once with an AbortError when the signal aborts mid-stream', async () => {
    fake = await FakeProvider.start({ replies: [{ textTokens: 200, delayMs: 5 }] });
    const c = await createChatClient({ name: 'acme', protocol: 'openai', baseUri: fake.baseUri, apiKey: 'k' }, { id: 'm' });
    const controller = new AbortController();
    let seen = 0;
    const run = async () => {
      for await (const event of c.stream({ messages: [userMessage('go')] }, controller.signal)) {
        if (event.type === 'text-delta' && ++seen === 3) controller.abort();
      }
    };
    await expect(run()).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toBe(3);
  });
});

/** A Chat Completions body from these chunks, framed as the wire frames it. */
function sseBody(chunks: readonly unknown[], done = true): Buffer {
  const lines = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`);
  return Buffer.from(`${lines.join('')}${done ? 'data: [DONE]\n\n' : ''}`);
}

async function replayBody(body: Buffer): Promise<{ events: ChatEvent[]; notes: string[] }> {
  const server = await serveRecorded(body, 'text/event-stream');
  const notes: string[] = [];
  try {
    const c = await createChatClient(
      { name: 'gw', protocol: 'openai', baseUri: server.baseUri, apiKey: 'k' },
      { id: 'm' },
      { debug: (text) => notes.push(text) },
    );
    return { events: await collect(c), notes };
  } finally {
    await server.close();
  }
}

const call = (fn: Record<string, string>, id = 'c1') => ({
  choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id, function: fn }] } }],
});

describe('openai-chat decoding of what gateways really send (issue 14 items 8-9)', () => {
  it('WIRE-1 a tool name repeated in a later delta is set, not appended', async () => {
    const { events } = await replayBody(
      sseBody([
        call({ name: 'llm_version', arguments: '' }),
        call({ name: 'llm_version', arguments: '{}' }),
        { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      ]),
    );
    expect(events.filter((e) => e.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'c1', name: 'llm_version', arguments: '{}', input: {} },
    ]);
  });

  it('RETRY-1 a stream ended by [DONE] without finish_reason is complete: tool_calls inferred from streamed calls, with a debug note', async () => {
    const { events, notes } = await replayBody(sseBody([call({ name: 'lookup', arguments: '{"q":1}' })]));
    expect(events.filter((e) => e.type === 'tool-call').map((e) => e.type === 'tool-call' && e.name)).toEqual(['lookup']);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls', raw: 'tool_calls' });
    expect(notes).toEqual([expect.stringContaining("no finish_reason; inferred 'tool_calls'")]);
  });

  it('RETRY-1 a text stream ended by [DONE] without finish_reason is a stop; without [DONE] it stays incomplete', async () => {
    const text = [{ choices: [{ index: 0, delta: { content: 'hello' } }] }];
    const { events, notes } = await replayBody(sseBody(text));
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop', raw: 'stop' });
    expect(notes).toHaveLength(1);
    const server = await serveRecorded(sseBody(text, false), 'text/event-stream');
    try {
      const c = await createChatClient({ name: 'gw', protocol: 'openai', baseUri: server.baseUri, apiKey: 'k' }, { id: 'm' });
      expect((await failure(c)).kind).toBe('incomplete_stream');
    } finally {
      await server.close();
    }
  });
});
