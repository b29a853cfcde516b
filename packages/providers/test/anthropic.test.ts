import type { ChatEvent, ChatMessage, ContentPart, StreamingChatClient } from '@crystal/core';
import { ProviderError, systemMessage, userMessage } from '@crystal/core';
import { anthropicWire, FakeProvider, type FakeReply, sse, type WireEncoder } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient, type ModelSettings } from '../src/index.js';
import { PNG_BASE64 } from './contract/suite.js';
import { collect, failure } from './stream-helpers.js';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function client(
  replies: FakeReply[],
  model: Partial<ModelSettings> = {},
  wire: WireEncoder | string = 'anthropic',
  apiKey = 'sk-ant-test',
): Promise<StreamingChatClient> {
  await fake?.close();
  fake = await FakeProvider.start({ wire, replies });
  return createChatClient(
    { name: 'claude', protocol: 'anthropic', baseUri: fake.baseUriFor('anthropic'), apiKey },
    { id: 'claude-test', imageInput: true, ...model },
  );
}

const body = (i = 0) =>
  fake?.requests[i]?.body as Record<string, unknown> & { messages: Array<{ role: string; content: unknown[] }> };

/** The assistant message the engine would keep from these events (one reasoning part, as turn.ts builds it). */
function assistantFrom(events: ChatEvent[]): ChatMessage {
  let reasoning = '';
  let text = '';
  let state: { format: string; data: string } | undefined;
  const calls: ContentPart[] = [];
  for (const e of events) {
    if (e.type === 'reasoning-delta') reasoning += e.text;
    else if (e.type === 'text-delta') text += e.text;
    else if (e.type === 'reasoning-state') state = { format: e.format, data: e.data };
    else if (e.type === 'tool-call') calls.push({ type: 'tool-call', id: e.id, name: e.name, arguments: e.arguments });
  }
  const content: ContentPart[] = [];
  if (reasoning !== '' || state) content.push({ type: 'reasoning', text: reasoning, ...(state ? { state } : {}) });
  if (text !== '') content.push({ type: 'text', text });
  return { role: 'assistant', content: [...content, ...calls] };
}

/** A wire that streams hand-written Anthropic events (shapes the scripted fake does not produce). */
function rawWire(events: Array<Record<string, unknown>>): WireEncoder {
  return {
    name: 'anthropic-raw',
    errorBody: anthropicWire().errorBody,
    encodeStream: () => ({ contentType: 'text/event-stream', chunks: events.map((e) => sse(e, e.type as string)) }),
  };
}

/** The scripted Anthropic stream cut after `keep` events and closed by an `error` event. */
function midStreamErrorWire(keep: number, error: { type: string; message: string }): WireEncoder {
  const base = anthropicWire();
  return {
    name: 'anthropic-mid-error',
    errorBody: base.errorBody,
    encodeStream: (reply, request) => {
      const encoded = base.encodeStream(reply, request);
      return {
        contentType: encoded.contentType,
        chunks: [...encoded.chunks.slice(0, keep), sse({ type: 'error', error }, 'error')],
      };
    },
  };
}

describe('anthropic adapter against the fake server', () => {
  it('posts to v1/messages with x-api-key, anthropic-version, the user agent and no Authorization', async () => {
    const c = await client([{ text: 'ok' }]);
    await collect(c);
    const request = fake?.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/messages');
    expect(request?.headers['x-api-key']).toBe('sk-ant-test');
    expect(request?.headers['anthropic-version']).toBe('2023-06-01');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['user-agent']).toBe('Crystal Code');
    expect(request?.headers.authorization).toBeUndefined();
  });

  it('sends no x-api-key when the key is empty', async () => {
    const c = await client([{ text: 'ok' }], {}, 'anthropic', '');
    await collect(c);
    expect(fake?.requests[0]?.headers['x-api-key']).toBeUndefined();
    expect(fake?.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('sends model, max_tokens (8192 by default), stream, temperature and the messages as content blocks', async () => {
    let c = await client([{ text: 'ok' }], { temperature: 0.2 });
    await collect(c, { messages: [userMessage('what is 2+2?')] });
    expect(body()).toEqual({
      model: 'claude-test',
      max_tokens: 8192,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is 2+2?' }] }],
      stream: true,
      temperature: 0.2,
    });
    c = await client([{ text: 'ok' }], { maxTokens: 64000 });
    await collect(c);
    expect(body().max_tokens).toBe(64000);
    expect(body()).not.toHaveProperty('temperature');
  });

  it('puts the system messages in the top-level system field, never in messages', async () => {
    const c = await client([{ text: 'ok' }]);
    await collect(c, {
      messages: [systemMessage('You are Crystal.'), systemMessage('Be brief.'), userMessage('hello')],
    });
    expect(body().system).toBe('You are Crystal.\n\nBe brief.');
    expect(body().messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]);
    await collect(c, { messages: [userMessage('no system')] });
    expect(body(1)).not.toHaveProperty('system');
  });

  it('sends tools as name, description and input_schema', async () => {
    const c = await client([{ text: 'ok' }]);
    const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    await collect(c, { tools: [{ name: 'read', description: 'Read a file', parameters }] });
    expect(body().tools).toEqual([{ name: 'read', description: 'Read a file', input_schema: parameters }]);
  });

  describe('thinking gears', () => {
    const budgets = [
      ['minimal', 1024],
      ['low', 2048],
      ['medium', 8192],
      ['high', 16384],
      ['maximum', 32000],
    ] as const;
    for (const [gear, budget] of budgets) {
      it(`maps ${gear} to budget_tokens ${budget} and drops the temperature`, async () => {
        const c = await client([{ text: 'ok' }], { thinking: true, maxTokens: 64000, temperature: 0.5 });
        await collect(c, { thinking: gear });
        expect(body().thinking).toEqual({ type: 'enabled', budget_tokens: budget });
        expect(body()).not.toHaveProperty('temperature');
      });
    }

    it('caps the budget below max_tokens, never under 1024, and omits thinking when max_tokens is 1024 or less', async () => {
      let c = await client([{ text: 'ok' }], { thinking: true, maxTokens: 10000 });
      await collect(c, { thinking: 'high' });
      expect(body().thinking).toEqual({ type: 'enabled', budget_tokens: 9999 });
      await collect(c, { thinking: 'low' });
      expect(body(1).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
      c = await client([{ text: 'ok' }], { thinking: true, maxTokens: 1500 });
      await collect(c, { thinking: 'maximum' });
      expect(body().thinking).toEqual({ type: 'enabled', budget_tokens: 1499 });
      c = await client([{ text: 'ok' }], { thinking: true, maxTokens: 1024, temperature: 0.7 });
      await collect(c, { thinking: 'minimal' });
      expect(body()).not.toHaveProperty('thinking');
      expect(body().temperature).toBe(0.7);
      c = await client([{ text: 'ok' }], { thinking: true });
      await collect(c, { thinking: 'maximum' });
      expect(body()).toMatchObject({ max_tokens: 8192, thinking: { type: 'enabled', budget_tokens: 8191 } });
    });

    it('omits thinking for off, default, a model without thinking and a gear the model does not list', async () => {
      let c = await client([{ text: 'ok' }], { thinking: true, maxTokens: 64000 });
      await collect(c, { thinking: 'off' });
      await collect(c, { thinking: 'default' });
      await collect(c);
      for (const i of [0, 1, 2]) expect(body(i)).not.toHaveProperty('thinking');
      c = await client([{ text: 'ok' }], { thinking: false, maxTokens: 64000 });
      await collect(c, { thinking: 'high' });
      expect(body()).not.toHaveProperty('thinking');
      c = await client([{ text: 'ok' }], { thinking: true, maxTokens: 64000, thinkingEfforts: ['low', 'high'] });
      await collect(c, { thinking: 'medium' });
      expect(body()).not.toHaveProperty('thinking');
      await collect(c, { thinking: 'high' });
      expect(body(1).thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    });

    it('omits thinking while the last tool turn carries no signed thinking block (the API would refuse it)', async () => {
      const c = await client([{ text: 'ok' }], { thinking: true, maxTokens: 64000 });
      const toolTurn = (reasoning: ContentPart[]): ChatMessage[] => [
        userMessage('list'),
        { role: 'assistant', content: [...reasoning, { type: 'tool-call', id: 'toolu_1', name: 'ls', arguments: '{}' }] },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', callId: 'toolu_1', name: 'ls', content: [{ type: 'text', text: 'a' }], isError: false },
          ],
        },
      ];
      await collect(c, { thinking: 'high', messages: toolTurn([]) });
      expect(body()).not.toHaveProperty('thinking');
      const signed: ContentPart = { type: 'reasoning', text: 'hm', state: { format: 'anthropic-thinking', data: 'sig' } };
      await collect(c, { thinking: 'high', messages: toolTurn([signed]) });
      expect(body(1).thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    });
  });

  it('MODEL-3 passes service_tier through and refuses speed at createClient', async () => {
    const c = await client([{ text: 'ok' }], { serviceTier: 'standard_only' });
    await collect(c);
    expect(body().service_tier).toBe('standard_only');
    await expect(
      createChatClient({ name: 'claude', protocol: 'anthropic', baseUri: 'http://127.0.0.1:9/' }, { id: 'm', speed: 'fast' }),
    ).rejects.toMatchObject({ kind: 'unsupported', message: expect.stringContaining('speed') });
  });

  it('streams a thinking signature as reasoning-state and replays it as a thinking block on the next request', async () => {
    const c = await client(
      [{ reasoning: 'Let me think.', reasoningSignature: 'EqQBCkgIARABGAIiQL2', text: 'Four.' }, { text: 'ok' }],
      {
        thinking: true,
        maxTokens: 32000,
      },
    );
    const first = await collect(c, { thinking: 'medium', messages: [userMessage('2+2?')] });
    expect(first.filter((e) => e.type === 'reasoning-state')).toEqual([
      { type: 'reasoning-state', format: 'anthropic-thinking', data: 'EqQBCkgIARABGAIiQL2' },
    ]);
    const stateAt = first.findIndex((e) => e.type === 'reasoning-state');
    expect(stateAt).toBeGreaterThan(first.findLastIndex((e) => e.type === 'reasoning-delta'));
    expect(stateAt).toBeLessThan(first.findIndex((e) => e.type === 'text-delta'));
    await collect(c, { thinking: 'medium', messages: [userMessage('2+2?'), assistantFrom(first), userMessage('and 3+3?')] });
    expect(body(1).messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Let me think.', signature: 'EqQBCkgIARABGAIiQL2' },
        { type: 'text', text: 'Four.' },
      ],
    });
  });

  it('gives a thinking block the fixed fake signature when the reply scripts none', async () => {
    const c = await client([{ reasoning: 'hmm', text: 'ok' }]);
    const events = await collect(c);
    expect(events).toContainEqual({ type: 'reasoning-state', format: 'anthropic-thinking', data: 'fake-thinking-signature' });
  });

  it('replays thinking first, then text, then tool_use, and drops reasoning without an Anthropic signature', async () => {
    const c = await client([{ text: 'ok' }]);
    await collect(c, {
      messages: [
        userMessage('go'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Reading.' },
            { type: 'tool-call', id: 'toolu_a', name: 'read', arguments: '{"path":"a.ts"}' },
            { type: 'reasoning', text: 'signed', state: { format: 'anthropic-thinking', data: 'sig-1' } },
            { type: 'reasoning', text: 'unsigned' },
            { type: 'reasoning', text: 'foreign', state: { format: 'gemini-thought-signature', data: 'x' } },
          ],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', callId: 'toolu_a', name: 'read', content: [{ type: 'text', text: 'x' }], isError: false },
          ],
        },
      ],
    });
    expect(body().messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'signed', signature: 'sig-1' },
        { type: 'text', text: 'Reading.' },
        { type: 'tool_use', id: 'toolu_a', name: 'read', input: { path: 'a.ts' } },
      ],
    });
  });

  it('WIRE-4 sends a tool result with text and image inside a user message, byte for byte', async () => {
    const c = await client([{ text: 'I see it' }]);
    await collect(c, {
      messages: [
        userMessage('look'),
        { role: 'assistant', content: [{ type: 'tool-call', id: 'toolu_s', name: 'screenshot', arguments: '{}' }] },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              callId: 'toolu_s',
              name: 'screenshot',
              isError: false,
              content: [
                { type: 'text', text: 'captured' },
                { type: 'image', mime: 'image/png', data: PNG_BASE64 },
              ],
            },
          ],
        },
      ],
    });
    expect(body().messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_s', name: 'screenshot', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_s',
            content: [
              { type: 'text', text: 'captured' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
            ],
            is_error: false,
          },
        ],
      },
    ]);
  });

  it('merges consecutive tool results and a following user message into one user message, tool results first', async () => {
    const c = await client([{ text: 'ok' }]);
    const result = (callId: string, text: string, isError = false): ChatMessage => ({
      role: 'tool',
      content: [{ type: 'tool-result', callId, name: 'run', content: [{ type: 'text', text }], isError }],
    });
    await collect(c, {
      messages: [
        userMessage('run both'),
        {
          role: 'assistant',
          content: [
            { type: 'tool-call', id: 'toolu_1', name: 'run', arguments: '{"cmd":"a"}' },
            { type: 'tool-call', id: 'toolu_2', name: 'run', arguments: '{"cmd":"b"}' },
          ],
        },
        result('toolu_1', 'A'),
        result('toolu_2', 'B failed', true),
        userMessage('also, hurry'),
      ],
    });
    const messages = body().messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'A' }], is_error: false },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'B failed' }], is_error: true },
      { type: 'text', text: 'also, hurry' },
    ]);
  });

  it('merges consecutive user messages and sends a user image by URL', async () => {
    const c = await client([{ text: 'ok' }]);
    await collect(c, {
      messages: [userMessage('one'), userMessage([{ type: 'image', mime: 'image/jpeg', uri: 'https://example.com/a.jpg' }])],
    });
    expect(body().messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
        ],
      },
    ]);
  });

  it('WIRE-5 refuses an image on a system or assistant message before sending', async () => {
    const c = await client([{ text: 'never' }]);
    const image = { type: 'image' as const, mime: 'image/png', data: PNG_BASE64 };
    let error = await failure(c, { messages: [{ role: 'system', content: [image] }, userMessage('hi')] });
    expect(error.kind).toBe('unsupported');
    expect(error.message).toContain('system');
    error = await failure(c, { messages: [userMessage('hi'), { role: 'assistant', content: [image] }, userMessage('and?')] });
    expect(error.kind).toBe('unsupported');
    expect(error.message).toContain('assistant');
    expect(fake?.requests).toHaveLength(0);
  });

  it('streams tool calls as deltas and complete calls with the raw finish tool_use', async () => {
    const c = await client([
      {
        text: 'Looking.',
        toolCalls: [{ id: 'toolu_x', name: 'read', arguments: { path: 'a.ts' }, chunks: 3 }],
        usage: { input: 9, output: 4 },
      },
    ]);
    const events = await collect(c);
    expect(events.filter((e) => e.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'toolu_x', name: 'read', arguments: '{"path":"a.ts"}', input: { path: 'a.ts' } },
    ]);
    const deltas = events.filter((e) => e.type === 'tool-call-delta');
    expect(deltas[0]).toMatchObject({ index: 0, id: 'toolu_x', name: 'read' });
    expect(deltas.map((d) => (d as { argumentsDelta: string }).argumentsDelta).join('')).toBe('{"path":"a.ts"}');
    expect(events.slice(-2)).toEqual([
      { type: 'usage', usage: { inputTokens: 9, outputTokens: 4 } },
      { type: 'finish', reason: 'tool_calls', raw: 'tool_use' },
    ]);
  });

  it('normalises stop_sequence to stop and keeps the raw value', async () => {
    const c = await client([{ text: 'x', finish: 'stop_sequence' }]);
    expect((await collect(c)).at(-1)).toEqual({ type: 'finish', reason: 'stop', raw: 'stop_sequence' });
  });

  it('decodes cache usage, redacted thinking and a tool_use whose input came whole', async () => {
    const c = await client(
      [{}],
      {},
      rawWire([
        {
          type: 'message_start',
          message: {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            content: [],
            usage: { input_tokens: 5, cache_creation_input_tokens: 20, cache_read_input_tokens: 100, output_tokens: 1 },
          },
        },
        { type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p' } },
        { type: 'content_block_stop', index: 0 },
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'tool_use', id: 'toolu_w', name: 'now', input: { tz: 'UTC' } },
        },
        { type: 'content_block_stop', index: 1 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 7 } },
        { type: 'message_stop' },
      ]),
    );
    const events = await collect(c);
    expect(events).toEqual([
      { type: 'reasoning-state', format: 'anthropic-redacted-thinking', data: 'EmwKAhgBEgy3va3p' },
      { type: 'tool-call-delta', index: 0, id: 'toolu_w', name: 'now', argumentsDelta: '' },
      { type: 'tool-call', id: 'toolu_w', name: 'now', arguments: '{"tz":"UTC"}', input: { tz: 'UTC' } },
      { type: 'usage', usage: { inputTokens: 125, outputTokens: 7, cachedInputTokens: 100 } },
      { type: 'finish', reason: 'tool_calls', raw: 'tool_use' },
    ]);
    await collect(c, { messages: [userMessage('time?'), assistantFrom(events), userMessage('thanks')] });
    expect(body(1).messages[1]?.content[0]).toEqual({ type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p' });
  });

  it('reports a mid-stream overloaded_error event as a retryable server error', async () => {
    const c = await client(
      [{ text: 'one two three four five' }],
      {},
      midStreamErrorWire(5, { type: 'overloaded_error', message: 'Overloaded' }),
    );
    const seen: ChatEvent[] = [];
    let error: unknown;
    try {
      for await (const event of c.stream({ messages: [userMessage('hi')] })) seen.push(event);
    } catch (e) {
      error = e;
    }
    expect(seen.filter((e) => e.type === 'text-delta').length).toBeGreaterThan(0);
    expect(seen.some((e) => e.type === 'finish')).toBe(false);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: 'server', code: 'overloaded_error', provider: 'claude' });
    expect((error as ProviderError).retryable).toBe(true);
    expect((error as ProviderError).message).toContain('Overloaded');
  });

  it('reports a mid-stream rate_limit_error event as a retryable rate limit', async () => {
    const c = await client([{ text: 'one two' }], {}, midStreamErrorWire(3, { type: 'rate_limit_error', message: 'Slow down' }));
    const error = await failure(c);
    expect(error).toMatchObject({ kind: 'rate_limit', code: 'rate_limit_error' });
    expect(error.retryable).toBe(true);
  });

  it('RETRY-1 classifies HTTP 529 overloaded_error as a retryable server error', async () => {
    const c = await client([{ error: { status: 529, message: 'Overloaded', headers: { 'retry-after': '2' } } }]);
    const error = await failure(c);
    expect(fake?.requests[0]?.body).toBeDefined();
    expect(error).toMatchObject({ kind: 'server', status: 529, code: 'overloaded_error', retryAfterMs: 2000 });
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('Overloaded');
  });

  it('RETRY-6 maps billing_error and the credit-balance message to quota', async () => {
    let c = await client([{ error: { status: 402, message: 'Your payment method was declined.' } }]);
    expect(await failure(c)).toMatchObject({ kind: 'quota', code: 'billing_error' });
    c = await client([
      {
        error: {
          status: 400,
          body: {
            type: 'error',
            error: { type: 'invalid_request_error', message: 'Your credit balance is too low to access the Anthropic API.' },
          },
        },
      },
    ]);
    const error = await failure(c);
    expect(error).toMatchObject({ kind: 'quota', status: 400 });
    expect(error.retryable).toBe(false);
  });

  it('RETRY-6 keeps an ordinary invalid_request_error a non-retryable bad_request', async () => {
    const c = await client([{ error: { status: 400, message: 'messages: roles must alternate' } }]);
    const error = await failure(c);
    expect(error).toMatchObject({ kind: 'bad_request', code: 'invalid_request_error' });
    expect(error.retryable).toBe(false);
  });

  it('reports a stream without message_delta or message_stop as incomplete_stream', async () => {
    const c = await client([{ text: 'no finish', finish: null }]);
    expect((await failure(c)).kind).toBe('incomplete_stream');
  });
});
