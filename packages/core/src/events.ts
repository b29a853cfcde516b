/** Streaming events a chat client yields while one request streams. */
import type { ProviderState } from './content.js';

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly reasoningTokens?: number;
  readonly cachedInputTokens?: number;
}

export type ChatEvent =
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'reasoning-delta'; readonly text: string }
  /** Opaque reasoning state for replay (for example a thinking signature). */
  | { readonly type: 'reasoning-state'; readonly format: string; readonly data: string }
  /** A fragment of a tool call as it streams; `index` orders calls within the response. */
  | {
      readonly type: 'tool-call-delta';
      readonly index: number;
      readonly id?: string;
      readonly name?: string;
      readonly argumentsDelta: string;
    }
  /** A complete tool call: the raw argument JSON and its parsed value; `state` is opaque replay data (Gemini thought signature). */
  | {
      readonly type: 'tool-call';
      readonly id: string;
      readonly name: string;
      readonly arguments: string;
      readonly input: unknown;
      readonly state?: ProviderState;
    }
  | { readonly type: 'usage'; readonly usage: Usage }
  /** `raw` is the provider's own finish value, kept verbatim (FIN-4). */
  | { readonly type: 'finish'; readonly reason: FinishReason; readonly raw: string };

export const emptyUsage: Usage = { inputTokens: 0, outputTokens: 0 };

export function addUsage(a: Usage, b: Usage): Usage {
  const sum = (x?: number, y?: number): number | undefined =>
    x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);
  const reasoningTokens = sum(a.reasoningTokens, b.reasoningTokens);
  const cachedInputTokens = sum(a.cachedInputTokens, b.cachedInputTokens);
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...(reasoningTokens === undefined ? {} : { reasoningTokens }),
    ...(cachedInputTokens === undefined ? {} : { cachedInputTokens }),
  };
}
