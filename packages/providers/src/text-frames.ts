/**
 * Text frames without a JSON.parse each (issue 22: `crystal run` against the node:http floor).
 *
 * Most frames of a Chat Completions stream differ from the one before only in the text they
 * carry: `{"id":…,"choices":[{"index":0,"delta":{"content":"<text>"},"finish_reason":null}]}`;
 * so do an Anthropic stream's `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"<text>"}}`.
 * Parsing each costs about 1.5 us and ten objects for the garbage collector; on a 2,000-token
 * reply, which arrives in a few large reads, that is the client's own CPU between the last byte
 * and the reply's save. So the last frame that carried only text (`textFrameTemplate`) becomes a
 * template: its bytes before the text's opening quote and from its closing quote on. A frame with
 * exactly those bytes around a run of characters that needs no unescaping (no `"`, no `\`, no
 * control character) parses, by JSON's grammar, to the same object with that run as its text, so
 * the decoder's events for it are that text's delta (`textOfFrame`); any other frame (a finish,
 * usage, a tool call, an escape in the text, another id, a provider's per-frame padding) is
 * parsed whole, as before. Not a JSON parser: a comparison of bytes with a frame JSON.parse read.
 */
import type { ChatEvent } from '@crystal/core';

/** The delta's text fields and the event each streams (ChatChunkDecoder). */
const TEXT_FIELDS: Readonly<Record<string, 'text-delta' | 'reasoning-delta'>> = {
  content: 'text-delta',
  reasoning_content: 'reasoning-delta',
  reasoning: 'reasoning-delta',
};

/**
 * One stream's shortcut: `take` hands on the events of a frame the last text-only frame's
 * template reads, else returns false and the frame is parsed; `learn` makes a parsed frame the
 * template when `templateOf` finds it carried only text.
 */
export class TextFrames {
  private template: TextFrameTemplate | undefined;
  /** The delta `take` pushed last: while it is still the last event of `out`, the next text of its kind extends it. */
  private last: { type: TextFrameTemplate['type']; text: string } | undefined;

  constructor(private readonly templateOf: (data: string, frame: Record<string, unknown>) => TextFrameTemplate | undefined) {}

  take(data: string, out: ChatEvent[]): boolean {
    const template = this.template;
    if (template === undefined) return false;
    const text = textOfFrame(data, template);
    if (text === undefined) return false;
    // The decoder's events for it: the delta, when not empty. Neighbouring deltas of one kind reach the consumer
    // joined (wire-client.ts mergeDeltas), so a frame that follows one of these extends its event instead of making
    // its own: a 2,000-token reply's frames make one event per network read, not 2,000 objects (issue 22). Only an
    // event made here, and still the last of `out`, is extended; the wire client empties `out` for every read, so
    // an event the consumer already holds never changes.
    if (text === '') return true;
    const last = this.last;
    if (last !== undefined && last.type === template.type && out[out.length - 1] === last) last.text += text;
    else {
      const event = { type: template.type, text };
      this.last = event;
      out.push(event);
    }
    return true;
  }

  learn(data: string, frame: Record<string, unknown>): void {
    this.template = this.templateOf(data, frame) ?? this.template;
  }
}

export interface TextFrameTemplate {
  /** The frame's text up to and with the opening quote of its text. */
  readonly head: string;
  /** The frame's text from the closing quote of its text on. */
  readonly tail: string;
  readonly type: 'text-delta' | 'reasoning-delta';
}

/**
 * The template of a frame (its text `data`, `chunk` as JSON.parse read it) that only streams
 * text or reasoning: no error, no usage, one choice (index 0) without a finish, a delta whose
 * fields are a role, nulls and one non-empty text; its text written as JSON.stringify writes it,
 * once in the frame. Undefined for any other frame.
 */
export function textFrameTemplate(data: string, chunk: Record<string, unknown>): TextFrameTemplate | undefined {
  if (chunk.error !== undefined || (chunk.usage !== undefined && chunk.usage !== null)) return undefined;
  const choices = chunk.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const choice = choices[0] as { index?: unknown; delta?: unknown; finish_reason?: unknown } | null;
  if (choice === null || typeof choice !== 'object') return undefined;
  if ((choice.index ?? 0) !== 0 || (choice.finish_reason !== undefined && choice.finish_reason !== null)) return undefined;
  const delta = choice.delta;
  if (delta === null || typeof delta !== 'object' || Array.isArray(delta)) return undefined;
  let field: string | undefined;
  for (const [key, value] of Object.entries(delta)) {
    if (key === 'role' || value === null) continue;
    if (field !== undefined || TEXT_FIELDS[key] === undefined || typeof value !== 'string' || value === '') return undefined;
    field = key;
  }
  if (field === undefined) return undefined;
  return templateAround(
    data,
    field,
    (delta as Record<string, string>)[field] as string,
    TEXT_FIELDS[field] as TextFrameTemplate['type'],
  );
}

/**
 * The template of an Anthropic Messages frame that only streams text or thinking: a
 * `content_block_delta` whose delta is a non-empty `text_delta` or `thinking_delta`
 * (MessagesStreamDecoder emits its text and changes no state for it). Undefined for any other.
 */
export function messagesTextTemplate(data: string, event: Record<string, unknown>): TextFrameTemplate | undefined {
  if (event.type !== 'content_block_delta') return undefined;
  const delta = event.delta as Record<string, unknown> | null | undefined;
  if (delta === null || typeof delta !== 'object' || Array.isArray(delta)) return undefined;
  const field = delta.type === 'text_delta' ? 'text' : delta.type === 'thinking_delta' ? 'thinking' : undefined;
  if (field === undefined) return undefined;
  const text = delta[field];
  if (typeof text !== 'string' || text === '') return undefined;
  return templateAround(data, field, text, field === 'text' ? 'text-delta' : 'reasoning-delta');
}

/** The template around `"field":"text"`, when the frame writes it as JSON.stringify does, once. */
function templateAround(
  data: string,
  field: string,
  text: string,
  type: TextFrameTemplate['type'],
): TextFrameTemplate | undefined {
  const literal = JSON.stringify(text);
  const pair = `"${field}":${literal}`;
  const at = data.indexOf(pair);
  if (at < 0 || data.indexOf(pair, at + 1) >= 0) return undefined;
  const open = at + field.length + 3;
  return { head: copyOf(data.slice(0, open + 1)), tail: copyOf(data.slice(open + literal.length - 1)), type };
}

/**
 * A string of its own (a slice would keep the SSE chunk it was cut from alive for the rest of
 * the stream, and compares more slowly).
 */
function copyOf(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/**
 * The text of a frame that is `template` around a run that needs no unescaping; undefined when
 * it is not, and the frame is then parsed whole.
 */
function textOfFrame(data: string, template: TextFrameTemplate): string | undefined {
  const { head, tail } = template;
  const end = data.length - tail.length;
  // Compared as slices: V8's startsWith/endsWith took about 0.8 us a frame on the SSE parser's
  // sliced strings, as much as the JSON.parse it replaces; two slices and === take about 0.2.
  if (end < head.length || data.slice(0, head.length) !== head || data.slice(end) !== tail) return undefined;
  for (let i = head.length; i < end; i++) {
    const code = data.charCodeAt(i);
    // A quote, a backslash or a control character: JSON.parse decides (an escape, or an error).
    if (code === 0x22 || code === 0x5c || code < 0x20) return undefined;
  }
  return data.slice(head.length, end);
}
