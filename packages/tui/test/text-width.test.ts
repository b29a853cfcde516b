/**
 * Text width (issue 15 first paint, issue 22 item 4): complex graphemes are measured by
 * string-width's rules with regexes built on first use, so loading the terminal UI builds
 * none. Checked against string-width itself, and in a real Node process for what it loads.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { clusterWidth } from '../src/grapheme-width.js';
import { graphemes, textWidth } from '../src/text-width.js';

const CLUSTERS = [
  '👍🏽', // emoji with a skin tone
  '👨‍👩‍👧', // ZWJ family
  '🏳️‍🌈', // flag sequence with VS16
  '🇯🇵', // regional indicators
  '1️⃣', // keycap with VS16
  '#⃣', // unqualified keycap
  '❤️', // VS16 emoji presentation
  '☺︎', // VS15 text presentation
  'é', // e + combining acute
  'क्षि', // Devanagari conjunct with a spacing mark
  '각', // Hangul L+V+T jamo
  'ᄀᄀ', // unmatched leading jamo
  'ｶﾞ', // halfwidth katakana with dakuten
  '\r\n', // CRLF is one cluster, zero width
  '\u200b\u200d', // zero-width only
  '𝔘', // astral letter
  '𠀋', // astral CJK
  'a\u0301\u0302', // stacked marks
];

describe('text width', () => {
  it('TUI-1 a complex grapheme is as wide as string-width says (emoji, ZWJ, keycaps, marks, Hangul jamo, halfwidth forms, zero width)', () => {
    for (const cluster of CLUSTERS) expect(clusterWidth(cluster), JSON.stringify(cluster)).toBe(stringWidth(cluster));
    // (Lone U+200B and U+200D are measured by text-width's own table, as before: not this file's rules.)
    const line = `ok ${CLUSTERS.filter((c) => !c.startsWith('\u200b')).join(' ')} done`;
    expect(textWidth(line)).toBe(graphemes(line).reduce((sum, g) => sum + stringWidth(g), 0));
  });

  it('TUI-1 loading the terminal UI loads no string-width (its Unicode regexes cost the first frame tens of milliseconds)', () => {
    // A real Node process records every module the built package resolves (module.register hook).
    const tui = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const hook = `data:text/javascript,${encodeURIComponent(
      "export async function resolve(s, c, next) { const r = await next(s, c); process.stdout.write(r.url + '\\n'); return r; }",
    )}`;
    const register = `data:text/javascript,${encodeURIComponent(
      `import { register } from 'node:module'; register(${JSON.stringify(hook)});`,
    )}`;
    const loaded = execFileSync(
      process.execPath,
      ['--import', register, '-e', `await import(${JSON.stringify(tui)})`, '--input-type=module'],
      {
        encoding: 'utf8',
      },
    );
    expect(loaded).toContain('/tui/dist/text-width.js');
    expect(loaded).not.toMatch(/node_modules\/string-width\//);
  });
});
