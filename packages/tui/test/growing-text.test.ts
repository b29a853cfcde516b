import { describe, expect, it } from 'vitest';
import { GrowingText } from '../src/growing-text.js';
import { PlainStream } from '../src/plain-stream.js';
import { wrapSpans } from '../src/wrap.js';
import { plainRows } from './helpers.js';

describe('GrowingText: a streaming message read near its end (issue 22)', () => {
  it('reads the same text before and after a release, and moves only whole steps out of the read text', () => {
    const g = new GrowingText();
    let whole = '';
    for (let i = 0; i < 3000; i++) {
      const piece = i % 50 === 49 ? `w${i}\n` : `w${i} `;
      g.append(piece);
      whole += piece;
    }
    expect(g.length).toBe(whole.length);
    g.release(100);
    expect(g.readFrom).toBe(0); // less than a step: nothing moves
    g.release(9000);
    expect(g.readFrom).toBe(9000);
    expect(g.unreleased).toBe(whole.length - 9000);
    expect(g.slice(9000, 9050)).toBe(whole.slice(9000, 9050));
    expect(g.slice(whole.length - 10)).toBe(whole.slice(-10));
    expect(g.indexOf('\n', 9000)).toBe(whole.indexOf('\n', 9000));
    expect(g.indexOf('\n', whole.length - 2)).toBe(whole.indexOf('\n', whole.length - 2));
    // A read from before the released point still sees the right text (the whole text is joined for it).
    expect(g.slice(10, 30)).toBe(whole.slice(10, 30));
    expect(g.indexOf('\n', 0)).toBe(whole.indexOf('\n'));
    expect(g.toString()).toBe(whole);
    g.release(whole.length + 50); // never past the end
    expect(g.readFrom).toBe(whole.length);
    g.append('more');
    expect(g.slice(whole.length)).toBe('more');
    g.rewind();
    expect(g.readFrom).toBe(0);
    expect(g.toString()).toBe(`${whole}more`);
  });

  it('TUI-2 streamed reasoning of 30,000 characters wraps as the whole text does, at two widths, each frame reading only its end', () => {
    const words = ['thinking', 'about', 'the', 'parser,', 'then', 'its', 'tests.'];
    const text = Array.from({ length: 5000 }, (_, i) => `${words[i % words.length]}${i % 300 === 299 ? '\n' : ' '}`).join('');
    expect(text.length).toBeGreaterThan(30_000);
    for (const width of [33, 90]) {
      const s = new PlainStream(undefined);
      let most = 0;
      for (const piece of text.match(/[\s\S]{1,11}/g) ?? []) {
        s.append(piece);
        s.rows(width);
        most = Math.max(most, s.workingLength);
      }
      // A frame reads what came since the last wrap point, plus at most a release step.
      expect(most).toBeLessThan(4200);
      const whole = text.split('\n').flatMap((line) => wrapSpans([{ text: line }], { width }));
      expect(plainRows(s.rows(width))).toEqual(whole.map((r) => r.trimEnd()));
      expect(s.text).toBe(text);
    }
  });
});
