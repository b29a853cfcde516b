/** The retry policy of one model round (RETRY-1..3, RETRY-6, RETRY-7), from `config.json` → `retry`. */
import { ProviderError } from '@crystal/core';
import type { Config } from './config/schema.js';

export interface RetryPolicy {
  readonly maxRetries: number;
  readonly baseDelayMs: number;
  readonly backoffFactor: number;
  /** Fraction added at most on top of the computed delay (0.25 = up to 25 %). */
  readonly jitter: number;
  /** Cap on a computed delay when the server sent no Retry-After. */
  readonly maxDelayMs: number;
  /** REL-6: the longest Retry-After honoured; a longer one stops the turn. */
  readonly maxRetryAfterMs: number;
}

/** RETRY-2 defaults: 5 retries, 2 s base, factor 2, 25 % jitter, 30 s cap. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 5,
  baseDelayMs: 2000,
  backoffFactor: 2,
  jitter: 0.25,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 300_000,
};

export function retryPolicyOf(config: Config): RetryPolicy {
  const r = config.retry ?? {};
  return {
    maxRetries: r.maxRetries ?? DEFAULT_RETRY.maxRetries,
    baseDelayMs: r.baseDelaySeconds !== undefined ? r.baseDelaySeconds * 1000 : DEFAULT_RETRY.baseDelayMs,
    backoffFactor: r.backoffFactor ?? DEFAULT_RETRY.backoffFactor,
    jitter: r.jitter ?? DEFAULT_RETRY.jitter,
    maxDelayMs: r.maxDelaySeconds !== undefined ? r.maxDelaySeconds * 1000 : DEFAULT_RETRY.maxDelayMs,
    maxRetryAfterMs: r.maxRetryAfterSeconds !== undefined ? r.maxRetryAfterSeconds * 1000 : DEFAULT_RETRY.maxRetryAfterMs,
  };
}

/**
 * Delay before retry `attempt` (1-based): the server's Retry-After when given, else exponential
 * with jitter. REL-6: a Retry-After beyond `maxRetryAfterMs` throws a non-retryable error that
 * names the wait, so the turn stops `failed` instead of sleeping for a day.
 */
export function retryDelayMs(policy: RetryPolicy, attempt: number, error: ProviderError, random: () => number): number {
  if (error.retryAfterMs !== undefined) {
    if (error.retryAfterMs > policy.maxRetryAfterMs) throw retryAfterTooLong(error, policy.maxRetryAfterMs);
    return error.retryAfterMs;
  }
  const computed = Math.ceil(policy.baseDelayMs * policy.backoffFactor ** (attempt - 1) * (1 + policy.jitter * random()));
  return Math.min(computed, policy.maxDelayMs);
}

/**
 * Counts the retries of one request (a model round or a compaction summary): a connection closed
 * while the body was written is retried once at once (RETRY-7); any other retryable failure
 * takes the next numbered, delayed attempt until `maxRetries` is spent (RETRY-1).
 */
export class RetryCounter {
  private count = 0;
  private bodyWriteRetried = false;

  constructor(private readonly policy: RetryPolicy) {}

  /** The delayed retries taken so far. */
  get attempts(): number {
    return this.count;
  }

  /** For a retryable error: 'now', the number of the delayed attempt to make, or 'give-up'. */
  next(error: ProviderError): 'now' | 'give-up' | number {
    if (error.kind === 'body_write_closed') {
      if (this.bodyWriteRetried) return 'give-up';
      this.bodyWriteRetried = true;
      return 'now';
    }
    if (this.count >= this.policy.maxRetries) return 'give-up';
    return ++this.count;
  }
}

/** The operator message shown with a retry (reference §4.2). */
export function operatorMessage(error: ProviderError): string {
  const text = error.message;
  if (/too_many_requests/i.test(text)) return 'Too Many Requests';
  if (/overloaded|resource[ _-]?exhausted|unavailable/i.test(text)) return 'Provider is overloaded';
  return text;
}

/** REL-6: the error that stops a turn whose provider asked for a wait beyond the ceiling. */
export function retryAfterTooLong(error: ProviderError, ceilingMs: number): ProviderError {
  return new ProviderError({
    kind: error.kind,
    provider: error.provider,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    message: `${error.provider} asked to wait ${formatWait(error.retryAfterMs ?? 0)} before retrying (Retry-After), longer than retry.maxRetryAfterSeconds (${formatWait(ceilingMs)}); the turn stops here. Try again later, or raise retry.maxRetryAfterSeconds in config.json. (${error.message})`,
  });
}

/** A wait for the operator: "86400 s (24 h)", "90 s", "450 ms". */
export function formatWait(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  const minutes = seconds / 60;
  if (minutes < 120) return `${seconds} s (${Math.round(minutes)} min)`;
  return `${seconds} s (${Math.round(minutes / 6) / 10} h)`;
}
