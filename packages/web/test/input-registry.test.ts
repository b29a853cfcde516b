/** The approval input's feedback (issue 19): only with a denial, a string, and bounded. */
import { describe, expect, it } from 'vitest';
import { InputError, MAX_FEEDBACK_CHARS, parseScopedInput } from '../src/input-registry.js';

const approval = (extra: Record<string, unknown>) => ({ scope: 's1', input: { kind: 'approval', id: 2, ...extra } });

describe('issue 19: approval feedback in the input registry', () => {
  it('issue 19: a denial carries its feedback through', () => {
    expect(parseScopedInput(approval({ answer: 'deny', feedback: 'use notes.txt' })).input).toEqual({
      kind: 'approval',
      id: 2,
      answer: 'deny',
      feedback: 'use notes.txt',
    });
    expect(parseScopedInput(approval({ answer: 'once' })).input).toEqual({ kind: 'approval', id: 2, answer: 'once' });
  });

  it('issue 19: feedback on an allow, a non-string or an oversized one is refused with the field named', () => {
    expect(() => parseScopedInput(approval({ answer: 'once', feedback: 'x' }))).toThrow(
      new InputError('input.feedback goes only with answer deny.'),
    );
    expect(() => parseScopedInput(approval({ answer: 'deny', feedback: 3 }))).toThrow('input.feedback must be a string.');
    expect(() => parseScopedInput(approval({ answer: 'deny', feedback: 'x'.repeat(MAX_FEEDBACK_CHARS + 1) }))).toThrow(
      `at most ${MAX_FEEDBACK_CHARS}`,
    );
  });
});
