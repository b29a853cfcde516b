/**
 * The token estimate and the compaction limit (reference §4.4). The estimate is characters / 4,
 * rounded, over message text, tool name + arguments, tool result text, reasoning text and the
 * length of opaque provider state. Image bytes are not counted.
 */
import type { ChatMessage, ContentPart, ToolResultPart } from '@crystal/core';

/** `config.json` → `compactionThreshold` when omitted. */
export const DEFAULT_COMPACTION_THRESHOLD = 0.8;

/** The most output the limit keeps free below the window. */
const MAX_RESERVED_TOKENS = 20_000;

export const CHARS_PER_TOKEN = 4;

/** Characters one content part contributes to the estimate. */
export function partChars(part: ContentPart): number {
  switch (part.type) {
    case 'text':
      return part.text.length;
    case 'image':
      return 0;
    case 'reasoning':
      return part.text.length + (part.state?.data.length ?? 0);
    case 'tool-call':
      return part.name.length + part.arguments.length + (part.state?.data.length ?? 0);
    case 'tool-result':
      return resultChars(part);
  }
}

/** Characters of a tool result's text content. */
export function resultChars(result: ToolResultPart): number {
  let chars = 0;
  for (const item of result.content) if (item.type === 'text') chars += item.text.length;
  return chars;
}

export function messageChars(message: ChatMessage): number {
  let chars = 0;
  for (const part of message.content) chars += partChars(part);
  return chars;
}

/** Characters / 4, rounded. */
export function tokensOfChars(chars: number): number {
  return Math.round(chars / CHARS_PER_TOKEN);
}

/** The estimated tokens of a list of messages. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const message of messages) chars += messageChars(message);
  return tokensOfChars(chars);
}

/** The estimated tokens of one tool result (the prune pass sums these). */
export function estimateResultTokens(result: ToolResultPart): number {
  return tokensOfChars(resultChars(result));
}

export interface WindowSize {
  readonly contextWindow: number;
  /** The model's output cap, when the catalog declares one. */
  readonly maxTokens?: number | undefined;
}

export interface LimitInput extends WindowSize {
  /** Fraction of the window, 0 < x ≤ 1; default 0.8. */
  readonly threshold?: number | undefined;
}

/** `min(20000, maxTokens ?? 20000)`: the output room kept free below the window. */
export function reservedTokens(maxTokens: number | undefined): number {
  return Math.min(MAX_RESERVED_TOKENS, maxTokens ?? MAX_RESERVED_TOKENS);
}

/**
 * The token count at which compaction runs:
 * `min(floor(window * threshold), window - reserved)`, or just the first term when the reserve
 * does not fit inside the window.
 */
export function compactionLimit(input: LimitInput): number {
  const threshold = input.threshold ?? DEFAULT_COMPACTION_THRESHOLD;
  const byThreshold = Math.floor(input.contextWindow * threshold);
  const reserved = reservedTokens(input.maxTokens);
  if (reserved >= input.contextWindow) return byThreshold;
  return Math.min(byThreshold, input.contextWindow - reserved);
}
