/** Issue 19: where a streaming message may be cut so the part before it never renders again. */
import { describe, expect, it } from 'vitest';
import { StreamSplit } from '../app/stream-split.js';

/** Feeds the text one character at a time (the worst case for a streaming cut) and returns the cut. */
function cut(text: string): number {
  const split = new StreamSplit();
  let frozen = 0;
  for (let i = 1; i <= text.length; i++) {
    const next = split.advance(text.slice(0, i));
    expect(next).toBeGreaterThanOrEqual(frozen);
    frozen = next;
  }
  return frozen;
}

describe('issue 19: StreamSplit', () => {
  it('issue 19: cuts at a blank line once the next block has begun', () => {
    expect(cut('One.\n\n')).toBe(0);
    expect(cut('One.\n\nTwo')).toBe(0);
    const text = 'One.\n\nTwo.\n';
    expect(cut(text)).toBe(text.indexOf('Two'));
    expect(cut('# Title\n\nText\n\n| a | b |\n|---|---|\n')).toBe('# Title\n\nText\n\n'.length);
  });

  it('issue 19: never cuts inside a fenced code block, even at its blank lines', () => {
    const text = '```ts\nconst a = 1;\n\nconst b = 2;\n```\n';
    expect(cut(text)).toBe(0);
    expect(cut(`${text}\nAfter.\n`)).toBe(text.length + 1);
    expect(cut('~~~~\n\nx\n~~~\n\nstill code\n')).toBe(0);
  });

  it('issue 19: never cuts a loose list, an indented continuation or a quote', () => {
    expect(cut('- one\n\n- two\n')).toBe(0);
    expect(cut('1. one\n\n2. two\n')).toBe(0);
    expect(cut('- one\n\n    more of one\n')).toBe(0);
    expect(cut('> a\n\n> b\n')).toBe(0);
    expect(cut('See [x].\n\n[x]: https://example.com\n')).toBe(0);
  });
});
