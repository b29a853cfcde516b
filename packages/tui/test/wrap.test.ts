import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../src/ansi.js';
import { tokenEnd, wrapSpans } from '../src/wrap.js';

/** The tokens of the regular expression the wrapper's hand scanner stands for. */
const byRegExp = (text: string): string[] => [...text.matchAll(/\n|[^\S\n]+|[^\s]+/g)].map((m) => m[0]);

function byScanner(text: string): string[] {
  const out: string[] = [];
  for (let at = 0, end = 0; at < text.length; at = end) {
    end = tokenEnd(text, at);
    out.push(text.slice(at, end));
  }
  return out;
}

describe('word wrap (TUI-2)', () => {
  it('TUI-2 (issue 22) the wrap tokens are a newline, a run of other whitespace, or a run of anything else', () => {
    // Every character JavaScript's \s matches, and some it does not (zero-width space, NEL, CJK, emoji).
    const alphabet = [
      ...' \t\n\v\f\r\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000\ufeff',
      ...'\u200b\u0085ab-.世',
      '\u{1f600}',
      '\ud800',
    ];
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let n = 0; n < 2000; n++) {
      let text = '';
      const length = Math.floor(random() * 24);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      expect(byScanner(text), JSON.stringify(text)).toEqual(byRegExp(text));
    }
  });

  it('TUI-2 words wrap at spaces, indentation is kept, whitespace at a wrap is dropped', () => {
    const rows = wrapSpans([{ text: 'alpha beta\u00a0gamma delta\n  indented line' }], { width: 12 }).map(stripAnsi);
    expect(rows).toEqual(['alpha beta', 'gamma delta', '  indented', 'line']);
  });
});
