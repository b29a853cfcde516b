/** The one error type a chat client throws. The engine decides on retry from `kind`. */

export type ProviderErrorKind =
  | 'rate_limit'
  | 'not_found'
  | 'request_timeout'
  | 'server'
  | 'timeout'
  | 'network'
  | 'incomplete_stream'
  | 'body_write_closed'
  | 'auth'
  | 'permission'
  | 'quota'
  | 'invalid_prompt'
  | 'context_overflow'
  | 'bad_request'
  | 'unsupported'
  | 'unknown';

const RETRYABLE: ReadonlySet<ProviderErrorKind> = new Set<ProviderErrorKind>([
  'rate_limit',
  'not_found',
  'request_timeout',
  'server',
  'timeout',
  'network',
  'incomplete_stream',
  'body_write_closed',
]);

export interface ProviderErrorInit {
  readonly kind: ProviderErrorKind;
  readonly provider: string;
  readonly message: string;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly code?: string;
  readonly cause?: unknown;
}

export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly kind: ProviderErrorKind;
  readonly provider: string;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly code: string | undefined;

  constructor(init: ProviderErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.provider = init.provider;
    this.status = init.status;
    this.retryAfterMs = init.retryAfterMs;
    this.code = init.code;
  }

  /** Whether the same round may be repeated after a backoff wait (RETRY-1, RETRY-6). */
  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}

export function isProviderError(value: unknown): value is ProviderError {
  return value instanceof ProviderError;
}

/** Kind for an HTTP status when the body says nothing more specific. */
export function kindForStatus(status: number): ProviderErrorKind {
  if (status === 401) return 'auth';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  if (status === 408) return 'request_timeout';
  if (status === 429) return 'rate_limit';
  if (status >= 500) return 'server';
  if (status === 400 || status === 413 || status === 422) return 'bad_request';
  return 'unknown';
}

/**
 * Parses `retry-after-ms` (milliseconds) or `Retry-After` (seconds or an HTTP date) into
 * milliseconds (RETRY-3). Returns undefined when neither header holds a usable value (REL-6:
 * a negative number, a date in the past or anything unparsable falls back to the computed
 * backoff; a bare number is never read as a date).
 */
export function parseRetryAfter(get: (name: string) => string | null | undefined, now: number = Date.now()): number | undefined {
  const ms = get('retry-after-ms');
  if (ms != null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = get('retry-after')?.trim();
  if (after == null || after === '') return undefined;
  if (/^[+-]?[\d.]+(e[+-]?\d+)?$/i.test(after)) {
    const seconds = Number(after);
    return Number.isFinite(seconds) && seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  }
  // An HTTP date names a weekday or a month; a stray token such as "soon" is not a date.
  if (!/[a-z]{3}/i.test(after)) return undefined;
  const date = Date.parse(after);
  if (Number.isNaN(date) || date <= now) return undefined;
  return date - now;
}
