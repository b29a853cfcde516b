/** Stream decoding for Chat Completions chunks into core chat events. */
import type { ChatEvent, FinishReason } from '@crystal/core';
import { parseArguments } from '@crystal/core';

interface ToolCallAccumulator {
  id: string;
  name: string;
  arguments: string;
}

export function normaliseFinish(raw: string): FinishReason {
  switch (raw) {
    case 'stop':
    case 'end_turn':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}

/**
 * A tool name in a later delta: a repeat of the name so far (or the whole name again, as some
 * gateways send with every fragment) sets it; only a true fragment is appended.
 */
function mergeName(current: string, incoming: string): string {
  if (current === '' || incoming === current || incoming.startsWith(current)) return incoming;
  return current + incoming;
}

/** Stateful decoder: feed parsed chunks, then `finish()` yields the closing events. */
export class ChatChunkDecoder {
  private readonly calls = new Map<number, ToolCallAccumulator>();
  private finishRaw: string | undefined;
  private usage: ChatEvent | undefined;

  get finished(): boolean {
    return this.finishRaw !== undefined;
  }

  push(chunk: unknown, out: ChatEvent[]): void {
    const c = chunk as {
      choices?: Array<{ index?: number; delta?: Record<string, unknown>; finish_reason?: string | null }>;
      usage?: {
        prompt_tokens?: number;
        completion_tokens?: number;
        completion_tokens_details?: { reasoning_tokens?: number };
        prompt_tokens_details?: { cached_tokens?: number };
      } | null;
    };
    if (c.usage) {
      const reasoning = c.usage.completion_tokens_details?.reasoning_tokens;
      const cached = c.usage.prompt_tokens_details?.cached_tokens;
      this.usage = {
        type: 'usage',
        usage: {
          inputTokens: c.usage.prompt_tokens ?? 0,
          outputTokens: c.usage.completion_tokens ?? 0,
          ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
          ...(cached === undefined ? {} : { cachedInputTokens: cached }),
        },
      };
    }
    // TURN-3: candidate zero only.
    const choice = c.choices?.find((x) => (x.index ?? 0) === 0);
    if (!choice) return;
    const delta = choice.delta ?? {};
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '') out.push({ type: 'reasoning-delta', text: reasoning });
    if (typeof delta.content === 'string' && delta.content !== '') out.push({ type: 'text-delta', text: delta.content });
    if (Array.isArray(delta.tool_calls)) {
      for (const raw of delta.tool_calls as Array<{
        index?: number;
        id?: string;
        function?: { name?: string; arguments?: string };
      }>) {
        const index = raw.index ?? 0;
        let acc = this.calls.get(index);
        if (!acc) {
          acc = { id: raw.id ?? '', name: '', arguments: '' };
          this.calls.set(index, acc);
        }
        if (raw.id) acc.id = raw.id;
        const name = raw.function?.name ? mergeName(acc.name, raw.function.name) : acc.name;
        const renamed = name !== acc.name;
        acc.name = name;
        const piece = raw.function?.arguments ?? '';
        acc.arguments += piece;
        out.push({
          type: 'tool-call-delta',
          index,
          ...(raw.id ? { id: raw.id } : {}),
          ...(renamed ? { name } : {}),
          argumentsDelta: piece,
        });
      }
    }
    if (choice.finish_reason) this.finishRaw = choice.finish_reason;
  }

  /**
   * `data: [DONE]` is the protocol's own end marker: a stream that reached it is complete even
   * when no chunk carried a `finish_reason` (Kimi K2 through OpenRouter does this). The finish
   * is inferred, `tool_calls` when calls were streamed, else `stop`; returns the debug note
   * saying so, or undefined when the provider sent its own finish.
   */
  endOfStream(): string | undefined {
    if (this.finishRaw !== undefined) return undefined;
    this.finishRaw = this.calls.size > 0 ? 'tool_calls' : 'stop';
    return `The stream ended with [DONE] but no finish_reason; inferred '${this.finishRaw}' from ${this.calls.size > 0 ? `${this.calls.size} streamed tool call(s)` : 'no streamed tool call'}.`;
  }

  /** The closing events: complete tool calls in index order, usage, then the finish. */
  *close(): Generator<ChatEvent> {
    const indexes = [...this.calls.keys()].sort((a, b) => a - b);
    for (const index of indexes) {
      const call = this.calls.get(index) as ToolCallAccumulator;
      yield {
        type: 'tool-call',
        id: call.id || `call_${index}`,
        name: call.name,
        arguments: call.arguments,
        input: parseArguments(call.arguments),
      };
    }
    if (this.usage) yield this.usage;
    if (this.finishRaw !== undefined) yield { type: 'finish', reason: normaliseFinish(this.finishRaw), raw: this.finishRaw };
  }
}
