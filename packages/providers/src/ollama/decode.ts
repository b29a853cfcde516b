/** Stream decoding for Ollama `/api/chat` NDJSON lines into core chat events. */
import type { ChatEvent, FinishReason } from '@crystal/core';
import { parseArguments } from '@crystal/core';

/**
 * `stop` ends a normal answer (Ollama also says `stop` after tool calls, so seen calls make it
 * `tool_calls`); `length` hit `num_predict` or the context; `content_filter` is not native to
 * Ollama but some Ollama-compatible gateways send it; `load` / `unload` and anything else are
 * `other`.
 */
export function normaliseFinish(raw: string, sawToolCalls: boolean): FinishReason {
  switch (raw) {
    case 'stop':
      return sawToolCalls ? 'tool_calls' : 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'other';
  }
}

interface OllamaToolCall {
  id?: unknown;
  function?: { index?: unknown; name?: unknown; arguments?: unknown };
}

interface OllamaChunk {
  message?: { content?: unknown; thinking?: unknown; tool_calls?: unknown };
  done?: unknown;
  done_reason?: unknown;
  prompt_eval_count?: unknown;
  eval_count?: unknown;
}

/** Stateful decoder: feed parsed lines with `push`; `finished` turns true at the `done: true` line. */
export class OllamaChunkDecoder {
  private finishRaw: string | undefined;
  private readonly ids = new Set<string>();
  private calls = 0;

  get finished(): boolean {
    return this.finishRaw !== undefined;
  }

  push(chunk: unknown, out: ChatEvent[]): void {
    if (this.finishRaw !== undefined) return;
    const c = (chunk ?? {}) as OllamaChunk;
    const message = c.message;
    if (message) {
      if (typeof message.thinking === 'string' && message.thinking !== '')
        out.push({ type: 'reasoning-delta', text: message.thinking });
      if (typeof message.content === 'string' && message.content !== '') out.push({ type: 'text-delta', text: message.content });
      if (Array.isArray(message.tool_calls)) {
        for (const raw of message.tool_calls as OllamaToolCall[]) out.push(this.toolCall(raw));
      }
    }
    if (c.done === true) {
      // Ollama before done_reason existed ended every normal stream with a bare `done: true`.
      this.finishRaw = typeof c.done_reason === 'string' && c.done_reason !== '' ? c.done_reason : 'stop';
      const input = typeof c.prompt_eval_count === 'number' ? c.prompt_eval_count : undefined;
      const output = typeof c.eval_count === 'number' ? c.eval_count : undefined;
      if (input !== undefined || output !== undefined) {
        out.push({ type: 'usage', usage: { inputTokens: input ?? 0, outputTokens: output ?? 0 } });
      }
      out.push({ type: 'finish', reason: normaliseFinish(this.finishRaw, this.calls > 0), raw: this.finishRaw });
    }
  }

  /** Ollama sends each call whole with its arguments as an object (a string from some gateways). */
  private toolCall(raw: OllamaToolCall): ChatEvent {
    const fn = raw.function ?? {};
    const name = typeof fn.name === 'string' ? fn.name : '';
    const args = fn.arguments;
    const argumentsText = typeof args === 'string' ? args : JSON.stringify(args ?? {});
    const n = this.calls++;
    const index = typeof fn.index === 'number' ? fn.index : n;
    let id = typeof raw.id === 'string' && raw.id !== '' ? raw.id : `call_${index}`;
    for (let k = 1; this.ids.has(id); k++) id = `call_${n}_${k}`;
    this.ids.add(id);
    return { type: 'tool-call', id, name, arguments: argumentsText, input: parseArguments(argumentsText) };
  }
}
