import { describe, expect, it } from 'vitest';
import { kindForStatus, parseRetryAfter, ProviderError } from '../src/index.js';

const headers = (values: Record<string, string>) => (name: string) => values[name] ?? null;

describe('ProviderError', () => {
  it('RETRY-1 classifies 429, 404, 408 and 5xx as retryable kinds', () => {
    for (const status of [429, 404, 408, 500, 502, 503, 504, 524]) {
      const error = new ProviderError({ kind: kindForStatus(status), provider: 'p', message: 'm', status });
      expect(error.retryable, `status ${status}`).toBe(true);
    }
  });

  it('RETRY-6 classifies 401 and 403 as not retryable, and so are quota, invalid_prompt and context overflow', () => {
    expect(new ProviderError({ kind: kindForStatus(401), provider: 'p', message: 'm' }).retryable).toBe(false);
    expect(new ProviderError({ kind: kindForStatus(403), provider: 'p', message: 'm' }).retryable).toBe(false);
    for (const kind of ['quota', 'invalid_prompt', 'context_overflow'] as const) {
      expect(new ProviderError({ kind, provider: 'p', message: 'm' }).retryable).toBe(false);
    }
  });

  it('RETRY-3 parses retry-after-ms, Retry-After seconds and an HTTP date', () => {
    expect(parseRetryAfter(headers({ 'retry-after-ms': '300' }))).toBe(300);
    expect(parseRetryAfter(headers({ 'retry-after': '2' }))).toBe(2000);
    expect(parseRetryAfter(headers({ 'retry-after-ms': '150', 'retry-after': '9' }))).toBe(150);
    const now = Date.parse('2026-11-30T00:00:00Z');
    expect(parseRetryAfter(headers({ 'retry-after': 'Mon, 30 Nov 2026 00:00:05 GMT' }), now)).toBe(5000);
    expect(parseRetryAfter(headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(headers({}))).toBeUndefined();
  });
});
