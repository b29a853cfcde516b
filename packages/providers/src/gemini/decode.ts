/** Stream decoding for Gemini GenerateContentResponse chunks into core chat events. */
import type { ChatEvent, FinishReason, Usage } from '@crystal/core';
import { parseArguments } from '@crystal/core';
import { SIGNATURE_FORMAT } from './encode.js';

const CONTENT_FILTER = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/** `STOP` is tool_calls when the candidate made function calls; unknown values are other. */
export function normaliseFinish(raw: string, hadCalls: boolean): FinishReason {
  if (raw === 'STOP') return hadCalls ? 'tool_calls' : 'stop';
  if (raw === 'MAX_TOKENS') return 'length';
  if (CONTENT_FILTER.has(raw)) return 'content_filter';
  return 'other';
}

interface WirePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name?: string; args?: unknown };
}

interface WireChunk {
  candidates?: Array<{ index?: number; content?: { parts?: WirePart[] }; finishReason?: string }>;
  promptFeedback?: { blockReason?: string };
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    cachedContentTokenCount?: number;
  };
}

/** Stateful decoder: feed parsed chunks with `push`, then `close()` yields usage and the finish. */
export class GeminiChunkDecoder {
  private calls = 0;
  private finishRaw: string | undefined;
  private blocked = false;
  private usage: Usage | undefined;
  private signature: string | undefined;

  get finished(): boolean {
    return this.finishRaw !== undefined;
  }

  push(chunk: unknown, out: ChatEvent[]): void {
    const c = chunk as WireChunk;
    if (c.usageMetadata) this.usage = usageOf(c.usageMetadata);
    // TURN-3: candidate zero only (the index is omitted when it is zero).
    const candidate = c.candidates?.find((x) => (x.index ?? 0) === 0);
    if (!candidate) {
      const blockReason = c.promptFeedback?.blockReason;
      if (blockReason && !c.candidates?.length) {
        this.blocked = true;
        this.finishRaw = blockReason;
      }
      return;
    }
    for (const part of candidate.content?.parts ?? []) {
      if (part.functionCall) {
        this.functionCall(part.functionCall, part.thoughtSignature, out);
        continue;
      }
      if (typeof part.text === 'string' && part.text !== '') {
        out.push(part.thought ? { type: 'reasoning-delta', text: part.text } : { type: 'text-delta', text: part.text });
      }
      // A signature on a text or thought part is replayed on the model turn's text part.
      if (part.thoughtSignature && part.thoughtSignature !== this.signature) {
        this.signature = part.thoughtSignature;
        out.push({ type: 'reasoning-state', format: SIGNATURE_FORMAT, data: part.thoughtSignature });
      }
    }
    if (candidate.finishReason) this.finishRaw = candidate.finishReason;
  }

  /** Function calls arrive whole: one delta for displays, then the complete call with its signature. */
  private functionCall(call: NonNullable<WirePart['functionCall']>, signature: string | undefined, out: ChatEvent[]): void {
    const index = this.calls++;
    const id = call.id || `call_${index}`;
    const name = call.name ?? '';
    // Gemini sends `args` as an object; a string is taken as the raw JSON text.
    const args = typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {});
    out.push({ type: 'tool-call-delta', index, id, name, argumentsDelta: args });
    out.push({
      type: 'tool-call',
      id,
      name,
      arguments: args,
      input: parseArguments(args),
      ...(signature ? { state: { format: SIGNATURE_FORMAT, data: signature } } : {}),
    });
  }

  /** The closing events: usage, then the finish. */
  *close(): Generator<ChatEvent> {
    if (this.usage) yield { type: 'usage', usage: this.usage };
    if (this.finishRaw === undefined) return;
    const reason = this.blocked ? 'content_filter' : normaliseFinish(this.finishRaw, this.calls > 0);
    yield { type: 'finish', reason, raw: this.finishRaw };
  }
}

/** Output tokens include thought tokens (Gemini bills them as output); reasoningTokens is that share. */
function usageOf(u: NonNullable<WireChunk['usageMetadata']>): Usage {
  const thoughts = u.thoughtsTokenCount;
  const cached = u.cachedContentTokenCount;
  return {
    inputTokens: u.promptTokenCount ?? 0,
    outputTokens: (u.candidatesTokenCount ?? 0) + (thoughts ?? 0),
    ...(thoughts === undefined ? {} : { reasoningTokens: thoughts }),
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
  };
}
