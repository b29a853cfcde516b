/** Stream decoding for Anthropic Messages SSE events into core chat events. */
import type { ChatEvent, FinishReason, ProviderErrorKind, Usage } from '@crystal/core';
import { ProviderError, parseArguments } from '@crystal/core';
import { REDACTED_THINKING_FORMAT, THINKING_FORMAT } from './encode.js';

export function normaliseFinish(raw: string): FinishReason {
  switch (raw) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
      return 'length';
    case 'refusal':
      return 'content_filter';
    default:
      // pause_turn, model_context_window_exceeded, and whatever comes next.
      return 'other';
  }
}

/** The error `type`s of the Messages API and the kind each one means. */
const ERROR_KINDS: Readonly<Record<string, ProviderErrorKind>> = {
  invalid_request_error: 'bad_request',
  authentication_error: 'auth',
  billing_error: 'quota',
  permission_error: 'permission',
  not_found_error: 'not_found',
  request_too_large: 'bad_request',
  rate_limit_error: 'rate_limit',
  api_error: 'server',
  timeout_error: 'timeout',
  overloaded_error: 'server',
};

/** Kind for an error `type` reported inside a stream (no HTTP status there); unknown types count as a server fault. */
export function kindForErrorType(type: string | undefined): ProviderErrorKind {
  return (type !== undefined ? ERROR_KINDS[type] : undefined) ?? 'server';
}

type Block =
  | { kind: 'text' }
  | { kind: 'thinking'; signature: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool'; ordinal: number; id: string; name: string; json: string; input: unknown }
  | { kind: 'other' };

interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export interface StreamEvent {
  type?: string;
  index?: number;
  message?: { usage?: WireUsage };
  content_block?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    data?: string;
    id?: string;
    name?: string;
    input?: unknown;
  };
  delta?: {
    type?: string;
    text?: string;
    thinking?: string;
    signature?: string;
    partial_json?: string;
    stop_reason?: string | null;
  };
  usage?: WireUsage;
  error?: { type?: string; message?: string };
}

const num = (value: number | null | undefined): number | undefined => (typeof value === 'number' ? value : undefined);

/**
 * Stateful decoder: feed each parsed event to `push`; once `message_stop` arrives `stopped` is
 * true, and `close()` yields the usage and the finish.
 */
export class MessagesStreamDecoder {
  private readonly blocks = new Map<number, Block>();
  private tools = 0;
  private usage: WireUsage = {};
  private sawUsage = false;
  private stopReason: string | undefined;
  stopped = false;

  constructor(private readonly provider: string) {}

  /** Whether the stream said how it ended (`message_delta.stop_reason`). */
  get finished(): boolean {
    return this.stopReason !== undefined;
  }

  push(event: StreamEvent, name: string | undefined, out: ChatEvent[]): void {
    switch (event.type ?? name) {
      case 'message_start':
        this.mergeUsage(event.message?.usage);
        break;
      case 'content_block_start':
        this.start(event.index ?? 0, event.content_block ?? {}, out);
        break;
      case 'content_block_delta':
        this.delta(event.index ?? 0, event.delta ?? {}, out);
        break;
      case 'content_block_stop':
        this.stop(event.index ?? 0, out);
        break;
      case 'message_delta':
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason;
        this.mergeUsage(event.usage);
        break;
      case 'message_stop':
        this.stopped = true;
        break;
      case 'error':
        throw this.streamError(event);
      default:
        // ping, and event types added later.
        break;
    }
  }

  /** The closing events: usage, then the finish. Call only when `finished`. */
  *close(): Generator<ChatEvent> {
    if (this.sawUsage) yield { type: 'usage', usage: this.totalUsage() };
    if (this.stopReason !== undefined) yield { type: 'finish', reason: normaliseFinish(this.stopReason), raw: this.stopReason };
  }

  private start(index: number, block: NonNullable<StreamEvent['content_block']>, out: ChatEvent[]): void {
    switch (block.type) {
      case 'text':
        this.blocks.set(index, { kind: 'text' });
        if (block.text) out.push({ type: 'text-delta', text: block.text });
        break;
      case 'thinking':
        this.blocks.set(index, { kind: 'thinking', signature: block.signature ?? '' });
        if (block.thinking) out.push({ type: 'reasoning-delta', text: block.thinking });
        break;
      case 'redacted_thinking':
        this.blocks.set(index, { kind: 'redacted', data: block.data ?? '' });
        break;
      case 'tool_use': {
        const ordinal = this.tools++;
        const id = block.id || `toolu_${ordinal}`;
        const name = block.name ?? '';
        this.blocks.set(index, { kind: 'tool', ordinal, id, name, json: '', input: block.input });
        out.push({ type: 'tool-call-delta', index: ordinal, id, name, argumentsDelta: '' });
        break;
      }
      default:
        // server_tool_use, web_search_tool_result and other blocks this client does not use.
        this.blocks.set(index, { kind: 'other' });
        break;
    }
  }

  private delta(index: number, delta: NonNullable<StreamEvent['delta']>, out: ChatEvent[]): void {
    const block = this.blocks.get(index);
    switch (delta.type) {
      case 'text_delta':
        if (delta.text) out.push({ type: 'text-delta', text: delta.text });
        break;
      case 'thinking_delta':
        if (delta.thinking) out.push({ type: 'reasoning-delta', text: delta.thinking });
        break;
      case 'signature_delta':
        if (block?.kind === 'thinking') block.signature += delta.signature ?? '';
        break;
      case 'input_json_delta':
        if (block?.kind === 'tool') {
          const piece = delta.partial_json ?? '';
          block.json += piece;
          if (piece !== '') out.push({ type: 'tool-call-delta', index: block.ordinal, argumentsDelta: piece });
        }
        break;
      default:
        // citations_delta and later additions.
        break;
    }
  }

  private stop(index: number, out: ChatEvent[]): void {
    const block = this.blocks.get(index);
    this.blocks.delete(index);
    if (block?.kind === 'thinking' && block.signature !== '') {
      out.push({ type: 'reasoning-state', format: THINKING_FORMAT, data: block.signature });
    } else if (block?.kind === 'redacted' && block.data !== '') {
      out.push({ type: 'reasoning-state', format: REDACTED_THINKING_FORMAT, data: block.data });
    } else if (block?.kind === 'tool') {
      // No input_json_delta at all means the input of content_block_start is the whole input.
      const raw = block.json !== '' ? block.json : JSON.stringify(block.input ?? {});
      out.push({ type: 'tool-call', id: block.id, name: block.name, arguments: raw, input: parseArguments(raw) });
    }
  }

  /** `message_delta` usage is cumulative; a field it carries replaces the one from `message_start`. */
  private mergeUsage(usage: WireUsage | undefined): void {
    if (!usage) return;
    this.sawUsage = true;
    for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      const value = num(usage[key]);
      if (value !== undefined) this.usage[key] = value;
    }
  }

  /**
   * `inputTokens` counts the whole prompt like the other wires do: Anthropic's `input_tokens` is
   * only the uncached part, so cache writes and reads are added; cache reads are `cachedInputTokens`.
   */
  private totalUsage(): Usage {
    const cacheRead = this.usage.cache_read_input_tokens ?? 0;
    const cacheWrite = this.usage.cache_creation_input_tokens ?? 0;
    return {
      inputTokens: (this.usage.input_tokens ?? 0) + cacheRead + cacheWrite,
      outputTokens: this.usage.output_tokens ?? 0,
      ...(cacheRead > 0 ? { cachedInputTokens: cacheRead } : {}),
    };
  }

  private streamError(event: StreamEvent): ProviderError {
    const type = event.error?.type;
    const message = event.error?.message ?? 'no error message';
    return new ProviderError({
      kind: kindForErrorType(type),
      provider: this.provider,
      message: `${this.provider} reported an error mid-stream: ${message}${type ? ` (${type})` : ''}`,
      ...(type ? { code: type } : {}),
    });
  }
}
