/**
 * Issue 15 first paint: string-width (a grapheme segmenter and Unicode-set regexes built when it
 * loads) is imported after the first frame. Before it is loaded a cluster's width is estimated
 * and never cached; once loaded every width is string-width's own.
 */
import stringWidth from 'string-width';
import { describe, expect, it, vi } from 'vitest';
import { graphemes, graphemeWidth, onExactWidths, textWidth } from '../src/text-width.js';

// The last two are estimated wrong (a Devanagari conjunct, a lone regional indicator), so a kept
// estimate would show after the load.
const clusters = ['👨‍👩‍👧', '🇫🇷', '1️⃣', '❤️', 'é', '𠜎', 'a\u200b', '\u0915\u094d\u0937\u093f', '\u{1f1e6}'];

describe('TUI-1 text widths without string-width on the first frame (issue 15 first paint)', () => {
  it('TUI-1 estimates clusters until string-width is loaded (the first cluster starts the load), then measures them with it, the estimates not kept', async () => {
    let exact = 0;
    onExactWidths(() => exact++);
    expect(textWidth('plain ascii, no load')).toBe(20);
    expect(clusters.map((c) => graphemeWidth(c))).toEqual([2, 2, 2, 2, 1, 2, 1, 1, 2]);
    expect(textWidth('ok 👨‍👩‍👧')).toBe(5);
    expect(textWidth('plain ascii')).toBe(11);
    expect(textWidth('\u0915\u094d\u0937\u093f')).toBe(1);
    expect(exact).toBe(0);
    // Nothing calls loadWidths: the first cluster measured started it.
    await vi.waitFor(() => expect(exact).toBe(1));
    expect(clusters.map((c) => graphemeWidth(c))).toEqual(clusters.map((c) => stringWidth(c)));
    expect(textWidth('ok 👨‍👩‍👧')).toBe(3 + stringWidth('👨‍👩‍👧'));
    expect([stringWidth('\u0915\u094d\u0937\u093f'), stringWidth('\u{1f1e6}')]).toEqual([2, 1]);
    expect(textWidth('\u0915\u094d\u0937\u093f')).toBe(2);
    expect(graphemes('a👨‍👩‍👧b')).toEqual(['a', '👨‍👩‍👧', 'b']);
  });
});
