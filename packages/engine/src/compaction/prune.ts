/**
 * Step 1 of compaction: prune old tool results (reference §4.4). Pure: the input messages are
 * never changed; a pruned message is a new object, every other message is passed through.
 */
import type { ChatMessage, ContentPart, ToolResultPart } from '@crystal/core';
import { estimateResultTokens } from './estimate.js';
import { isSummaryMessage } from './prompts.js';

/** The text a pruned tool result carries instead of its output. */
export const PRUNED_RESULT_TEXT = 'Tool result omitted after compaction.';

/** The newest successful tool-result tokens that are never pruned. */
export const PRUNE_PROTECTED_TOKENS = 40_000;

/** Pruning happens only when the candidates add up to more than this. */
export const PRUNE_MINIMUM_TOKENS = 20_000;

/** User turns at the end that the prune pass never touches. */
const PROTECTED_USER_TURNS = 2;

export interface PruneResult {
  /** The messages after pruning: the input array itself when nothing was pruned. */
  readonly messages: readonly ChatMessage[];
  /** How many tool results were pruned. */
  readonly prunedResults: number;
  /** The estimated tokens of the pruned outputs. */
  readonly prunedTokens: number;
}

/** Whether a tool result is one this pass has already pruned. */
export function isPrunedResult(result: ToolResultPart): boolean {
  const [only, ...rest] = result.content;
  return rest.length === 0 && only?.type === 'text' && only.text === PRUNED_RESULT_TEXT;
}

/**
 * Walks back from the end; skips the last two user turns; stops at a summary or at a result that
 * is already pruned. Successful results are summed newest first: the first 40,000 tokens are
 * protected and everything older is a candidate. Candidates are pruned only when they total
 * more than 20,000 tokens; each keeps its call id, name and status.
 */
export function pruneToolResults(messages: readonly ChatMessage[]): PruneResult {
  const candidates = new Map<number, Set<number>>();
  let userTurns = 0;
  let total = 0;
  let candidateTokens = 0;
  let candidateCount = 0;
  scan: for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as ChatMessage;
    if (message.role === 'user') userTurns++;
    if (userTurns < PROTECTED_USER_TURNS) continue;
    if (isSummaryMessage(message)) break;
    if (message.role !== 'tool') continue;
    for (let j = message.content.length - 1; j >= 0; j--) {
      const part = message.content[j] as ContentPart;
      if (part.type !== 'tool-result' || part.isError) continue;
      if (isPrunedResult(part)) break scan;
      const tokens = estimateResultTokens(part);
      total += tokens;
      if (total > PRUNE_PROTECTED_TOKENS) {
        candidateTokens += tokens;
        candidateCount++;
        const parts = candidates.get(i) ?? new Set<number>();
        parts.add(j);
        candidates.set(i, parts);
      }
    }
  }
  if (candidateTokens <= PRUNE_MINIMUM_TOKENS) return { messages, prunedResults: 0, prunedTokens: 0 };
  const pruned = messages.map((message, i) => {
    const parts = candidates.get(i);
    if (!parts) return message;
    const content = message.content.map((part, j) => (parts.has(j) && part.type === 'tool-result' ? prunedResult(part) : part));
    return { ...message, content };
  });
  return { messages: pruned, prunedResults: candidateCount, prunedTokens: candidateTokens };
}

function prunedResult(result: ToolResultPart): ToolResultPart {
  return {
    type: 'tool-result',
    callId: result.callId,
    name: result.name,
    content: [{ type: 'text', text: PRUNED_RESULT_TEXT }],
    isError: result.isError,
  };
}
