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
    // Every UTF-16 code unit, between two letters: whitespace or not exactly where \s says.
    for (let c = 0; c <= 0xffff; c++) {
      const text = `a${String.fromCharCode(c)}b`;
      expect(byScanner(text), `U+${c.toString(16)}`).toEqual(byRegExp(text));
    }
    // Mixed runs: every code unit \s matches (taken from the regular expression itself), some it
    // does not (zero-width space, NEL, CJK), an emoji and a lone surrogate.
    const spaces = Array.from({ length: 0x10000 }, (_, c) => String.fromCharCode(c)).filter((ch) => /\s/.test(ch));
    expect(spaces).toHaveLength(25);
    const alphabet = [...spaces, ...'\u200b\u0085ab-.世', '\u{1f600}', '\ud800'];
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
