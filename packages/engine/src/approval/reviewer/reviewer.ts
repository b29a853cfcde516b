/**
 * The approval reviewer (REV-1, reference §6.4): one request per call, with no tools, to the
 * session model or the `approvalModel` (REV-2). Its reply is read by `parse.ts`. Every failure
 * (no client, a provider error, a timeout, an empty or unusable reply) is an ask with the
 * reference's message; a turn cancelled meanwhile is reported as cancelled, never as an allow.
 */
import {
  type ChatMessage,
  isProviderError,
  type StreamingChatClient,
  systemMessage,
  type ThinkingEffort,
  userMessage,
} from '@crystal/core';
import type { ApprovalCard } from '../card.js';
import type { Classification } from '../classifier.js';
import { buildExcerpt } from './excerpt.js';
import { type Assessment, allowFollowsRule, type Level, parseAssessment, UNUSABLE_TEXT } from './parse.js';
import { REVIEWER_SYSTEM_PROMPT, reviewerUserPrompt } from './prompt.js';
import type { ParsedToolCall } from '@crystal/core';

export const REVIEWER_FAILED_PREFIX = 'The approval reviewer failed:';
/** The longest a review may take before it counts as failed (an ask). */
export const DEFAULT_REVIEW_TIMEOUT_MS = 120_000;
/** A reply longer than this is no assessment (a runaway or hostile reviewer). */
export const MAX_REVIEW_REPLY_CHARS = 64 * 1024;

export function reviewerDeniedText(rationale: string): string {
  const reason =
    rationale.trim() === '' ? 'no reason given.' : /[.!?]$/.test(rationale.trim()) ? rationale.trim() : `${rationale.trim()}.`;
  return `The approval reviewer declined this action: ${reason} Do not retry the same call. Change the approach or ask the user.`;
}

export interface ReviewVerdict {
  readonly outcome: 'allow' | 'deny' | 'ask';
  readonly risk?: Level;
  readonly authorization?: Level;
  readonly rationale: string;
  /** The reviewer failed or returned nothing usable: why (the outcome is then ask). */
  readonly failure?: string;
}

export interface ReviewerOptions {
  /** The client to ask: the session's, or the approval model's (built on first use; may throw a clear error). */
  readonly client: () => Promise<StreamingChatClient>;
  /** The model context (HIST-4), index 0 the live system message. */
  readonly context: () => readonly ChatMessage[];
  /** The gear sent with the request (already checked against the model). */
  readonly thinking?: () => ThinkingEffort | undefined;
  readonly timeoutMs?: number;
}

export interface Reviewer {
  /** Undefined when there is no conversation to judge against (no user message, no summary): the operator is asked. */
  review(
    call: ParsedToolCall,
    classification: Classification,
    card: ApprovalCard,
    signal: AbortSignal,
  ): Promise<ReviewVerdict | 'cancelled' | undefined>;
}

export function createReviewer(options: ReviewerOptions): Reviewer {
  return {
    async review(call, classification, card, signal) {
      const excerpt = buildExcerpt(options.context());
      if (!excerpt.hasAuthority) return undefined;
      const messages = [systemMessage(REVIEWER_SYSTEM_PROMPT), userMessage(reviewerUserPrompt(excerpt.text, call, card))];
      const timeoutMs = options.timeoutMs ?? DEFAULT_REVIEW_TIMEOUT_MS;
      const timer = new AbortController();
      const timeout = setTimeout(() => timer.abort(), timeoutMs);
      const both = AbortSignal.any([signal, timer.signal]);
      let reply = '';
      try {
        const client = await options.client();
        const thinking = options.thinking?.();
        for await (const event of client.stream({ messages, tools: [], ...(thinking ? { thinking } : {}) }, both)) {
          if (event.type === 'text-delta') reply += event.text;
          if (reply.length > MAX_REVIEW_REPLY_CHARS)
            return failed(`the reply was longer than ${MAX_REVIEW_REPLY_CHARS} characters.`);
          if (both.aborted) break;
        }
        if (signal.aborted) return 'cancelled';
        if (timer.signal.aborted) return failed(`no answer within ${timeoutMs / 1000} seconds.`);
      } catch (error) {
        if (signal.aborted) return 'cancelled';
        if (timer.signal.aborted) return failed(`no answer within ${timeoutMs / 1000} seconds.`);
        const message = isProviderError(error) ? error.message : error instanceof Error ? error.message : String(error);
        return failed(message);
      } finally {
        clearTimeout(timeout);
      }
      const assessment = parseAssessment(reply);
      if (!assessment) return { outcome: 'ask', rationale: '', failure: UNUSABLE_TEXT };
      return held(assessment, classification);
    },
  };
}

function failed(message: string): ReviewVerdict {
  const text = message.trim().replace(/\s+/g, ' ').slice(0, 500);
  return { outcome: 'ask', rationale: '', failure: `${REVIEWER_FAILED_PREFIX} ${text}` };
}

/** An allow that breaks the outcome rule (or omits its levels) is an ask; deny and ask stand as given. */
function held(assessment: Assessment, classification: Classification): ReviewVerdict {
  const verdict: ReviewVerdict = {
    outcome: assessment.outcome,
    ...(assessment.risk ? { risk: assessment.risk } : {}),
    ...(assessment.authorization ? { authorization: assessment.authorization } : {}),
    rationale: assessment.rationale,
  };
  if (assessment.outcome !== 'allow' || allowFollowsRule(assessment, classification)) return verdict;
  return {
    ...verdict,
    outcome: 'ask',
    failure: `The approval reviewer's allow does not follow the outcome rule (risk ${assessment.risk ?? 'missing'}, host lower bound included; authorization ${assessment.authorization ?? 'missing'}).`,
  };
}
