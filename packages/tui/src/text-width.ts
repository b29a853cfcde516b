/**
 * Display width of plain text (no escapes). ASCII is measured by length; other text one code
 * point at a time from a small table (wide CJK and emoji take two cells, controls none).
 * Only text with combining marks, joiners, variation selectors or astral characters goes
 * grapheme by grapheme through `string-width`. Loading it builds a grapheme segmenter and
 * Unicode-set regexes (tens of milliseconds), so it is imported only when the first such
 * cluster is measured, never for a first frame or a session that has none; until it is loaded
 * a cluster's width is estimated (two cells for emoji presentation, keycaps and astral
 * pictographs, else its first code point's) and the app lays out again (`onExactWidths`).
 */

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// Combining marks, zero-width joiners, variation selectors and surrogates (astral characters).
// Built from a string: the class lists single UTF-16 units (marks, joiners, selectors,
// surrogate halves) and is matched one unit at a time on purpose.
const COMPLEX = new RegExp(
  '[\\u0300-\\u036f\\u0483-\\u0489\\u0591-\\u05c7\\u0610-\\u061a\\u064b-\\u065f\\u0670\\u06d6-\\u06ed\\u0900-\\u0903' +
    '\\u093a-\\u094f\\u0e31-\\u0e3a\\u0e47-\\u0e4e\\u1ab0-\\u1aff\\u1dc0-\\u1dff\\u200b-\\u200f\\u20d0-\\u20ff\\u2060-\\u2064' +
    '\\ufe00-\\ufe0f\\ufe20-\\ufe2f\\ufeff\\ud800-\\udfff]',
);

let segmenter: Intl.Segmenter | undefined;
const widths = new Map<string, number>();
let stringWidth: ((text: string) => number) | undefined;
let loading: Promise<void> | undefined;

const exactListeners = new Set<() => void>();

/** Starts loading string-width (once); resolves when cluster widths are exact. */
export function loadWidths(): Promise<void> {
  loading ??= import('string-width').then((m) => {
    stringWidth = m.default;
    shortWidths.clear();
    for (const listener of exactListeners) listener();
  });
  return loading;
}

/** Calls `listener` when widths estimated so far become exact (what was laid out may change). */
export function onExactWidths(listener: () => void): () => void {
  exactListeners.add(listener);
  return () => exactListeners.delete(listener);
}

/** Before string-width is loaded: the cells a cluster of several code units most likely takes. */
function estimateWidth(grapheme: string): number {
  if (grapheme.includes('\ufe0f') || grapheme.includes('\u20e3')) return 2;
  const first = grapheme.codePointAt(0) ?? 0;
  if (first <= 0xffff) return codeWidth(first);
  // Emoji, regional indicators and pictographs; CJK extension planes.
  return (first >= 0x1f000 && first <= 0x1faff) || (first >= 0x20000 && first <= 0x3fffd) ? 2 : 1;
}

export function isPlainAscii(text: string): boolean {
  return PRINTABLE_ASCII.test(text);
}

/** Cells of one BMP code point that is not part of a complex cluster. */
function codeWidth(code: number): number {
  if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return 0;
  if (code < 0x1100) return 1;
  if (
    code <= 0x115f ||
    (code >= 0x231a && code <= 0x231b) ||
    (code >= 0x2329 && code <= 0x232a) ||
    (code >= 0x23e9 && code <= 0x23ec) ||
    (code >= 0x25fd && code <= 0x25fe) ||
    (code >= 0x2614 && code <= 0x2615) ||
    (code >= 0x2648 && code <= 0x2653) ||
    (code >= 0x26aa && code <= 0x26ab) ||
    (code >= 0x26bd && code <= 0x26be) ||
    (code >= 0x26c4 && code <= 0x26c5) ||
    code === 0x26a1 ||
    code === 0x26ce ||
    code === 0x26d4 ||
    code === 0x26ea ||
    (code >= 0x26f2 && code <= 0x26f5) ||
    code === 0x26fa ||
    code === 0x26fd ||
    code === 0x2705 ||
    (code >= 0x270a && code <= 0x270b) ||
    code === 0x2728 ||
    code === 0x274c ||
    code === 0x274e ||
    (code >= 0x2753 && code <= 0x2755) ||
    code === 0x2757 ||
    (code >= 0x2795 && code <= 0x2797) ||
    code === 0x27b0 ||
    code === 0x27bf ||
    (code >= 0x2b1b && code <= 0x2b1c) ||
    code === 0x2b50 ||
    code === 0x2b55 ||
    (code >= 0x2e80 && code <= 0x303e) ||
    (code >= 0x3041 && code <= 0x33ff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0xa000 && code <= 0xa4cf) ||
    (code >= 0xa960 && code <= 0xa97f) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe10 && code <= 0xfe19) ||
    (code >= 0xfe30 && code <= 0xfe6f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6)
  ) {
    return 2;
  }
  return 1;
}

/** The cells one grapheme takes. */
export function graphemeWidth(grapheme: string): number {
  if (grapheme.length === 1) return codeWidth(grapheme.charCodeAt(0));
  let width = widths.get(grapheme);
  if (width === undefined) {
    if (!stringWidth) {
      void loadWidths();
      return estimateWidth(grapheme);
    }
    width = stringWidth(grapheme);
    if (widths.size < 4096) widths.set(grapheme, width);
  }
  return width;
}

function segments(text: string): Iterable<string> {
  if (!COMPLEX.test(text)) return text;
  segmenter ??= new Intl.Segmenter();
  const seg = segmenter;
  return {
    *[Symbol.iterator]() {
      for (const { segment } of seg.segment(text)) yield segment;
    },
  };
}

/** The graphemes of `text`, in order. */
export function graphemes(text: string): string[] {
  if (isPlainAscii(text)) return text.split('');
  return [...segments(text)];
}

const shortWidths = new Map<string, number>();

export function textWidth(text: string): number {
  if (isPlainAscii(text)) return text.length;
  const short = text.length <= 8;
  if (short) {
    const hit = shortWidths.get(text);
    if (hit !== undefined) return hit;
  }
  let width = 0;
  for (const g of segments(text)) width += graphemeWidth(g);
  if (short && stringWidth && shortWidths.size < 4096) shortWidths.set(text, width);
  return width;
}
