/**
 * Step 2 of compaction: split the model context into a head to summarise and a tail to keep
 * (reference §4.4). Pure: returns new arrays holding the input's message objects.
 */
import type { ChatMessage } from '@crystal/core';
import { messageChars, reservedTokens, tokensOfChars, type WindowSize } from './estimate.js';
import { isSummaryMessage } from './prompts.js';

const TAIL_SHARE = 0.25;
const MIN_TAIL_TOKENS = 2_000;
const MAX_TAIL_TOKENS = 15_000;

export interface SplitInput extends WindowSize {
  /** `/compact`: when the head would be empty, keep only the latest user turn. */
  readonly forced: boolean;
}

export interface HeadTailSplit {
  /** The messages to summarise, oldest first (never the live system message or a summary). */
  readonly head: readonly ChatMessage[];
  /** The recent messages kept verbatim after the summary. */
  readonly tail: readonly ChatMessage[];
  /** The newest previous summary, when the context holds one. */
  readonly priorSummary?: ChatMessage;
}

/** `clamp(floor((window - reserved) * 0.25), 2000, 15000)`. */
export function tailBudget(window: WindowSize): number {
  const usable = window.contextWindow - reservedTokens(window.maxTokens);
  return Math.min(MAX_TAIL_TOKENS, Math.max(MIN_TAIL_TOKENS, Math.floor(usable * TAIL_SHARE)));
}

/**
 * Ignores the live system message (index 0) and previous summaries, then keeps whole user turns
 * from the end while they fit the tail budget. The first turn that does not fit may be cut inside,
 * at a message that is not a tool result, when that suffix fits. A forced compaction whose head
 * would be empty keeps only the latest user turn and summarises everything before it.
 */
export function splitHeadTail(messages: readonly ChatMessage[], input: SplitInput): HeadTailSplit {
  const body: ChatMessage[] = [];
  let priorSummary: ChatMessage | undefined;
  for (const message of messages.slice(1)) {
    if (isSummaryMessage(message)) priorSummary = message;
    else body.push(message);
  }
  let tailStart = tailStartWithin(body, tailBudget(input));
  if (tailStart === 0 && input.forced) tailStart = Math.max(0, latestUserIndex(body));
  return {
    head: body.slice(0, tailStart),
    tail: body.slice(tailStart),
    ...(priorSummary ? { priorSummary } : {}),
  };
}

/** The index in `body` where the tail begins (`body.length` when nothing fits). */
function tailStartWithin(body: readonly ChatMessage[], budget: number): number {
  const fits = (chars: number): boolean => tokensOfChars(chars) <= budget;
  let tailStart = body.length;
  let usedChars = 0;
  for (const turn of userTurns(body).reverse()) {
    let turnChars = 0;
    for (let i = turn.start; i < turn.end; i++) turnChars += messageChars(body[i] as ChatMessage);
    if (fits(usedChars + turnChars)) {
      usedChars += turnChars;
      tailStart = turn.start;
      continue;
    }
    // The first turn that does not fit: keep its longest suffix that fits and starts at a non-tool message.
    let suffixChars = 0;
    for (let i = turn.end - 1; i > turn.start; i--) {
      const message = body[i] as ChatMessage;
      suffixChars += messageChars(message);
      if (!fits(usedChars + suffixChars)) break;
      if (message.role !== 'tool') tailStart = i;
    }
    break;
  }
  return tailStart;
}

interface TurnRange {
  readonly start: number;
  readonly end: number;
}

/** Ranges that each begin at a user message; messages before the first user message form their own range. */
function userTurns(body: readonly ChatMessage[]): TurnRange[] {
  const turns: TurnRange[] = [];
  let start = 0;
  for (let i = 1; i <= body.length; i++) {
    if (i === body.length || body[i]?.role === 'user') {
      if (i > start) turns.push({ start, end: i });
      start = i;
    }
  }
  return turns;
}

function latestUserIndex(body: readonly ChatMessage[]): number {
  for (let i = body.length - 1; i >= 0; i--) if (body[i]?.role === 'user') return i;
  return -1;
}
