/**
 * Issue 22: Chat Completions frames that differ from the last text-only frame only in their text
 * are not parsed (src/text-frames.ts). What that must never change: the events. Every
 * real Chat Completions and DeepSeek stream in `../shared/realstreams/`, and frames built to sit
 * on each edge of the rule, decode to exactly what ChatChunkDecoder makes of a JSON.parse of
 * every frame, the reference the realstreams test checks against the vendors' documentation.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ChatEvent } from '@crystal/core';
import { ProviderError } from '@crystal/core';
import { repoRoot } from '@crystal/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AnthropicClient } from '../src/anthropic/client.js';
import { MessagesStreamDecoder, type StreamEvent } from '../src/anthropic/decode.js';
import { OpenAiChatClient } from '../src/openai-chat/client.js';
import { ChatChunkDecoder } from '../src/openai-chat/decode.js';
import type { SseEvent } from '../src/sse.js';

const FIXTURES = resolve(repoRoot, '../shared/realstreams/fixtures');

afterEach(() => {
  vi.restoreAllMocks();
});

function chatClient(protocol: 'openai' | 'deepseek' = 'openai'): OpenAiChatClient {
  return new OpenAiChatClient({ name: 'acme', protocol, baseUri: 'http://127.0.0.1:9/v1', apiKey: 'sk-test' }, { id: 'm' });
}

/** The body's SSE events, split by the client's own frame source. */
function framesOf(body: string | Uint8Array, client: OpenAiChatClient | AnthropicClient = chatClient()): SseEvent[] {
  const source = client.frameSource();
  const out: SseEvent[] = [];
  source.feed(typeof body === 'string' ? Buffer.from(body) : body, out);
  source.end(out);
  return out;
}

interface Decoded {
  readonly events: ChatEvent[];
  readonly error?: string;
}

function messagesClient(): AnthropicClient {
  return new AnthropicClient(
    { name: 'acme', protocol: 'anthropic', baseUri: 'http://127.0.0.1:9/v1', apiKey: 'sk-test' },
    { id: 'm' },
  );
}

/** The client's decoder (with the shortcut) over the frames, closing events included. */
function decoded(frames: readonly SseEvent[], client: OpenAiChatClient | AnthropicClient = chatClient()): Decoded {
  const decoder = client.frameDecoder();
  const events: ChatEvent[] = [];
  try {
    // As the wire client does: nothing after the stream's own end (`[DONE]`, `message_stop`).
    for (const frame of frames) {
      if (decoder.done) break;
      decoder.push(frame, events);
    }
    events.push(...decoder.close());
  } catch (error) {
    return { events, error: error instanceof ProviderError ? error.kind : String(error) };
  }
  return { events };
}

/** The reference: every frame parsed with JSON.parse and handed to ChatChunkDecoder. */
function reference(frames: readonly SseEvent[]): Decoded {
  const inner = new ChatChunkDecoder();
  const events: ChatEvent[] = [];
  for (const frame of frames) {
    if (frame.data === '[DONE]') {
      inner.endOfStream();
      break;
    }
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(frame.data) as Record<string, unknown>;
    } catch {
      return { events, error: 'incomplete_stream' };
    }
    if (chunk.error) return { events, error: 'server' };
    inner.push(chunk, events);
  }
  events.push(...inner.close());
  return { events };
}

/**
 * Neighbouring text (or reasoning) deltas joined, as the wire client hands them to its consumer (mergeDeltas): the
 * shortcut extends its own last delta instead of making one per frame, so events are compared as the consumer sees them.
 */
function joined(result: Decoded): Decoded {
  const events: ChatEvent[] = [];
  for (const event of result.events) {
    const last = events.at(-1);
    if ((event.type === 'text-delta' || event.type === 'reasoning-delta') && last?.type === event.type) {
      events[events.length - 1] = { type: event.type, text: last.text + event.text };
    } else events.push(event);
  }
  return { ...result, events };
}

/** The reference for Anthropic Messages: every frame parsed and handed to MessagesStreamDecoder. */
function messagesReference(frames: readonly SseEvent[]): Decoded {
  const inner = new MessagesStreamDecoder('acme');
  const events: ChatEvent[] = [];
  try {
    for (const frame of frames) {
      if (inner.stopped) break;
      inner.push(JSON.parse(frame.data) as StreamEvent, frame.event, events);
    }
    events.push(...inner.close());
  } catch (error) {
    return { events, error: error instanceof ProviderError ? error.kind : String(error) };
  }
  return { events };
}

/** A DeepSeek-shaped text frame. */
const frame = (delta: string, tail = '"logprobs":null,"finish_reason":null}]}', id = 'a1') =>
  `data: {"id":"${id}","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":${delta},${tail}\n\n`;

describe('Chat Completions text frames without a parse each (issue 22)', () => {
  const fixtures = readdirSync(FIXTURES).filter((name) => /^(chat|deepseek)-.*\.sse$/.test(name));

  it('covers every Chat Completions and DeepSeek real stream', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(14);
  });

  for (const fixture of fixtures) {
    it(`${fixture}: the same events as a JSON.parse of every frame`, () => {
      const frames = framesOf(readFileSync(join(FIXTURES, fixture)));
      expect(frames.length).toBeGreaterThan(1);
      expect(joined(decoded(frames))).toEqual(joined(reference(frames)));
    });
  }

  const messages = readdirSync(FIXTURES).filter((name) => /^anthropic-.*\.sse$/.test(name));
  for (const fixture of messages) {
    it(`${fixture}: the same events as a JSON.parse of every frame (Anthropic Messages)`, () => {
      const client = messagesClient();
      const frames = framesOf(readFileSync(join(FIXTURES, fixture)), client);
      expect(frames.length).toBeGreaterThan(1);
      expect(joined(decoded(frames, client))).toEqual(joined(messagesReference(frames)));
    });
  }

  it('Anthropic text and thinking deltas after the first of each are not parsed; an escape, a signature or another block is', () => {
    const delta = (index: number, body: string) =>
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":${body}}\n\n`;
    const body = [
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}\n\n',
      delta(0, '{"type":"thinking_delta","thinking":"hmm"}'),
      delta(0, '{"type":"thinking_delta","thinking":" more"}'),
      delta(0, '{"type":"signature_delta","signature":"sig"}'),
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}\n\n',
      delta(1, '{"type":"text_delta","text":"Hello"}'),
      delta(1, '{"type":"text_delta","text":" wor"}'),
      delta(1, '{"type":"text_delta","text":"ld \\"q\\"\\n"}'),
      delta(1, '{"type":"text_delta","text":"!"}'),
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].join('');
    const client = messagesClient();
    const frames = framesOf(body, client);
    const texts = new Set(frames.map((f) => f.data));
    const parse = vi.spyOn(JSON, 'parse');
    const result = decoded(frames, client);
    const parsed = parse.mock.calls.filter(([text]) => texts.has(text as string)).length;
    parse.mockRestore();
    expect(result).toEqual(messagesReference(frames));
    expect(result.events.flatMap((e) => (e.type === 'text-delta' ? [e.text] : [])).join('|')).toBe('Hello| wor|ld "q"\n|!');
    expect(result.events.flatMap((e) => (e.type === 'reasoning-delta' ? [e.text] : [])).join('|')).toBe('hmm| more');
    expect(result.events).toContainEqual({ type: 'reasoning-state', format: expect.any(String), data: 'sig' });
    // Not parsed: the second thinking delta, " wor" and "!" (the escaped text is parsed, and keeps the template).
    expect(parsed).toBe(frames.length - 3);
  });

  it('a real DeepSeek reasoning stream is decoded with few parses: its frames differ in their text only', () => {
    const frames = framesOf(readFileSync(join(FIXTURES, 'deepseek-reasoning.sse')));
    const texts = new Set(frames.map((f) => f.data));
    const { events } = reference(frames);
    const parse = vi.spyOn(JSON, 'parse');
    const result = decoded(frames, chatClient('deepseek'));
    expect(events.filter((e) => e.type === 'reasoning-delta').length).toBeGreaterThan(50);
    expect(events.filter((e) => e.type === 'text-delta').length).toBeGreaterThan(10);
    expect(joined(result)).toEqual(joined({ events }));
    // The frames the shortcut read extend one event per run instead of making one each.
    expect(result.events.length).toBeLessThan(events.length / 2);
    // Parsed: the role frame, each switch between reasoning and text, the finish and usage, and
    // each frame whose text has an escape (this reasoning quotes a lot: "a", "b", "\n").
    // 41 of its 221 frames.
    const parsed = parse.mock.calls.filter(([text]) => texts.has(text as string)).length;
    expect(parsed).toBeLessThan(frames.length / 4);
  });

  it('a frame around an escape, a quote, a control character, other ids or another field is parsed whole', () => {
    const body = [
      frame('{"role":"assistant","content":""}'),
      frame('{"content":"plain"}'),
      // An empty text through the template: no event, as ChatChunkDecoder makes none.
      frame('{"content":""}'),
      // Escapes JSON.parse decodes: a newline, a quote, a backslash, a code point.
      frame('{"content":"a\\nb"}'),
      frame('{"content":"say \\"hi\\""}'),
      frame('{"content":"back\\\\slash"}'),
      frame('{"content":"\\u00e9t\\u00e9"}'),
      // Raw non-ASCII needs no unescaping.
      frame('{"content":"été ✓"}'),
      // The same bytes before and after, but two fields: the run between holds quotes.
      frame('{"content":"x","refusal":"no"}'),
      // Another id, then the template again.
      frame('{"content":"other id"}', undefined, 'b2'),
      frame('{"content":"same id"}'),
      // Reasoning beside a null text, then text beside a null reasoning.
      frame('{"content":null,"reasoning_content":"think"}'),
      frame('{"content":null,"reasoning_content":" more"}'),
      frame('{"content":"answer","reasoning_content":null}'),
      frame('{"content":" done","reasoning_content":null}'),
      // An empty text, a tool call, the finish, usage.
      frame('{"content":""}'),
      frame('{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read","arguments":"{}"}}]}'),
      frame('{"content":"after"}', '"logprobs":null,"finish_reason":"tool_calls"}]}'),
      'data: {"id":"a1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9}}\n\n',
      'data: [DONE]\n\n',
    ].join('');
    const frames = framesOf(body);
    const result = decoded(frames);
    expect(result).toEqual(reference(frames));
    const text = result.events.flatMap((e) => (e.type === 'text-delta' ? [e.text] : [])).join('|');
    expect(text).toBe('plain|a\nb|say "hi"|back\\slash|été|été ✓|x|other id|same id|answer| done|after');
    const reasoning = result.events.flatMap((e) => (e.type === 'reasoning-delta' ? [e.text] : [])).join('|');
    expect(reasoning).toBe('think| more');
    expect(result.events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls', raw: 'tool_calls' });
  });

  it('a run of text frames makes one event; an event handed on (a new read) or made by the parse is never extended', () => {
    const texts = ['one', ' two', ' three', ' four'];
    const frames = framesOf(texts.map((text) => frame(`{"content":"${text}"}`)).join(''));
    const decoder = chatClient().frameDecoder();
    // As the wire client does: one array per network read, emptied before the next.
    const first: ChatEvent[] = [];
    decoder.push(frames[0] as SseEvent, first);
    decoder.push(frames[1] as SseEvent, first);
    decoder.push(frames[2] as SseEvent, first);
    // "one" was parsed (its own event); " two" and " three" went through the template, joined in one.
    expect(first).toEqual([
      { type: 'text-delta', text: 'one' },
      { type: 'text-delta', text: ' two three' },
    ]);
    const handedOn = first[1];
    const second: ChatEvent[] = [];
    decoder.push(frames[3] as SseEvent, second);
    expect(second).toEqual([{ type: 'text-delta', text: ' four' }]);
    expect(handedOn).toEqual({ type: 'text-delta', text: ' two three' });
    // 2,000 text frames after the first: two events, not 2,001.
    const many = framesOf(Array.from({ length: 2001 }, (_, i) => frame(`{"content":"t${i} "}`)).join(''));
    const result = decoded(many);
    expect(result.events).toHaveLength(2);
    expect(joined(result)).toEqual(joined(reference(many)));
  });

  it('a raw control character in a text is still an invalid stream, after a template as before it', () => {
    const frames = framesOf(`${frame('{"content":"ok"}')}${frame('{"content":"tab\there"}')}`);
    expect(frames).toHaveLength(2);
    const result = decoded(frames);
    expect(result.error).toBe('incomplete_stream');
    expect(result).toEqual(reference(frames));
  });

  it('a text that repeats in the frame makes no template (which of the two is the text is not known)', () => {
    const twice = (text: string) =>
      `data: {"id":"x","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}],"echo":{"content":"${text}"}}\n\n`;
    const frames = framesOf(`${twice('a')}${twice('b')}`);
    const parse = vi.spyOn(JSON, 'parse');
    const result = decoded(frames);
    expect(parse).toHaveBeenCalledTimes(2);
    expect(result).toEqual(reference(frames));
  });
});
