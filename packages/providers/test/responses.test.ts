import type { ChatEvent, ChatMessage, StreamingChatClient, ThinkingEffort } from '@crystal/core';
import { ProviderError, systemMessage, userMessage } from '@crystal/core';
import { FakeProvider, type FakeReply, openAiResponsesWire, sse, type WireEncoder } from '@crystal/testkit';
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
  wire: WireEncoder | string = 'responses',
): Promise<StreamingChatClient> {
  await fake?.close();
  fake = await FakeProvider.start({ wire, replies, whenExhausted: 'error' });
  return createChatClient(
    { name: 'acme', protocol: 'responses', baseUri: fake.baseUriFor('responses'), apiKey: 'sk-resp' },
    { id: 'gpt-acme', ...model },
  );
}

function body(index = 0): Record<string, unknown> {
  return fake?.requests[index]?.body as Record<string, unknown>;
}

/** A wire that streams the real fake's events for a reply, then `tail` instead of its finish event. */
function wireEndingWith(tail: Array<Record<string, unknown>>): WireEncoder {
  const base = openAiResponsesWire();
  return {
    ...base,
    encodeStream(reply, request) {
      const encoded = base.encodeStream({ ...reply, finish: null }, request);
      return { ...encoded, chunks: [...encoded.chunks, ...tail.map((event) => sse(event, event.type as string))] };
    },
  };
}

/** A wire that streams exactly these events. */
function wireOf(events: Array<Record<string, unknown>>): WireEncoder {
  return {
    ...openAiResponsesWire(),
    encodeStream: () => ({ contentType: 'text/event-stream', chunks: events.map((event) => sse(event, event.type as string)) }),
  };
}

const completed = { type: 'response.completed', response: { id: 'resp_1', status: 'completed', output: [], usage: null } };

describe('responses adapter against the fake server', () => {
  it('posts to /v1/responses with the bearer key, the user agent and a stateless streaming body', async () => {
    const c = await client([{ text: 'ok' }], { maxTokens: 900, temperature: 0.2, serviceTier: 'flex' });
    const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    await collect(c, { tools: [{ name: 'read', description: 'Read a file', parameters }] });
    const request = fake?.requests[0];
    expect(request?.path).toBe('/v1/responses');
    expect(request?.method).toBe('POST');
    expect(request?.headers.authorization).toBe('Bearer sk-resp');
    expect(request?.headers['user-agent']).toBe('Crystal Code');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.body).toEqual({
      model: 'gpt-acme',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      tools: [{ type: 'function', name: 'read', description: 'Read a file', parameters, strict: false }],
      stream: true,
      store: false,
      max_output_tokens: 900,
      temperature: 0.2,
      service_tier: 'flex',
    });
  });

  it('puts the system messages into instructions and never into input', async () => {
    const c = await client([{ text: 'ok' }, { text: 'ok' }]);
    await collect(c, { messages: [systemMessage('You are terse.'), userMessage('hi'), systemMessage('Answer in French.')] });
    expect(body().instructions).toBe('You are terse.\n\nAnswer in French.');
    expect(body().input).toEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }]);
    await collect(c);
    expect(body(1)).not.toHaveProperty('instructions');
  });

  it('WIRE-4 encodes user text and images, assistant text, function calls and function call outputs as input items', async () => {
    const c = await client([{ text: 'done' }], { imageInput: true });
    const messages: ChatMessage[] = [
      userMessage([
        { type: 'text', text: 'compare these' },
        { type: 'image', mime: 'image/png', data: PNG_BASE64 },
        { type: 'image', mime: 'image/jpeg', uri: 'https://example.com/b.jpg' },
      ]),
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me ' },
          { type: 'text', text: 'look.' },
          { type: 'tool-call', id: 'call_a', name: 'read', arguments: '{"path":"a.txt"}' },
          { type: 'tool-call', id: 'call_b', name: 'screenshot', arguments: '{}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', callId: 'call_a', name: 'read', isError: false, content: [{ type: 'text', text: 'alpha' }] },
          {
            type: 'tool-result',
            callId: 'call_b',
            name: 'screenshot',
            isError: false,
            content: [
              { type: 'text', text: 'captured' },
              { type: 'image', mime: 'image/webp', data: 'UklGRg==' },
            ],
          },
        ],
      },
    ];
    await collect(c, { messages });
    expect(body().input).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'compare these' },
          { type: 'input_image', image_url: `data:image/png;base64,${PNG_BASE64}` },
          { type: 'input_image', image_url: 'https://example.com/b.jpg' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me look.' }] },
      { type: 'function_call', call_id: 'call_a', name: 'read', arguments: '{"path":"a.txt"}' },
      { type: 'function_call', call_id: 'call_b', name: 'screenshot', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_a', output: 'alpha' },
      {
        type: 'function_call_output',
        call_id: 'call_b',
        output: [
          { type: 'input_text', text: 'captured' },
          { type: 'input_image', image_url: 'data:image/webp;base64,UklGRg==' },
        ],
      },
    ]);
  });

  it('WIRE-5 refuses an image on a system or assistant message before sending', async () => {
    const image = { type: 'image' as const, mime: 'image/png', data: PNG_BASE64 };
    const c = await client([{ text: 'never' }], { imageInput: true });
    for (const messages of [
      [{ role: 'system' as const, content: [image] }, userMessage('hi')],
      [userMessage('hi'), { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'here' }, image] }],
    ]) {
      const error = await failure(c, { messages });
      expect(error.kind).toBe('unsupported');
      expect(error.message).toMatch(/system|assistant/);
    }
    expect(fake?.requests).toHaveLength(0);
  });

  it('round-trips reasoning: encrypted_content becomes reasoning state and is replayed on the next request', async () => {
    const c = await client(
      [
        {
          reasoning: 'I should read the file.',
          reasoningSignature: 'gAAAAB-encrypted-blob==',
          toolCalls: [{ id: 'call_r', name: 'read', arguments: { path: 'a.txt' } }],
          usage: { input: 40, output: 12, reasoning: 8 },
        },
        { text: 'It says alpha.' },
      ],
      { thinking: true },
    );
    const events = await collect(c, { thinking: 'high' });
    const states = events.filter((e) => e.type === 'reasoning-state');
    expect(states).toHaveLength(1);
    const state = states[0] as { format: string; data: string };
    expect(state.format).toBe('openai-responses-reasoning');
    expect(state.data).toContain('gAAAAB-encrypted-blob==');
    expect(events).toContainEqual({
      type: 'usage',
      usage: { inputTokens: 40, outputTokens: 12, reasoningTokens: 8, cachedInputTokens: 0 },
    });
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls', raw: 'completed' });

    // The transcript as the engine commits it: reasoning (with its state), then the call, then the result.
    const reasoning = events
      .filter((e) => e.type === 'reasoning-delta')
      .map((e) => (e as { text: string }).text)
      .join('');
    await collect(c, {
      thinking: 'high',
      messages: [
        userMessage('read a.txt'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: reasoning, state: { format: state.format, data: state.data } },
            { type: 'tool-call', id: 'call_r', name: 'read', arguments: '{"path":"a.txt"}' },
          ],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', callId: 'call_r', name: 'read', isError: false, content: [{ type: 'text', text: 'alpha' }] },
          ],
        },
      ],
    });
    expect(body(0).include).toEqual(['reasoning.encrypted_content']);
    expect(body(1).include).toEqual(['reasoning.encrypted_content']);
    expect((body(1).input as unknown[]).slice(1)).toEqual([
      {
        type: 'reasoning',
        id: 'rs_fake_1',
        summary: [{ type: 'summary_text', text: 'I should read the file.' }],
        encrypted_content: 'gAAAAB-encrypted-blob==',
      },
      { type: 'function_call', call_id: 'call_r', name: 'read', arguments: '{"path":"a.txt"}' },
      { type: 'function_call_output', call_id: 'call_r', output: 'alpha' },
    ]);
  });

  it('emits one reasoning state per reasoning item and replays the items in order', async () => {
    const c = await client(
      [{}],
      { thinking: true },
      wireOf([
        { type: 'response.created', response: { id: 'resp_1', status: 'in_progress' } },
        { type: 'response.reasoning_summary_text.delta', item_id: 'rs_a', output_index: 0, summary_index: 0, delta: 'one' },
        { type: 'response.reasoning_summary_text.delta', item_id: 'rs_a', output_index: 0, summary_index: 1, delta: 'two' },
        {
          type: 'response.output_item.done',
          output_index: 0,
          item: {
            id: 'rs_a',
            type: 'reasoning',
            summary: [
              { type: 'summary_text', text: 'one' },
              { type: 'summary_text', text: 'two' },
            ],
            encrypted_content: 'enc-a',
          },
        },
        {
          type: 'response.output_item.done',
          output_index: 1,
          item: { id: 'rs_b', type: 'reasoning', summary: [], encrypted_content: 'enc-b' },
        },
        { type: 'response.output_item.done', output_index: 2, item: { id: 'rs_c', type: 'reasoning', summary: [] } },
        { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 3, content_index: 0, delta: 'Answer.' },
        completed,
      ]),
    );
    const events = await collect(c);
    const reasoning = events.filter((e) => e.type === 'reasoning-delta').map((e) => (e as { text: string }).text);
    expect(reasoning.join('')).toBe('one\n\ntwo');
    const states = events.filter((e) => e.type === 'reasoning-state') as Array<{ format: string; data: string }>;
    expect(states).toHaveLength(2);
    const [first, second] = states as [{ format: string; data: string }, { format: string; data: string }];

    fake?.enqueue({ text: 'ok' });
    const replay = await createChatClient(
      { name: 'acme', protocol: 'responses', baseUri: fake?.baseUriFor('responses') ?? '', apiKey: 'k' },
      { id: 'gpt-acme', thinking: true },
    );
    await collect(replay, {
      messages: [
        userMessage('q'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'one\n\ntwo', state: first },
            { type: 'reasoning', text: '', state: second },
            { type: 'text', text: 'Answer.' },
          ],
        },
        userMessage('again'),
      ],
    });
    expect((body(1).input as unknown[]).slice(1, 4)).toEqual([
      {
        type: 'reasoning',
        id: 'rs_a',
        summary: [
          { type: 'summary_text', text: 'one' },
          { type: 'summary_text', text: 'two' },
        ],
        encrypted_content: 'enc-a',
      },
      { type: 'reasoning', id: 'rs_b', summary: [], encrypted_content: 'enc-b' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Answer.' }] },
    ]);
  });

  it('replays no reasoning written by another wire, and none without a following item', async () => {
    const c = await client([{ text: 'ok' }], { thinking: true });
    await collect(c, {
      messages: [
        userMessage('q1'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'foreign', state: { format: 'anthropic-thinking', data: 'sig' } },
            { type: 'text', text: 'a1' },
          ],
        },
        userMessage('q2'),
        {
          role: 'assistant',
          content: [{ type: 'reasoning', text: 'alone', state: { format: 'openai-responses-reasoning', data: 'enc-raw' } }],
        },
        userMessage('q3'),
      ],
    });
    expect((body().input as Array<{ type: string }>).map((item) => item.type)).toEqual([
      'message',
      'message',
      'message',
      'message',
    ]);
  });

  it('replays a plain-string reasoning state as the encrypted content with the part text as its summary', async () => {
    const c = await client([{ text: 'ok' }], { thinking: true });
    await collect(c, {
      messages: [
        userMessage('q1'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'thought', state: { format: 'openai-responses-reasoning', data: 'enc-raw' } },
            { type: 'text', text: 'a1' },
          ],
        },
        userMessage('q2'),
      ],
    });
    expect((body().input as unknown[])[1]).toEqual({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'thought' }],
      encrypted_content: 'enc-raw',
    });
  });

  const gears: Array<[ThinkingEffort, Record<string, string> | undefined, boolean]> = [
    ['minimal', { effort: 'minimal', summary: 'auto' }, true],
    ['low', { effort: 'low', summary: 'auto' }, true],
    ['medium', { effort: 'medium', summary: 'auto' }, true],
    ['high', { effort: 'high', summary: 'auto' }, true],
    ['maximum', { effort: 'xhigh', summary: 'auto' }, true],
    ['off', { effort: 'none' }, false],
    ['default', undefined, true],
  ];
  for (const [gear, reasoning, include] of gears) {
    it(`maps the ${gear} gear to ${reasoning ? JSON.stringify(reasoning) : 'no reasoning hint'}`, async () => {
      const c = await client([{ text: 'ok' }], { thinking: true });
      await collect(c, { thinking: gear });
      if (reasoning) expect(body().reasoning).toEqual(reasoning);
      else expect(body()).not.toHaveProperty('reasoning');
      if (include) expect(body().include).toEqual(['reasoning.encrypted_content']);
      else expect(body()).not.toHaveProperty('include');
    });
  }

  it('sends neither reasoning nor include for a model without thinking, and no hint for a gear the model does not list', async () => {
    let c = await client([{ text: 'ok' }]);
    await collect(c, { thinking: 'high' });
    expect(body()).not.toHaveProperty('reasoning');
    expect(body()).not.toHaveProperty('include');
    c = await client([{ text: 'ok' }], { thinking: true, thinkingEfforts: ['low', 'high'] });
    await collect(c, { thinking: 'maximum' });
    expect(body()).not.toHaveProperty('reasoning');
    expect(body().include).toEqual(['reasoning.encrypted_content']);
  });

  it('MODEL-3 sends service_tier and refuses speed at client creation, naming the field', async () => {
    const c = await client([{ text: 'ok' }], { serviceTier: 'priority' });
    await collect(c);
    expect(body().service_tier).toBe('priority');
    await expect(
      createChatClient({ name: 'acme', protocol: 'responses', baseUri: 'http://127.0.0.1:9/v1/' }, { id: 'm', speed: 'fast' }),
    ).rejects.toMatchObject({ name: 'ProviderError', kind: 'unsupported', message: expect.stringContaining('speed') });
  });

  it('FIN-4 maps response.incomplete with max_output_tokens to length, after the text and usage', async () => {
    const c = await client([{ text: 'cut short', finish: 'max_output_tokens', usage: { input: 3, output: 9 } }]);
    const events = await collect(c);
    expect(
      events
        .filter((e) => e.type === 'text-delta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('cut short');
    expect(events.at(-2)).toEqual({
      type: 'usage',
      usage: { inputTokens: 3, outputTokens: 9, reasoningTokens: 0, cachedInputTokens: 0 },
    });
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'length', raw: 'max_output_tokens' });
  });

  it('FIN-4 keeps an unknown incomplete reason raw, and a stream without completed is incomplete_stream', async () => {
    let c = await client([{ text: 'x', finish: 'something_new' }]);
    expect((await collect(c)).at(-1)).toEqual({ type: 'finish', reason: 'other', raw: 'something_new' });
    c = await client([{ text: 'no end', finish: null }]);
    expect((await failure(c)).kind).toBe('incomplete_stream');
  });

  const failures: Array<[string, string, string]> = [
    ['rate_limit_exceeded', 'Rate limit reached for gpt-acme. Please try again in 1.5s.', 'rate_limit'],
    ['server_error', 'The server had an error while processing your request.', 'server'],
    ['context_length_exceeded', 'Your input exceeds the context window of this model.', 'context_overflow'],
    ['invalid_prompt', 'Invalid prompt: flagged.', 'invalid_prompt'],
    ['vector_store_timeout', 'Timed out.', 'server'],
  ];
  for (const [code, message, kind] of failures) {
    const retryable = kind === 'rate_limit' || kind === 'server';
    it(`RETRY-${retryable ? '1' : '6'} maps response.failed mid-stream with ${code} to ${kind}`, async () => {
      const c = await client(
        [{ text: 'partial answer' }],
        {},
        wireEndingWith([
          {
            type: 'response.failed',
            sequence_number: 99,
            response: { id: 'resp_1', status: 'failed', error: { code, message } },
          },
        ]),
      );
      const seen: ChatEvent[] = [];
      let caught: unknown;
      try {
        for await (const event of c.stream({ messages: [userMessage('hi')] })) seen.push(event);
      } catch (error) {
        caught = error;
      }
      expect(seen.some((e) => e.type === 'text-delta')).toBe(true);
      expect(seen.some((e) => e.type === 'finish')).toBe(false);
      expect(caught).toBeInstanceOf(ProviderError);
      expect(caught).toMatchObject({ kind, code, provider: 'acme' });
      expect((caught as ProviderError).message).toContain(message);
      expect((caught as ProviderError).retryable).toBe(retryable);
      if (kind === 'rate_limit') expect((caught as ProviderError).retryAfterMs).toBe(1500);
    });
  }

  it('RETRY-1 maps a top-level error event to a ProviderError', async () => {
    const c = await client(
      [{ text: 'partial' }],
      {},
      wireEndingWith([
        { type: 'error', sequence_number: 5, code: 'server_error', message: 'Something went wrong.', param: null },
      ]),
    );
    const error = await failure(c);
    expect(error).toMatchObject({ kind: 'server', code: 'server_error' });
    expect(error.retryable).toBe(true);
  });

  it('WIRE-1 streams tool-call deltas with the call id and name, then the complete call at output_item.done', async () => {
    const c = await client([{ toolCalls: [{ id: 'call_z', name: 'grep', arguments: '{"pattern":"TODO"}', chunks: 3 }] }]);
    const events = await collect(c);
    const deltas = events.filter((e) => e.type === 'tool-call-delta');
    expect(deltas[0]).toEqual({ type: 'tool-call-delta', index: 0, id: 'call_z', name: 'grep', argumentsDelta: '' });
    expect(deltas.map((e) => (e as { argumentsDelta: string }).argumentsDelta).join('')).toBe('{"pattern":"TODO"}');
    expect(events.filter((e) => e.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'call_z', name: 'grep', arguments: '{"pattern":"TODO"}', input: { pattern: 'TODO' } },
    ]);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls', raw: 'completed' });
  });
});
