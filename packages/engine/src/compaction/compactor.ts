/**
 * Context compaction (reference §4.4; COMPACT-1..4, HIST-2, HIST-3, BTW-3): prune old tool
 * results, split head and tail, summarise the head through the session's client without tools
 * and with the turn's retry policy, then rebuild the context as [live system, summary, tail...].
 * The input array and its messages are never changed (the archive shares those objects), so a
 * caller may compact a copy and throw the result away.
 */
import {
  type ChatMessage,
  type ChatRequest,
  isProviderError,
  ProviderError,
  type ProviderErrorKind,
  type StreamingChatClient,
  systemMessage,
  type Usage,
  userMessage,
} from '@crystal/core';
import { abortReason, type Clock } from '../clock.js';
import { operatorMessage, RetryCounter, type RetryPolicy, retryDelayMs } from '../retry-policy.js';
import { CHARS_PER_TOKEN, compactionLimit, estimateTokens } from './estimate.js';
import { priorSummaryText, summaryMessage, summarySystemPrompt, summaryUserPrompt } from './prompts.js';
import { pruneToolResults } from './prune.js';
import { serialiseConversation, serialiseWithin } from './serialise.js';
import { splitHeadTail } from './split.js';

/** `applied`: the context changed. `unchanged`: nothing to do. `exhausted`: no summary and nothing pruned. */
export type CompactionOutcome = 'applied' | 'unchanged' | 'exhausted';

/**
 * Why no summary was written:
 * - `under_limit`: not forced and under the limit, so nothing ran;
 * - `nothing_earlier`: forced, and nothing precedes the latest user turn (`Nothing earlier to compact`);
 * - `empty_head`: everything fits the tail, so there is nothing to summarise;
 * - `prompt_too_large`: the summary request would not fit the window (size guard);
 * - `summary_failed`: the summary request failed (see `error`).
 */
export type CompactionSkip = 'under_limit' | 'nothing_earlier' | 'empty_head' | 'prompt_too_large' | 'summary_failed';

/** A retry of the summary request; the same values as the turn's `retry-scheduled` event (RETRY-4). */
export interface CompactionRetry {
  readonly attempt: number;
  readonly delayMs: number;
  /** Epoch ms when the wait ends, from the injected clock. */
  readonly dueAt: number;
  readonly reason: ProviderErrorKind;
  readonly message: string;
}

export interface CompactInput {
  /** The model context; index 0 is the live system message. Never changed. */
  readonly context: readonly ChatMessage[];
  readonly client: StreamingChatClient;
  readonly contextWindow: number;
  readonly maxTokens?: number | undefined;
  /** `config.json` → `compactionThreshold`; default 0.8. */
  readonly threshold?: number | undefined;
  /** `/compact`: runs whatever the size; otherwise returns `unchanged` when under the limit. */
  readonly forced: boolean;
  /** The last round's reported total tokens (input + output), for the trigger when not forced. */
  readonly lastReportedTokens?: number | undefined;
  /** The open todos, formatted; included in the prompt and appended to the summary. */
  readonly todos?: string | undefined;
  readonly retry: RetryPolicy;
  readonly clock: Clock;
  /** Aborting rejects the call with an AbortError at once, also during a retry wait. */
  readonly signal: AbortSignal;
  readonly onRetry?: ((event: CompactionRetry) => void) | undefined;
  /** The `<env>` block that ends the summariser's system prompt. */
  readonly envBlock: string;
}

export interface CompactionResult {
  readonly outcome: CompactionOutcome;
  /** A new array: [live system, summary, tail...] when summarised; the pruned context when only pruned; else a copy of the input. */
  readonly context: ChatMessage[];
  /** The summary text as the model wrote it (trimmed), when one was written. */
  readonly summary?: string;
  /** Usage of the summary request that succeeded. */
  readonly usage?: Usage;
  readonly skipped?: CompactionSkip;
  /** The failure of the summary request after its retries. */
  readonly error?: { readonly message: string; readonly kind?: ProviderErrorKind; readonly status?: number };
  readonly prunedResults: number;
  /** Retries of the summary request. */
  readonly retries: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

export interface TriggerInput {
  /** `estimateTokens(context)`. */
  readonly estimate: number;
  /** The last round's reported total tokens, when a round has reported usage. */
  readonly lastReportedTokens?: number | undefined;
  /** `compactionLimit(...)`. */
  readonly limit: number;
}

/** COMPACT-1 / COMPACT-3: compact when the estimate or the last reported usage reaches the limit. */
export function shouldCompact(input: TriggerInput): boolean {
  return input.estimate >= input.limit || (input.lastReportedTokens ?? 0) >= input.limit;
}

/** Output room the size guard keeps for the summary. */
const SUMMARY_OUTPUT_RESERVE = 4_096;

export async function compact(input: CompactInput): Promise<CompactionResult> {
  if (input.signal.aborted) throw abortReason();
  const tokensBefore = estimateTokens(input.context);
  const finish = (
    outcome: CompactionOutcome,
    context: readonly ChatMessage[],
    extra: Partial<CompactionResult> = {},
  ): CompactionResult => ({
    outcome,
    context: [...context],
    prunedResults: 0,
    retries: 0,
    tokensBefore,
    tokensAfter: estimateTokens(context),
    ...extra,
  });
  const limit = compactionLimit(input);
  if (!input.forced && !shouldCompact({ estimate: tokensBefore, lastReportedTokens: input.lastReportedTokens, limit })) {
    return finish('unchanged', input.context, { skipped: 'under_limit' });
  }

  const pruned = pruneToolResults(input.context);
  const prunedResults = pruned.prunedResults;
  /** Without a summary: the pruned context when pruning changed something, else exhausted. */
  const withoutSummary = (skipped: CompactionSkip, extra: Partial<CompactionResult> = {}): CompactionResult =>
    prunedResults > 0
      ? finish('applied', pruned.messages, { skipped, prunedResults, ...extra })
      : finish('exhausted', input.context, { skipped, ...extra });

  const split = splitHeadTail(pruned.messages, input);
  if (split.head.length === 0) {
    if (input.forced) return finish('unchanged', input.context, { skipped: 'nothing_earlier' });
    return withoutSummary('empty_head');
  }

  const requestWith = (conversation: string): ChatRequest => ({
    messages: [
      systemMessage(summarySystemPrompt(input.envBlock)),
      userMessage(
        summaryUserPrompt({
          conversation,
          priorSummary: split.priorSummary ? priorSummaryText(split.priorSummary) : undefined,
          todos: input.todos,
        }),
      ),
    ],
  });
  const guard = input.contextWindow - Math.min(input.maxTokens ?? SUMMARY_OUTPUT_RESERVE, SUMMARY_OUTPUT_RESERVE);
  let request = requestWith(serialiseConversation(split.head));
  if (estimateTokens(request.messages) > guard) {
    // REL-9: items larger than the window are shortened to their head and tail for the summary.
    const frame = estimateTokens(requestWith('').messages);
    const room = Math.floor((guard - frame) * CHARS_PER_TOKEN * 0.95);
    if (room > 0) request = requestWith(serialiseWithin(split.head, room));
    if (estimateTokens(request.messages) > guard) return withoutSummary('prompt_too_large');
  }

  let retries = 0;
  let reply: SummaryReply;
  try {
    reply = await requestSummary(input, request, () => retries++);
  } catch (error) {
    if (input.signal.aborted) throw abortReason();
    return withoutSummary('summary_failed', { retries, error: failureOf(error) });
  }
  if (input.signal.aborted) throw abortReason();

  const live = input.context[0] as ChatMessage;
  const context = [live, summaryMessage(reply.text, input.todos), ...split.tail];
  return finish('applied', context, {
    summary: reply.text,
    prunedResults,
    retries,
    ...(reply.usage ? { usage: reply.usage } : {}),
  });
}

interface SummaryReply {
  readonly text: string;
  readonly usage?: Usage;
}

/** The summary request with the turn's retry policy (RETRY-1..3, RETRY-6..8). */
async function requestSummary(input: CompactInput, request: ChatRequest, onRetry: () => void): Promise<SummaryReply> {
  const retries = new RetryCounter(input.retry);
  for (;;) {
    try {
      return await streamSummary(input.client, request, input.signal);
    } catch (error) {
      if (input.signal.aborted) throw abortReason();
      if (!isProviderError(error) || !error.retryable) throw error;
      const attempt = retries.next(error);
      if (attempt === 'give-up') throw error;
      if (attempt === 'now') {
        onRetry();
        continue;
      }
      const delayMs = retryDelayMs(input.retry, attempt, error, input.clock.random);
      onRetry();
      input.onRetry?.({
        attempt,
        delayMs,
        dueAt: input.clock.now() + delayMs,
        reason: error.kind,
        message: operatorMessage(error),
      });
      await input.clock.sleep(delayMs, input.signal);
    }
  }
}

async function streamSummary(client: StreamingChatClient, request: ChatRequest, signal: AbortSignal): Promise<SummaryReply> {
  let text = '';
  let usage: Usage | undefined;
  let finished = false;
  for await (const event of client.stream(request, signal)) {
    if (event.type === 'text-delta') text += event.text;
    else if (event.type === 'usage') usage = event.usage;
    else if (event.type === 'finish') finished = true;
  }
  if (!finished) {
    throw new ProviderError({
      kind: 'incomplete_stream',
      provider: client.provider,
      message: `${client.provider} stream ended without a finish reason.`,
    });
  }
  const summary = text.trim();
  if (summary === '') {
    throw new ProviderError({
      kind: 'unknown',
      provider: client.provider,
      message: `${client.provider} answered the summary request with no text.`,
    });
  }
  return { text: summary, ...(usage ? { usage } : {}) };
}

function failureOf(error: unknown): NonNullable<CompactionResult['error']> {
  if (isProviderError(error)) {
    return { message: error.message, kind: error.kind, ...(error.status !== undefined ? { status: error.status } : {}) };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}
