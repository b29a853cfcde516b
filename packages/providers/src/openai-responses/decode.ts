/** Stream decoding for Responses API events (`response.*`) into core chat events. */
import type { ChatEvent, FinishReason, ProviderErrorKind, Usage } from '@crystal/core';
import { parseArguments, ProviderError } from '@crystal/core';
import { encodeReasoningState, REASONING_FORMAT } from './encode.js';

interface CallAccumulator {
  readonly ordinal: number;
  callId: string;
  name: string;
  arguments: string;
  emitted: boolean;
}

interface WireItem {
  readonly id?: string;
  readonly type?: string;
  readonly call_id?: string;
  readonly name?: string;
  readonly arguments?: string;
  readonly encrypted_content?: string | null;
  readonly summary?: ReadonlyArray<{ readonly type?: string; readonly text?: string }>;
}

interface WireResponse {
  readonly status?: string;
  readonly incomplete_details?: { readonly reason?: string } | null;
  readonly error?: { readonly code?: string; readonly message?: string } | null;
  readonly usage?: {
    readonly input_tokens?: number;
    readonly output_tokens?: number;
    readonly input_tokens_details?: { readonly cached_tokens?: number } | null;
    readonly output_tokens_details?: { readonly reasoning_tokens?: number } | null;
  } | null;
}

interface WireEvent {
  readonly type?: string;
  readonly output_index?: number;
  readonly item_id?: string;
  readonly summary_index?: number;
  readonly content_index?: number;
  readonly delta?: string;
  readonly arguments?: string;
  readonly item?: WireItem;
  readonly response?: WireResponse;
  readonly code?: string;
  readonly message?: string;
  readonly error?: { readonly code?: string; readonly type?: string; readonly message?: string };
}

/**
 * The finish for a raw value: `completed` is stop (tool_calls when the response called
 * functions), incomplete reasons `max_output_tokens` / `content_filter` map to length /
 * content_filter, anything else is other.
 */
export function normaliseFinish(raw: string, calledTools: boolean): FinishReason {
  switch (raw) {
    case 'completed':
      return calledTools ? 'tool_calls' : 'stop';
    case 'max_output_tokens':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}

/** Kind of an error reported inside the stream (`response.failed` or an `error` event). */
export function streamErrorKind(code: string | undefined, message: string | undefined): ProviderErrorKind {
  const c = code ?? '';
  if (c === 'rate_limit_exceeded') return 'rate_limit';
  if (c === 'server_error') return 'server';
  if (c === 'insufficient_quota') return 'quota';
  if (c === 'invalid_prompt') return 'invalid_prompt';
  if (c === 'context_length_exceeded' || /context window|context length/i.test(message ?? '')) return 'context_overflow';
  // invalid_image, image_too_large, unsupported_image_media_type, ...: the same request fails again.
  if (/image/i.test(c)) return 'bad_request';
  return 'server';
}

/** `Please try again in 1.2s` / `in 300ms` in a rate-limit message, in milliseconds. */
function retryAfterFromMessage(message: string | undefined): number | undefined {
  const match = /try again in (\d+(?:\.\d+)?)\s*(ms|s)\b/i.exec(message ?? '');
  if (!match) return undefined;
  const value = Number(match[1]);
  return Math.round(match[2]?.toLowerCase() === 'ms' ? value : value * 1000);
}

export function streamError(provider: string, code: string | undefined, message: string | undefined): ProviderError {
  const kind = streamErrorKind(code, message);
  const retryAfterMs = kind === 'rate_limit' ? retryAfterFromMessage(message) : undefined;
  return new ProviderError({
    kind,
    provider,
    message: `${provider} reported an error mid-stream: ${message ?? code ?? 'no error message'}`,
    ...(code ? { code } : {}),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/** Stateful decoder: feed parsed events; it yields the finish last and then `finished` is true. */
export class ResponsesEventDecoder {
  private readonly calls = new Map<string, CallAccumulator>();
  private reasoningKey: string | undefined;
  private reasoningSeen = false;
  private finishEvent: ChatEvent | undefined;

  constructor(private readonly provider: string) {}

  get finished(): boolean {
    return this.finishEvent !== undefined;
  }

  push(event: WireEvent, eventName: string | undefined, out: ChatEvent[]): void {
    if (this.finishEvent) return;
    switch (event.type ?? eventName) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (event.delta) out.push({ type: 'text-delta', text: event.delta });
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (event.delta) this.reasoningDelta(event, out);
        break;
      case 'response.output_item.added':
        if (event.item?.type === 'function_call') this.callAdded(event, out);
        break;
      case 'response.function_call_arguments.delta':
        if (event.delta) this.argumentsDelta(event, out);
        break;
      case 'response.function_call_arguments.done': {
        const acc = this.calls.get(keyOf(event));
        if (acc && typeof event.arguments === 'string') acc.arguments = event.arguments;
        break;
      }
      case 'response.output_item.done':
        if (event.item?.type === 'function_call') this.callDone(event, out);
        else if (event.item?.type === 'reasoning') this.reasoningDone(event.item, out);
        break;
      case 'response.completed':
      case 'response.incomplete':
        this.complete(event, out);
        break;
      case 'response.failed': {
        const error = event.response?.error;
        throw streamError(
          this.provider,
          error?.code,
          error?.message ?? `the response failed (status ${event.response?.status ?? 'failed'})`,
        );
      }
      case 'error':
        throw streamError(
          this.provider,
          event.code ?? event.error?.code ?? event.error?.type,
          event.message ?? event.error?.message,
        );
      default:
        break;
    }
  }

  /** A blank line between summary parts (or reasoning items), so paragraphs do not run together. */
  private reasoningDelta(event: WireEvent, out: ChatEvent[]): void {
    const key = `${event.item_id ?? event.output_index ?? ''}:${event.summary_index ?? event.content_index ?? 0}`;
    if (this.reasoningSeen && key !== this.reasoningKey) out.push({ type: 'reasoning-delta', text: '\n\n' });
    this.reasoningKey = key;
    this.reasoningSeen = true;
    out.push({ type: 'reasoning-delta', text: event.delta as string });
  }

  private accumulator(event: WireEvent): CallAccumulator {
    const key = keyOf(event);
    let acc = this.calls.get(key);
    if (!acc) {
      acc = { ordinal: this.calls.size, callId: '', name: '', arguments: '', emitted: false };
      this.calls.set(key, acc);
    }
    return acc;
  }

  private callAdded(event: WireEvent, out: ChatEvent[]): void {
    const item = event.item as WireItem;
    const acc = this.accumulator(event);
    if (item.call_id) acc.callId = item.call_id;
    if (item.name) acc.name = item.name;
    const initial = item.arguments ?? '';
    acc.arguments += initial;
    out.push({
      type: 'tool-call-delta',
      index: acc.ordinal,
      ...(acc.callId ? { id: acc.callId } : {}),
      ...(acc.name ? { name: acc.name } : {}),
      argumentsDelta: initial,
    });
  }

  private argumentsDelta(event: WireEvent, out: ChatEvent[]): void {
    const acc = this.accumulator(event);
    acc.arguments += event.delta as string;
    out.push({ type: 'tool-call-delta', index: acc.ordinal, argumentsDelta: event.delta as string });
  }

  private callDone(event: WireEvent, out: ChatEvent[]): void {
    const item = event.item as WireItem;
    const acc = this.accumulator(event);
    if (item.call_id) acc.callId = item.call_id;
    if (item.name) acc.name = item.name;
    if (typeof item.arguments === 'string') acc.arguments = item.arguments;
    this.emitCall(acc, out);
  }

  private emitCall(acc: CallAccumulator, out: ChatEvent[]): void {
    if (acc.emitted) return;
    acc.emitted = true;
    out.push({
      type: 'tool-call',
      id: acc.callId || `call_${acc.ordinal}`,
      name: acc.name,
      arguments: acc.arguments,
      input: parseArguments(acc.arguments),
    });
  }

  /**
   * A reasoning item with encrypted content becomes replay state. The engine closes one
   * reasoning part per state event, so each state holds exactly the item that just finished.
   */
  private reasoningDone(item: WireItem, out: ChatEvent[]): void {
    if (typeof item.encrypted_content !== 'string' || item.encrypted_content === '') return;
    const summary = (item.summary ?? []).map((s) => s.text ?? '').filter((text) => text !== '');
    const stored = { ...(item.id ? { id: item.id } : {}), encrypted_content: item.encrypted_content, summary };
    out.push({ type: 'reasoning-state', format: REASONING_FORMAT, data: encodeReasoningState([stored]) });
  }

  private complete(event: WireEvent, out: ChatEvent[]): void {
    const response = event.response ?? {};
    // Calls whose output_item.done never came (some compatible servers) close here.
    const pending = [...this.calls.values()].filter((acc) => !acc.emitted).sort((a, b) => a.ordinal - b.ordinal);
    for (const acc of pending) this.emitCall(acc, out);
    const usage = usageOf(response);
    if (usage) out.push({ type: 'usage', usage });
    const incomplete = event.type === 'response.incomplete' || response.status === 'incomplete';
    const raw = incomplete ? (response.incomplete_details?.reason ?? 'incomplete') : (response.status ?? 'completed');
    this.finishEvent = { type: 'finish', reason: normaliseFinish(raw, this.calls.size > 0), raw };
    out.push(this.finishEvent);
  }
}

function keyOf(event: WireEvent): string {
  return typeof event.output_index === 'number' ? `#${event.output_index}` : `id:${event.item_id ?? event.item?.id ?? ''}`;
}

function usageOf(response: WireResponse): Usage | undefined {
  const u = response.usage;
  if (!u) return undefined;
  const reasoning = u.output_tokens_details?.reasoning_tokens;
  const cached = u.input_tokens_details?.cached_tokens;
  return {
    inputTokens: u.input_tokens ?? 0,
    outputTokens: u.output_tokens ?? 0,
    ...(typeof reasoning === 'number' ? { reasoningTokens: reasoning } : {}),
    ...(typeof cached === 'number' ? { cachedInputTokens: cached } : {}),
  };
}
