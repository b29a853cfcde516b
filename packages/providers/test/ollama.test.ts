import type { ChatEvent, ChatMessage, StreamingChatClient, ThinkingEffort } from '@crystal/core';
import { ProviderError, systemMessage, userMessage } from '@crystal/core';
import { FakeProvider, type FakeReply, ollamaWire, type WireEncoder } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient, type ModelSettings, ndjsonLineBatches } from '../src/index.js';
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
  apiKey: string | undefined = undefined,
  wire: WireEncoder | string = 'ollama',
): Promise<StreamingChatClient> {
  await fake?.close();
  fake = await FakeProvider.start({ wire, replies, whenExhausted: 'error' });
  return createChatClient(
    { name: 'local', protocol: 'ollama', baseUri: fake.baseUriFor('ollama'), ...(apiKey === undefined ? {} : { apiKey }) },
    { id: 'qwen3:8b', imageInput: true, ...model },
  );
}

const textOf = (events: ChatEvent[], type: 'text-delta' | 'reasoning-delta' = 'text-delta'): string =>
  events
    .filter((e) => e.type === type)
    .map((e) => (e as { text: string }).text)
    .join('');

type WireMessage = { role: string; content: string; images?: string[]; tool_name?: string; [key: string]: unknown };
const messagesOf = (body: unknown): WireMessage[] => (body as { messages: WireMessage[] }).messages;

describe('ollama adapter against the fake server', () => {
  it('POSTs to /api/chat with the user agent and no Authorization header when no key is set', async () => {
    const c = await client([{ text: 'ok' }]);
    await collect(c, { messages: [systemMessage('be brief'), userMessage('what is 2+2?')] });
    const request = fake?.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/api/chat');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['user-agent']).toBe('Crystal Code');
    expect(request?.headers).not.toHaveProperty('authorization');
    expect(request?.body).toEqual({
      model: 'qwen3:8b',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'what is 2+2?' },
      ],
      stream: true,
    });
  });

  it('sends a bearer key for Ollama cloud when one is set', async () => {
    const c = await client([{ text: 'ok' }], {}, 'ollama-cloud-key');
    await collect(c);
    expect(fake?.requests[0]?.headers.authorization).toBe('Bearer ollama-cloud-key');
  });

  it('SETUP-3 sends the catalog context window as options.num_ctx (Ollama defaults to a few thousand)', async () => {
    const c = await client([{ text: 'ok' }], { contextWindow: 131072 });
    await collect(c);
    expect((fake?.requests[0]?.body as { options?: unknown }).options).toEqual({ num_ctx: 131072 });
  });

  it('sends maxTokens as options.num_predict, the temperature, and the tools as functions', async () => {
    const c = await client([{ text: 'ok' }], { maxTokens: 512, temperature: 0.2 });
    const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    await collect(c, { tools: [{ name: 'read', description: 'Read a file', parameters }] });
    expect(fake?.requests[0]?.body).toMatchObject({
      options: { num_predict: 512, temperature: 0.2 },
      tools: [{ type: 'function', function: { name: 'read', description: 'Read a file', parameters } }],
    });
  });

  it('WIRE-1 sends user images as raw base64 on the message images array, byte for byte', async () => {
    const c = await client([{ text: 'two dots' }]);
    const other = `${PNG_BASE64.slice(0, -4)}AAA=`;
    await collect(c, {
      messages: [
        userMessage([
          { type: 'text', text: 'compare ' },
          { type: 'image', mime: 'image/png', data: PNG_BASE64 },
          { type: 'text', text: 'and' },
          { type: 'image', mime: 'image/jpeg', data: other },
        ]),
      ],
    });
    expect(messagesOf(fake?.requests[0]?.body)).toEqual([{ role: 'user', content: 'compare and', images: [PNG_BASE64, other] }]);
    expect(fake?.requests[0]?.rawBody).not.toContain('data:image');
  });

  it('WIRE-3 sends tool-result images on the tool message images array with tool_name, and replays the call', async () => {
    const c = await client([{ text: 'I see it' }]);
    const history: ChatMessage[] = [
      userMessage('take a screenshot'),
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'I should capture the screen.' },
          { type: 'text', text: 'Capturing.' },
          { type: 'tool-call', id: 'call_0', name: 'screenshot', arguments: '{"region":"full","scale":2}' },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            callId: 'call_0',
            name: 'screenshot',
            isError: false,
            content: [
              { type: 'text', text: 'captured ' },
              { type: 'image', mime: 'image/png', data: PNG_BASE64 },
              { type: 'text', text: '1x1' },
            ],
          },
        ],
      },
    ];
    await collect(c, { messages: history });
    const [, assistant, tool] = messagesOf(fake?.requests[0]?.body);
    expect(assistant).toEqual({
      role: 'assistant',
      content: 'Capturing.',
      thinking: 'I should capture the screen.',
      tool_calls: [{ id: 'call_0', function: { name: 'screenshot', arguments: { region: 'full', scale: 2 } } }],
    });
    expect(tool).toMatchObject({ role: 'tool', tool_name: 'screenshot', content: 'captured 1x1', images: [PNG_BASE64] });
  });

  it('sends one tool message per tool result, each with its tool_name', async () => {
    const c = await client([{ text: 'done' }]);
    await collect(c, {
      messages: [
        userMessage('go'),
        {
          role: 'assistant',
          content: [
            { type: 'tool-call', id: 'a', name: 'read', arguments: '{"path":"a"}' },
            { type: 'tool-call', id: 'b', name: 'grep', arguments: 'not json' },
          ],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', callId: 'a', name: 'read', isError: false, content: [{ type: 'text', text: 'A' }] },
            { type: 'tool-result', callId: 'b', name: 'grep', isError: true, content: [{ type: 'text', text: 'bad args' }] },
          ],
        },
      ],
    });
    const messages = messagesOf(fake?.requests[0]?.body);
    // An argument string that is not a JSON object is replayed as {} (Ollama wants an object).
    expect(messages[1]?.tool_calls).toEqual([
      { id: 'a', function: { name: 'read', arguments: { path: 'a' } } },
      { id: 'b', function: { name: 'grep', arguments: {} } },
    ]);
    expect(messages.slice(2).map((m) => [m.role, m.tool_name, m.content, m.images])).toEqual([
      ['tool', 'read', 'A', undefined],
      ['tool', 'grep', 'bad args', undefined],
    ]);
  });

  it('WIRE-5 refuses images on system and assistant messages, and image URIs, before sending', async () => {
    const image = { type: 'image' as const, mime: 'image/png', data: PNG_BASE64 };
    for (const message of [
      { role: 'system', content: [{ type: 'text', text: 'sys' }, image] },
      { role: 'assistant', content: [{ type: 'text', text: 'look' }, image] },
      userMessage([{ type: 'image', mime: 'image/png', uri: 'https://example.com/a.png' }]),
    ] as ChatMessage[]) {
      const c = await client([{ text: 'never' }]);
      const error = await failure(c, { messages: [message] });
      expect(error.kind).toBe('unsupported');
      expect(error.message).toMatch(message.role === 'user' ? /cannot fetch https:\/\/example\.com\/a\.png/ : message.role);
      expect(fake?.requests).toHaveLength(0);
    }
  });

  const gears: Array<[string, Partial<ModelSettings>, ThinkingEffort | undefined, boolean | string | undefined]> = [
    ['on/off model, off', { thinking: true }, 'off', false],
    ['on/off model, minimal', { thinking: true }, 'minimal', true],
    ['on/off model, low', { thinking: true }, 'low', true],
    ['on/off model, medium', { thinking: true }, 'medium', true],
    ['on/off model, high', { thinking: true }, 'high', true],
    ['on/off model, maximum', { thinking: true }, 'maximum', true],
    ['on/off model, default', { thinking: true }, 'default', undefined],
    ['on/off model, no gear', { thinking: true }, undefined, undefined],
    ['non-thinking model, high', {}, 'high', undefined],
    ['non-thinking model, off', { thinking: false }, 'off', undefined],
    [
      'levelled model, minimal',
      { thinking: true, thinkingEfforts: ['off', 'minimal', 'low', 'medium', 'high', 'maximum'] },
      'minimal',
      'low',
    ],
    ['levelled model, low', { thinking: true, thinkingEfforts: ['low', 'medium', 'high'] }, 'low', 'low'],
    ['levelled model, medium', { thinking: true, thinkingEfforts: ['low', 'medium', 'high'] }, 'medium', 'medium'],
    ['levelled model, high', { thinking: true, thinkingEfforts: ['low', 'medium', 'high'] }, 'high', 'high'],
    ['levelled model, maximum', { thinking: true, thinkingEfforts: ['low', 'high', 'maximum'] }, 'maximum', 'high'],
    ['levelled model, off', { thinking: true, thinkingEfforts: ['off', 'low', 'high'] }, 'off', false],
    ['levelled model, unlisted gear', { thinking: true, thinkingEfforts: ['low', 'medium', 'high'] }, 'maximum', undefined],
  ];
  for (const [label, model, gear, expected] of gears) {
    it(`maps the thinking gear to think: ${label} → ${expected === undefined ? 'omitted' : JSON.stringify(expected)}`, async () => {
      const c = await client([{ text: 'ok' }], model);
      await collect(c, gear === undefined ? {} : { thinking: gear });
      const body = fake?.requests[0]?.body as Record<string, unknown>;
      if (expected === undefined) expect(body).not.toHaveProperty('think');
      else expect(body.think).toBe(expected);
    });
  }

  it('MODEL-3 refuses a service tier or a speed at client creation, naming the field', async () => {
    for (const field of ['serviceTier', 'speed'] as const) {
      const attempt = createChatClient(
        { name: 'local', protocol: 'ollama', baseUri: 'http://127.0.0.1:11434/' },
        { id: 'qwen3:8b', [field]: 'fast' },
      );
      await expect(attempt).rejects.toBeInstanceOf(ProviderError);
      await expect(attempt).rejects.toMatchObject({ kind: 'unsupported', message: expect.stringContaining(`"${field}"`) });
    }
  });

  it('streams thinking, text, usage from prompt_eval_count / eval_count, and the raw finish', async () => {
    const c = await client([{ reasoning: 'let me think', text: 'The answer is 4.', usage: { input: 31, output: 9 } }]);
    const events = await collect(c);
    expect(textOf(events, 'reasoning-delta')).toBe('let me think');
    expect(textOf(events)).toBe('The answer is 4.');
    expect(events.slice(-2)).toEqual([
      { type: 'usage', usage: { inputTokens: 31, outputTokens: 9 } },
      { type: 'finish', reason: 'stop', raw: 'stop' },
    ]);
  });

  it('emits whole tool calls with stringified arguments, generated ids, and tool_calls on a raw stop', async () => {
    const c = await client([
      {
        toolCalls: [
          { name: 'read', arguments: { path: 'a.txt', limit: 5 } },
          { name: 'read', arguments: { path: 'b.txt' } },
        ],
      },
    ]);
    const events = await collect(c);
    expect(events).toEqual([
      {
        type: 'tool-call',
        id: 'call_0',
        name: 'read',
        arguments: '{"path":"a.txt","limit":5}',
        input: { path: 'a.txt', limit: 5 },
      },
      { type: 'tool-call', id: 'call_1', name: 'read', arguments: '{"path":"b.txt"}', input: { path: 'b.txt' } },
      { type: 'finish', reason: 'tool_calls', raw: 'stop' },
    ]);
  });

  it('keeps the tool call id Ollama sends', async () => {
    const c = await client([{ toolCalls: [{ id: 'call_x7', name: 'ls', arguments: {} }] }]);
    const events = await collect(c);
    expect(events[0]).toEqual({ type: 'tool-call', id: 'call_x7', name: 'ls', arguments: '{}', input: {} });
  });

  it('maps the load and length finishes', async () => {
    let events = await collect(await client([{ text: 'x', finish: 'load' }]));
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'other', raw: 'load' });
    events = await collect(await client([{ text: 'x', finish: 'length', toolCalls: [{ name: 'ls', arguments: {} }] }]));
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'length', raw: 'length' });
  });

  it('reads NDJSON lines split across network chunks mid-line', async () => {
    const base = ollamaWire();
    // The same lines, re-cut into 7-character network writes that ignore line boundaries.
    const choppy: WireEncoder = {
      ...base,
      encodeStream(reply, request) {
        const encoded = base.encodeStream(reply, request);
        const all = encoded.chunks.join('');
        const pieces: string[] = [];
        for (let i = 0; i < all.length; i += 7) pieces.push(all.slice(i, i + 7));
        return { contentType: encoded.contentType, chunks: pieces };
      },
    };
    const c = await client(
      [
        {
          reasoning: 'héllo wörld',
          text: 'naïve café — done',
          toolCalls: [{ name: 'read', arguments: { path: 'ü.txt' } }],
          usage: { input: 3, output: 4 },
          delayMs: 1,
        },
      ],
      {},
      undefined,
      choppy,
    );
    const events = await collect(c);
    expect(textOf(events, 'reasoning-delta')).toBe('héllo wörld');
    expect(textOf(events)).toBe('naïve café — done');
    expect(events.filter((e) => e.type === 'tool-call')).toMatchObject([{ name: 'read', input: { path: 'ü.txt' } }]);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls', raw: 'stop' });
  });

  it('ndjsonLineBatches joins a line cut mid-way and inside a multi-byte character', async () => {
    const bytes = new TextEncoder().encode('{"a":"é"}\n\n{"b":1}\n{"c":"—"}');
    const cuts = [3, 6, 7, 12, 20, bytes.length];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        let from = 0;
        for (const to of cuts) {
          controller.enqueue(bytes.slice(from, to));
          from = to;
        }
        controller.close();
      },
    });
    const lines: string[] = [];
    for await (const batch of ndjsonLineBatches(body)) lines.push(...batch);
    expect(lines).toEqual(['{"a":"é"}', '{"b":1}', '{"c":"—"}']);
  });

  it('turns a mid-stream {"error"} line into a retryable server error after the text it sent', async () => {
    const base = ollamaWire();
    const failing: WireEncoder = {
      ...base,
      encodeStream(reply, request) {
        const encoded = base.encodeStream(reply, request);
        return {
          ...encoded,
          chunks: [...encoded.chunks.slice(0, 2), '{"error":"an error was encountered while running the model"}\n'],
        };
      },
    };
    const c = await client([{ text: 'one two three' }], {}, undefined, failing);
    const events: ChatEvent[] = [];
    let caught: unknown;
    try {
      for await (const event of c.stream({ messages: [userMessage('hi')] })) events.push(event);
    } catch (error) {
      caught = error;
    }
    expect(textOf(events)).toBe('one two ');
    expect(caught).toBeInstanceOf(ProviderError);
    expect(caught).toMatchObject({ kind: 'server', provider: 'local' });
    expect((caught as ProviderError).retryable).toBe(true);
    expect((caught as ProviderError).message).toContain('an error was encountered while running the model');
  });

  it('RETRY-1 reports a stream without a done line as incomplete_stream', async () => {
    const c = await client([{ text: 'no end in sight', finish: null }]);
    const error = await failure(c);
    expect(error.kind).toBe('incomplete_stream');
    expect(error.retryable).toBe(true);
  });

  it('RETRY-1 maps a 404 model not found to a retryable not_found carrying the message', async () => {
    const c = await client([{ error: { status: 404, body: { error: 'model "qwen3:8b" not found, try pulling it first' } } }]);
    const error = await failure(c);
    expect(error).toMatchObject({ kind: 'not_found', status: 404 });
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('model "qwen3:8b" not found, try pulling it first');
  });

  it('RETRY-3 maps a plain 429 to a rate limit with its Retry-After', async () => {
    const c = await client([
      { error: { status: 429, headers: { 'retry-after': '2' }, message: 'too many concurrent requests' } },
    ]);
    expect(await failure(c)).toMatchObject({ kind: 'rate_limit', retryAfterMs: 2000 });
  });

  it('RETRY-6 maps Ollama cloud usage limits (429 and 402) to quota', async () => {
    for (const [status, message] of [
      [429, "you've reached your hourly usage limit, please upgrade to continue"],
      [402, 'this model requires a subscription, upgrade for access: https://ollama.com/upgrade'],
    ] as const) {
      const c = await client([{ error: { status, message } }], {}, 'cloud-key');
      const error = await failure(c);
      expect(error).toMatchObject({ kind: 'quota', status });
      expect(error.retryable).toBe(false);
    }
  });

  it('RETRY-6 maps the context-window overflow messages to context_overflow', async () => {
    for (const message of ['prompt exceeds the context window of this model', 'input length exceeds maximum of 4096 tokens']) {
      const c = await client([{ error: { status: 400, message } }]);
      expect((await failure(c)).kind).toBe('context_overflow');
    }
  });
});
