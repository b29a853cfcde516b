/**
 * The one contract suite every wire adapter runs against the fake server (issue 3): the same
 * scripted replies, each wire's own framing. A wire file supplies its profile: raw finish
 * values, real error bodies, and where its request carries images.
 */
import type { ChatEvent, ChatMessage, StreamingChatClient } from '@crystal/core';
import { userMessage } from '@crystal/core';
import { FakeProvider, type FakeReply } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatClient, type ModelSettings, type Protocol } from '../../src/index.js';
import { collect, failure } from '../stream-helpers.js';

export interface ErrorCase {
  readonly status: number;
  readonly body: unknown;
}

export interface FoundImage {
  readonly mime?: string | undefined;
  readonly data?: string | undefined;
  readonly uri?: string | undefined;
}

export interface WireProfile {
  readonly protocol: Protocol;
  /** Raw finish values of this wire. */
  readonly finishes: { readonly stop: string; readonly length: string; readonly contentFilter: string; readonly other: string };
  /** Real error bodies of this vendor. */
  readonly errors: { readonly quota: ErrorCase; readonly contextOverflow: ErrorCase; readonly invalidPrompt?: ErrorCase };
  /** Images in the recorded request body that sit on user messages, in order. */
  readonly userImages: (body: unknown) => FoundImage[];
  /** Images in the recorded request body that belong to tool results, in order. */
  readonly toolResultImages: (body: unknown) => FoundImage[];
  /** Whether the wire can carry an image by URI (otherwise only bytes). */
  readonly imageUri: boolean;
  readonly model?: Partial<ModelSettings>;
}

/** A real 1×1 PNG. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export function defineContractSuite(profile: WireProfile): void {
  let fake: FakeProvider | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  async function client(replies: FakeReply[], model: Partial<ModelSettings> = {}): Promise<StreamingChatClient> {
    await fake?.close();
    fake = await FakeProvider.start({ wire: profile.protocol, replies, whenExhausted: 'error' });
    return createChatClient(
      { name: 'acme', protocol: profile.protocol, baseUri: fake.baseUriFor(profile.protocol), apiKey: 'sk-contract' },
      { id: 'acme-model', imageInput: true, thinking: true, ...profile.model, ...model },
    );
  }

  const joined = (events: ChatEvent[], type: 'text-delta' | 'reasoning-delta') =>
    events
      .filter((e) => e.type === type)
      .map((e) => (e as { text: string }).text)
      .join('');

  describe(`contract: ${profile.protocol}`, () => {
    it('WIRE-1 streams text as several deltas, then usage and finish', async () => {
      // Frames further apart than the transport's coalescing window are separate reads, so
      // separate deltas (the frames of one read arrive as one delta, issue 22).
      const c = await client([{ text: 'Hello there, general Kenobi', delayMs: 40, usage: { input: 12, output: 5 } }]);
      const events = await collect(c);
      expect(events.filter((e) => e.type === 'text-delta').length).toBeGreaterThan(1);
      expect(joined(events, 'text-delta')).toBe('Hello there, general Kenobi');
      expect(events).toContainEqual({ type: 'usage', usage: expect.objectContaining({ inputTokens: 12, outputTokens: 5 }) });
      expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop', raw: profile.finishes.stop });
    });

    it('WIRE-1 streams reasoning before the text', async () => {
      const c = await client([{ reasoning: 'first I think', text: 'then I answer' }]);
      const events = await collect(c);
      expect(joined(events, 'reasoning-delta')).toBe('first I think');
      const firstReasoning = events.findIndex((e) => e.type === 'reasoning-delta');
      const firstText = events.findIndex((e) => e.type === 'text-delta');
      expect(firstReasoning).toBeGreaterThanOrEqual(0);
      expect(firstReasoning).toBeLessThan(firstText);
    });

    it('WIRE-1 emits one complete tool call with parsed arguments', async () => {
      const c = await client([{ toolCalls: [{ id: 'call_1', name: 'read', arguments: { path: 'a.txt' } }] }]);
      const events = await collect(c);
      const calls = events.filter((e) => e.type === 'tool-call');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ type: 'tool-call', name: 'read', input: { path: 'a.txt' } });
      expect(JSON.parse((calls[0] as { arguments: string }).arguments)).toEqual({ path: 'a.txt' });
      expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'tool_calls' });
    });

    it('WIRE-1 assembles several tool calls whose arguments are split across chunks', async () => {
      const c = await client([
        {
          text: 'Looking.',
          toolCalls: [
            { id: 'c_a', name: 'read', arguments: { path: 'src/index.ts', offset: 10, limit: 50 }, chunks: 5 },
            { id: 'c_b', name: 'grep', arguments: { pattern: 'TODO', include: '*.ts' }, chunks: 3 },
          ],
        },
      ]);
      const events = await collect(c);
      const calls = events.filter((e) => e.type === 'tool-call') as Array<{ name: string; input: unknown; id: string }>;
      expect(calls.map((x) => [x.name, x.input])).toEqual([
        ['read', { path: 'src/index.ts', offset: 10, limit: 50 }],
        ['grep', { pattern: 'TODO', include: '*.ts' }],
      ]);
      expect(new Set(calls.map((x) => x.id)).size).toBe(2);
    });

    it('sends the tool definitions with their JSON schema', async () => {
      const c = await client([{ text: 'ok' }]);
      const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
      await collect(c, { tools: [{ name: 'read', description: 'Read a file', parameters }] });
      expect(JSON.stringify(fake?.requests[0]?.body)).toContain('"Read a file"');
      expect(JSON.stringify(fake?.requests[0]?.body)).toContain('"required":["path"]');
    });

    for (const [name, reason] of [
      ['length', 'length'],
      ['contentFilter', 'content_filter'],
      ['other', 'other'],
    ] as const) {
      it(`normalises the ${name} finish and keeps the raw value`, async () => {
        const raw = profile.finishes[name];
        const c = await client([{ text: 'x', finish: raw }]);
        const events = await collect(c);
        expect(events.at(-1)).toEqual({ type: 'finish', reason, raw });
      });
    }

    it('WIRE-1 sends user image bytes with their MIME type, byte for byte', async () => {
      const c = await client([{ text: 'a red dot' }]);
      await collect(c, {
        messages: [
          userMessage([
            { type: 'text', text: 'what is this?' },
            { type: 'image', mime: 'image/png', data: PNG_BASE64 },
          ]),
        ],
      });
      const images = profile.userImages(fake?.requests[0]?.body);
      expect(images).toHaveLength(1);
      expect(images[0]?.data).toBe(PNG_BASE64);
      if (images[0]?.mime !== undefined) expect(images[0]?.mime).toBe('image/png');
    });

    it('WIRE-1 sends a user image by absolute URI, or refuses it before sending', async () => {
      const uri = 'https://example.com/cat.png';
      const c = await client([{ text: 'a cat' }]);
      const request = {
        messages: [
          userMessage([
            { type: 'text' as const, text: 'see' },
            { type: 'image' as const, mime: 'image/png', uri },
          ]),
        ],
      };
      if (profile.imageUri) {
        await collect(c, request);
        expect(profile.userImages(fake?.requests[0]?.body)).toEqual([expect.objectContaining({ uri })]);
      } else {
        const error = await failure(c, request);
        expect(error.kind).toBe('unsupported');
        expect(fake?.requests).toHaveLength(0);
      }
    });

    it('WIRE-4 sends tool results with text and images', async () => {
      const c = await client([{ text: 'I see it' }]);
      const history: ChatMessage[] = [
        userMessage('look at the screenshot'),
        { role: 'assistant', content: [{ type: 'tool-call', id: 'call_s', name: 'screenshot', arguments: '{}' }] },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              callId: 'call_s',
              name: 'screenshot',
              isError: false,
              content: [
                { type: 'text', text: 'captured' },
                { type: 'image', mime: 'image/png', data: PNG_BASE64 },
              ],
            },
          ],
        },
      ];
      await collect(c, { messages: history });
      const body = fake?.requests[0]?.body;
      expect(JSON.stringify(body)).toContain('captured');
      const images = profile.toolResultImages(body);
      expect(images).toHaveLength(1);
      expect(images[0]?.data).toBe(PNG_BASE64);
    });

    it('MODEL-1 refuses an image for a model without imageInput before any request is sent', async () => {
      const c = await client([{ text: 'never' }], { imageInput: false });
      expect(c.capabilities.imageInput).toBe(false);
      const error = await failure(c, { messages: [userMessage([{ type: 'image', mime: 'image/png', data: PNG_BASE64 }])] });
      expect(error.kind).toBe('unsupported');
      expect(error.message).toContain('imageInput');
      expect(fake?.requests).toHaveLength(0);
    });

    it('MODEL-1 refuses a tool-result image for a model without imageInput before sending', async () => {
      const c = await client([{ text: 'never' }], { imageInput: false });
      const error = await failure(c, {
        messages: [
          userMessage('shot'),
          { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'shot', arguments: '{}' }] },
          {
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                callId: 'c1',
                name: 'shot',
                isError: false,
                content: [{ type: 'image', mime: 'image/png', data: PNG_BASE64 }],
              },
            ],
          },
        ],
      });
      expect(error.kind).toBe('unsupported');
      expect(error.message).toContain('imageInput');
      expect(fake?.requests).toHaveLength(0);
    });

    it('MODEL-2 audioInput and videoInput are stored declarations that change no capability or request', async () => {
      const plain = await client([{ text: 'x' }], { imageInput: false });
      await collect(plain);
      const baseline = JSON.stringify(fake?.requests[0]?.body);
      const declared = await client([{ text: 'x' }], { imageInput: false, audioInput: true, videoInput: true });
      expect(declared.capabilities).toEqual(plain.capabilities);
      await collect(declared);
      expect(JSON.stringify(fake?.requests[0]?.body)).toBe(baseline);
    });

    it('MODEL-4 the adapter emits only text, reasoning, tool-call, usage and finish events', async () => {
      const c = await client([
        { reasoning: 'r', text: 'a b', toolCalls: [{ name: 'read', arguments: { path: 'x' } }], usage: { input: 1, output: 2 } },
      ]);
      const allowed = new Set([
        'text-delta',
        'reasoning-delta',
        'reasoning-state',
        'tool-call-delta',
        'tool-call',
        'usage',
        'finish',
      ]);
      const events = await collect(c);
      expect(events.filter((e) => !allowed.has(e.type))).toEqual([]);
      expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
    });

    it('CORE-2 a model that declares imageInput gets a multimodal client', async () => {
      const c = await client([{ text: 'x' }], { imageInput: true });
      expect(c.capabilities.imageInput).toBe(true);
    });

    const statuses: Array<[number, string, boolean]> = [
      [401, 'auth', false],
      [403, 'permission', false],
      [404, 'not_found', true],
      [408, 'request_timeout', true],
      [429, 'rate_limit', true],
      [500, 'server', true],
      [503, 'server', true],
    ];
    for (const [status, kind, retryable] of statuses) {
      it(`RETRY-${retryable ? '1' : '6'} classifies HTTP ${status} as ${kind}`, async () => {
        const c = await client([{ error: { status, message: `status ${status} says no` } }]);
        const error = await failure(c);
        expect(error).toMatchObject({ kind, status, provider: 'acme' });
        expect(error.retryable).toBe(retryable);
        expect(error.message).toContain('acme');
      });
    }

    it('RETRY-3 parses retry-after-ms and Retry-After into retryAfterMs', async () => {
      let c = await client([{ error: { status: 429, headers: { 'retry-after-ms': '300' } } }]);
      expect((await failure(c)).retryAfterMs).toBe(300);
      c = await client([{ error: { status: 503, headers: { 'retry-after': '3' } } }]);
      expect((await failure(c)).retryAfterMs).toBe(3000);
    });

    it('RETRY-6 maps the vendor quota error to quota, not retryable', async () => {
      const c = await client([{ error: profile.errors.quota }]);
      const error = await failure(c);
      expect(error.kind).toBe('quota');
      expect(error.retryable).toBe(false);
    });

    it('RETRY-6 maps the vendor context-overflow error to context_overflow, not retryable', async () => {
      const c = await client([{ error: profile.errors.contextOverflow }]);
      const error = await failure(c);
      expect(error.kind).toBe('context_overflow');
      expect(error.retryable).toBe(false);
    });

    if (profile.errors.invalidPrompt) {
      const invalidPrompt = profile.errors.invalidPrompt;
      it('RETRY-6 maps the vendor invalid-prompt error to invalid_prompt, not retryable', async () => {
        const c = await client([{ error: invalidPrompt }]);
        const error = await failure(c);
        expect(error.kind).toBe('invalid_prompt');
        expect(error.retryable).toBe(false);
      });
    }

    it('RETRY-1 reports a stream cut mid-way as incomplete_stream', async () => {
      const c = await client([{ text: 'one two three four five six seven eight', dropAfter: 3 }]);
      const error = await failure(c);
      expect(error.kind).toBe('incomplete_stream');
      expect(error.retryable).toBe(true);
    });

    it('RETRY-7 recognises a connection closed while the request was being sent', async () => {
      const c = await client([{ hangUpOnRequest: true }]);
      const error = await failure(c);
      expect(error.kind).toBe('body_write_closed');
      expect(error.retryable).toBe(true);
    });

    it('RETRY-8 stops at once with an AbortError when the signal aborts', async () => {
      const c = await client([{ textTokens: 300, delayMs: 5 }]);
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
}
