import type { ChatMessage, StreamingChatClient } from '@crystal/core';
import { ProviderError, systemMessage, userMessage } from '@crystal/core';
import { FakeProvider, type FakeReply, sse, type WireEncoder } from '@crystal/testkit';
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
  replies: FakeReply[] | WireEncoder,
  model: Partial<ModelSettings> = {},
  apiKey = 'AIza-test',
): Promise<StreamingChatClient> {
  await fake?.close();
  fake = Array.isArray(replies)
    ? await FakeProvider.start({ wire: 'gemini', replies })
    : await FakeProvider.start({ wire: replies, replies: [{}] });
  return createChatClient(
    { name: 'google', protocol: 'gemini', baseUri: fake.baseUriFor('gemini'), apiKey },
    { id: 'gemini-3-pro-preview', imageInput: true, thinking: true, ...model },
  );
}

/** A wire that streams the given GenerateContentResponse chunks verbatim. */
function rawWire(...chunks: unknown[]): WireEncoder {
  return {
    name: 'gemini-raw',
    errorBody: (status, message) => ({ error: { code: status, message, status: 'UNKNOWN' } }),
    encodeStream: () => ({ contentType: 'text/event-stream', chunks: chunks.map((chunk) => sse(chunk)) }),
  };
}

const body = (i = 0) =>
  fake?.requests[i]?.body as Record<string, unknown> & { contents: Array<{ role: string; parts: unknown[] }> };

describe('gemini adapter against the fake server', () => {
  it('posts to v1beta/models/{model}:streamGenerateContent?alt=sse with x-goog-api-key and the user agent', async () => {
    const c = await client([{ text: 'ok' }], { id: 'models/gemini 3/pro' });
    await collect(c);
    const request = fake?.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1beta/models/gemini%203%2Fpro:streamGenerateContent?alt=sse');
    expect(request?.headers['x-goog-api-key']).toBe('AIza-test');
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.headers['user-agent']).toBe('Crystal Code');
    expect(request?.headers['content-type']).toBe('application/json');
  });

  it('sends no key header when the endpoint has no key', async () => {
    const c = await client([{ text: 'ok' }], {}, '');
    await collect(c);
    expect(fake?.requests[0]?.headers['x-goog-api-key']).toBeUndefined();
  });

  it('puts the system prompt in systemInstruction, not in contents, and maps roles to user / model', async () => {
    const c = await client([{ text: 'ok' }], { maxTokens: 1024, temperature: 0.2 });
    const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    await collect(c, {
      messages: [
        systemMessage('You are terse.'),
        userMessage('one'),
        { role: 'assistant', content: [{ type: 'text', text: 'two' }] },
        userMessage('three'),
      ],
      tools: [{ name: 'read', description: 'Read a file', parameters }],
    });
    expect(body()).toEqual({
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'one' }] },
        { role: 'model', parts: [{ text: 'two' }] },
        { role: 'user', parts: [{ text: 'three' }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'read', description: 'Read a file', parameters }] }],
      generationConfig: { maxOutputTokens: 1024, temperature: 0.2 },
    });
  });

  it('WIRE-2 sends tool-result images as inlineData on the functionResponse, one content per batch in call order', async () => {
    const c = await client([{ text: 'I see' }]);
    const history: ChatMessage[] = [
      userMessage('look'),
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', id: 'fc_1', name: 'screenshot', arguments: '{"full":true}' },
          { type: 'tool-call', id: 'fc_2', name: 'read', arguments: '{"path":"a.txt"}' },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            callId: 'fc_1',
            name: 'screenshot',
            isError: false,
            content: [
              { type: 'text', text: 'captured' },
              { type: 'image', mime: 'image/png', data: PNG_BASE64 },
            ],
          },
          { type: 'tool-result', callId: 'fc_2', name: 'read', isError: true, content: [{ type: 'text', text: 'no such file' }] },
        ],
      },
    ];
    await collect(c, { messages: history });
    expect(body().contents).toEqual([
      { role: 'user', parts: [{ text: 'look' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'screenshot', args: { full: true }, id: 'fc_1' } },
          { functionCall: { name: 'read', args: { path: 'a.txt' }, id: 'fc_2' } },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              id: 'fc_1',
              name: 'screenshot',
              response: { output: 'captured' },
              parts: [{ inlineData: { mimeType: 'image/png', data: PNG_BASE64 } }],
            },
          },
          { functionResponse: { id: 'fc_2', name: 'read', response: { error: 'no such file' } } },
        ],
      },
    ]);
    // Byte for byte in the raw request, and never as a separate user part.
    expect(fake?.requests[0]?.rawBody).toContain(`"inlineData":{"mimeType":"image/png","data":"${PNG_BASE64}"}`);
    expect(fake?.requests[0]?.rawBody.split('inlineData')).toHaveLength(2);
  });

  it('sends a user image by bytes as inlineData and by URI as fileData', async () => {
    const c = await client([{ text: 'ok' }]);
    await collect(c, {
      messages: [
        userMessage([
          { type: 'text', text: 'compare' },
          { type: 'image', mime: 'image/png', data: PNG_BASE64 },
          { type: 'image', mime: 'image/jpeg', uri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' },
        ]),
      ],
    });
    expect(body().contents[0]?.parts).toEqual([
      { text: 'compare' },
      { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } },
    ]);
  });

  it('WIRE-5 refuses an image on a system or assistant message before sending', async () => {
    const c = await client([{ text: 'never' }]);
    const image = { type: 'image' as const, mime: 'image/png', data: PNG_BASE64 };
    for (const message of [
      { role: 'system' as const, content: [image] },
      { role: 'assistant' as const, content: [image] },
    ]) {
      const error = await failure(c, { messages: [message, userMessage('hi')] });
      expect(error.kind).toBe('unsupported');
      expect(error.message).toContain(message.role);
    }
    expect(fake?.requests).toHaveLength(0);
  });

  it('round-trips a thought signature on a function call, and never replays thought text', async () => {
    const c = await client([
      {
        reasoning: 'I should read it',
        reasoningSignature: 'c2lnLWNhbGw=',
        toolCalls: [{ id: 'fc_9', name: 'read', arguments: { path: 'a' } }],
      },
      { text: 'done' },
    ]);
    const events = await collect(c);
    const call = events.find((e) => e.type === 'tool-call');
    expect(call).toEqual({
      type: 'tool-call',
      id: 'fc_9',
      name: 'read',
      arguments: '{"path":"a"}',
      input: { path: 'a' },
      state: { format: 'gemini-signature', data: 'c2lnLWNhbGw=' },
    });
    expect(events.some((e) => e.type === 'reasoning-state')).toBe(false);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls', raw: 'STOP' });
    // The next request replays the call with its signature, and the thought text stays home.
    const history: ChatMessage[] = [
      userMessage('hi'),
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'I should read it' },
          {
            type: 'tool-call',
            id: 'fc_9',
            name: 'read',
            arguments: '{"path":"a"}',
            state: { format: 'gemini-signature', data: 'c2lnLWNhbGw=' },
          },
        ],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', callId: 'fc_9', name: 'read', isError: false, content: [{ type: 'text', text: 'A' }] }],
      },
    ];
    await collect(c, { messages: history });
    expect(body(1).contents[1]).toEqual({
      role: 'model',
      parts: [{ functionCall: { name: 'read', args: { path: 'a' }, id: 'fc_9' }, thoughtSignature: 'c2lnLWNhbGw=' }],
    });
    expect(fake?.requests[1]?.rawBody).not.toContain('I should read it');
  });

  it('round-trips a thought signature on the text part of a turn without calls', async () => {
    const c = await client([{ reasoning: 'hmm', text: 'answer', reasoningSignature: 'dGV4dC1zaWc=' }]);
    const events = await collect(c);
    expect(events).toContainEqual({ type: 'reasoning-state', format: 'gemini-signature', data: 'dGV4dC1zaWc=' });
    await collect(c, {
      messages: [
        userMessage('q'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'hmm', state: { format: 'gemini-signature', data: 'dGV4dC1zaWc=' } },
            { type: 'text', text: 'answer' },
          ],
        },
        userMessage('and?'),
      ],
    });
    expect(body(1).contents[1]).toEqual({ role: 'model', parts: [{ text: 'answer', thoughtSignature: 'dGV4dC1zaWc=' }] });
    // Another wire's state is not replayed.
    await collect(c, {
      messages: [
        userMessage('q'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'x', state: { format: 'anthropic-signature', data: 'zz' } },
            { type: 'text', text: 'a' },
          ],
        },
        userMessage('and?'),
      ],
    });
    expect(body(2).contents[1]).toEqual({ role: 'model', parts: [{ text: 'a' }] });
  });

  it('maps each thinking gear onto generationConfig.thinkingConfig', async () => {
    const c = await client([{ text: 'ok' }]);
    const gears = {
      off: { thinkingBudget: 0 },
      minimal: { includeThoughts: true, thinkingLevel: 'minimal' },
      low: { includeThoughts: true, thinkingLevel: 'low' },
      medium: { includeThoughts: true, thinkingLevel: 'medium' },
      high: { includeThoughts: true, thinkingLevel: 'high' },
      maximum: { includeThoughts: true, thinkingLevel: 'high' },
    } as const;
    let i = 0;
    for (const [gear, config] of Object.entries(gears)) {
      await collect(c, { thinking: gear as keyof typeof gears });
      expect(body(i++).generationConfig, gear).toEqual({ thinkingConfig: config });
    }
    await collect(c, { thinking: 'default' });
    expect(body(i++).generationConfig).toBeUndefined();
  });

  it('omits thinkingConfig for a model without thinking or a gear the model does not list', async () => {
    let c = await client([{ text: 'ok' }], { thinking: false });
    await collect(c, { thinking: 'high' });
    expect(body().generationConfig).toBeUndefined();
    c = await client([{ text: 'ok' }], { thinkingEfforts: ['low', 'high'] });
    await collect(c, { thinking: 'medium' });
    expect(body().generationConfig).toBeUndefined();
    await collect(c, { thinking: 'low' });
    expect(body(1).generationConfig).toEqual({ thinkingConfig: { includeThoughts: true, thinkingLevel: 'low' } });
  });

  it('MODEL-3 refuses a service tier or a speed at client creation', async () => {
    fake = await FakeProvider.start({ wire: 'gemini' });
    const endpoint = { name: 'google', protocol: 'gemini' as const, baseUri: fake.baseUriFor('gemini'), apiKey: 'k' };
    for (const field of ['serviceTier', 'speed'] as const) {
      const error = await createChatClient(endpoint, { id: 'gemini-2.5-pro', [field]: 'fast' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).kind).toBe('unsupported');
      expect((error as ProviderError).message).toContain(`"${field}"`);
    }
  });

  it('maps usageMetadata: thoughts count as output and as reasoning, cached content as cached input', async () => {
    const c = await client(
      rawWire({
        candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: {
          promptTokenCount: 100,
          candidatesTokenCount: 7,
          thoughtsTokenCount: 30,
          cachedContentTokenCount: 64,
          totalTokenCount: 137,
        },
      }),
    );
    const events = await collect(c);
    expect(events.slice(-2)).toEqual([
      { type: 'usage', usage: { inputTokens: 100, outputTokens: 37, reasoningTokens: 30, cachedInputTokens: 64 } },
      { type: 'finish', reason: 'stop', raw: 'STOP' },
    ]);
  });

  it('finishes content_filter with the block reason when promptFeedback blocks the prompt', async () => {
    const c = await client(
      rawWire({
        promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
        usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
      }),
    );
    const events = await collect(c);
    expect(events).toEqual([
      { type: 'usage', usage: { inputTokens: 9, outputTokens: 0 } },
      { type: 'finish', reason: 'content_filter', raw: 'PROHIBITED_CONTENT' },
    ]);
  });

  it('TURN-3 uses candidate zero only when two candidates stream', async () => {
    const chunk = (zero: string, one: string, finish?: string) => ({
      candidates: [
        { content: { role: 'model', parts: [{ text: one }] }, index: 1, ...(finish ? { finishReason: 'MAX_TOKENS' } : {}) },
        { content: { role: 'model', parts: [{ text: zero }] }, index: 0, ...(finish ? { finishReason: finish } : {}) },
      ],
    });
    const c = await client(rawWire(chunk('zero ', 'one '), chunk('wins', 'loses', 'STOP')));
    const events = await collect(c);
    const text = events
      .filter((e) => e.type === 'text-delta')
      .map((e) => (e as { text: string }).text)
      .join('');
    expect(text).toBe('zero wins');
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop', raw: 'STOP' });
  });

  it('gives function calls without an id distinct generated ids', async () => {
    const c = await client(
      rawWire({
        candidates: [
          {
            content: {
              role: 'model',
              parts: [{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'b', args: { x: 1 } } }],
            },
            finishReason: 'STOP',
          },
        ],
      }),
    );
    const calls = (await collect(c)).filter((e) => e.type === 'tool-call');
    expect(calls).toEqual([
      { type: 'tool-call', id: 'call_0', name: 'a', arguments: '{}', input: {} },
      { type: 'tool-call', id: 'call_1', name: 'b', arguments: '{"x":1}', input: { x: 1 } },
    ]);
  });

  it('normalises the Gemini finish values and keeps them raw', async () => {
    for (const [raw, reason] of [
      ['MAX_TOKENS', 'length'],
      ['SAFETY', 'content_filter'],
      ['RECITATION', 'content_filter'],
      ['PROHIBITED_CONTENT', 'content_filter'],
      ['BLOCKLIST', 'content_filter'],
      ['SPII', 'content_filter'],
      ['MALFORMED_FUNCTION_CALL', 'other'],
      ['OTHER', 'other'],
    ] as const) {
      const c = await client([{ text: 'x', finish: raw }]);
      expect((await collect(c)).at(-1)).toEqual({ type: 'finish', reason, raw });
    }
  });

  it('reports a stream without a finishReason as incomplete_stream', async () => {
    const c = await client([{ text: 'cut short', finish: null }]);
    expect((await failure(c)).kind).toBe('incomplete_stream');
  });

  it('classifies an error reported inside the stream', async () => {
    const c = await client(
      rawWire(
        { candidates: [{ content: { role: 'model', parts: [{ text: 'partial' }] }, index: 0 }] },
        { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } },
      ),
    );
    const error = await failure(c);
    expect(error).toMatchObject({ kind: 'server', status: 503, code: 'UNAVAILABLE' });
    expect(error.message).toContain('overloaded');
  });

  describe('RETRY-6 Google error envelopes', () => {
    const quotaFailure = (quotaId: string) => ({
      '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
      violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId }],
    });
    const retryInfo = { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' };
    const quotaMessage = 'You exceeded your current quota, please check your plan and billing details.';

    it('keeps a plain RESOURCE_EXHAUSTED a retryable rate limit', async () => {
      const c = await client([
        {
          error: {
            status: 429,
            body: {
              error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' },
            },
          },
        },
      ]);
      const error = await failure(c);
      expect(error).toMatchObject({ kind: 'rate_limit', status: 429, code: 'RESOURCE_EXHAUSTED' });
      expect(error.retryable).toBe(true);
    });

    it('maps a per-minute quota violation to a rate limit with the RetryInfo delay', async () => {
      const details = [quotaFailure('GenerateRequestsPerMinutePerProjectPerModel-FreeTier'), retryInfo];
      const c = await client([
        { error: { status: 429, body: { error: { code: 429, message: quotaMessage, status: 'RESOURCE_EXHAUSTED', details } } } },
      ]);
      expect(await failure(c)).toMatchObject({ kind: 'rate_limit', retryAfterMs: 37_000 });
    });

    it('maps a per-day quota violation to quota', async () => {
      const details = [quotaFailure('GenerateRequestsPerDayPerProjectPerModel-FreeTier'), retryInfo];
      const c = await client([
        { error: { status: 429, body: { error: { code: 429, message: quotaMessage, status: 'RESOURCE_EXHAUSTED', details } } } },
      ]);
      const error = await failure(c);
      expect(error.kind).toBe('quota');
      expect(error.retryable).toBe(false);
    });

    it('prefers a Retry-After header over RetryInfo', async () => {
      const c = await client([
        {
          error: {
            status: 429,
            headers: { 'retry-after': '2' },
            body: {
              error: {
                code: 429,
                message: 'Resource has been exhausted (e.g. check quota).',
                status: 'RESOURCE_EXHAUSTED',
                details: [retryInfo],
              },
            },
          },
        },
      ]);
      expect(await failure(c)).toMatchObject({ kind: 'rate_limit', retryAfterMs: 2000 });
    });

    it('maps the 400 for an invalid API key to auth', async () => {
      const c = await client([
        {
          error: {
            status: 400,
            body: {
              error: {
                code: 400,
                message: 'API key not valid. Please pass a valid API key.',
                status: 'INVALID_ARGUMENT',
                details: [
                  { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
                ],
              },
            },
          },
        },
      ]);
      expect(await failure(c)).toMatchObject({ kind: 'auth', status: 400 });
    });

    it('keeps any other INVALID_ARGUMENT a bad request with the Google message', async () => {
      const c = await client([
        {
          error: {
            status: 400,
            body: {
              error: {
                code: 400,
                message: '* GenerateContentRequest.contents: contents is not specified',
                status: 'INVALID_ARGUMENT',
              },
            },
          },
        },
      ]);
      const error = await failure(c);
      expect(error).toMatchObject({ kind: 'bad_request', code: 'INVALID_ARGUMENT' });
      expect(error.message).toContain('contents is not specified');
    });
  });
});
