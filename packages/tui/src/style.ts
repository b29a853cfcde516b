/**
 * Text styles as SGR sequences. A style is a small record; `paint` wraps text in its SGR and
 * a reset, so every styled piece is self-contained and rows can be compared as strings.
 */
import { RESET } from './ansi.js';

export interface Style {
  /** 0-255 palette index. */
  readonly fg?: number;
  readonly bg?: number;
  readonly bold?: boolean;
  readonly dim?: boolean;
  readonly italic?: boolean;
  readonly underline?: boolean;
  readonly inverse?: boolean;
  readonly strike?: boolean;
}

const cache = new Map<string, string>();
/**
 * The same style object (the theme's, mostly) gives its SGR without building the value key: a
 * frame paints hundreds of spans, and the key string was most of `sgr`'s cost (issue 22).
 */
const byObject = new WeakMap<Style, string>();

export function sgr(style: Style | undefined): string {
  if (!style) return '';
  const known = byObject.get(style);
  if (known !== undefined) return known;
  const out = sgrByValue(style);
  byObject.set(style, out);
  return out;
}

function sgrByValue(style: Style): string {
  const key = `${style.fg ?? ''}|${style.bg ?? ''}|${style.bold ? 1 : 0}${style.dim ? 1 : 0}${style.italic ? 1 : 0}${style.underline ? 1 : 0}${style.inverse ? 1 : 0}${style.strike ? 1 : 0}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const codes: string[] = [];
  if (style.bold) codes.push('1');
  if (style.dim) codes.push('2');
  if (style.italic) codes.push('3');
  if (style.underline) codes.push('4');
  if (style.inverse) codes.push('7');
  if (style.strike) codes.push('9');
  if (style.fg !== undefined)
    codes.push(style.fg < 8 ? `${30 + style.fg}` : style.fg < 16 ? `${82 + style.fg}` : `38;5;${style.fg}`);
  if (style.bg !== undefined)
    codes.push(style.bg < 8 ? `${40 + style.bg}` : style.bg < 16 ? `${92 + style.bg}` : `48;5;${style.bg}`);
  const out = codes.length === 0 ? '' : `\x1b[${codes.join(';')}m`;
  cache.set(key, out);
  return out;
}

export function paint(text: string, style: Style | undefined): string {
  if (text === '') return '';
  const open = sgr(style);
  return open === '' ? text : `${open}${text}${RESET}`;
}

const merged = new WeakMap<Style, WeakMap<Style, Style>>();

/** `over` on top of `base`; the same two styles give the same object, so `sgr` knows it. */
export function merge(base: Style | undefined, over: Style | undefined): Style | undefined {
  if (!base) return over;
  if (!over) return base;
  let byOver = merged.get(base);
  if (!byOver) merged.set(base, (byOver = new WeakMap()));
  let out = byOver.get(over);
  if (!out) byOver.set(over, (out = { ...base, ...over }));
  return out;
}

/** The palette: roles, not colours, so panels stay consistent. */
export const theme = {
  accent: { fg: 6 } as Style,
  accentBold: { fg: 6, bold: true } as Style,
  muted: { fg: 8 } as Style,
  dim: { dim: true } as Style,
  bold: { bold: true } as Style,
  user: { fg: 4, bold: true } as Style,
  error: { fg: 1 } as Style,
  errorBold: { fg: 1, bold: true } as Style,
  warn: { fg: 3 } as Style,
  success: { fg: 2 } as Style,
  added: { fg: 2 } as Style,
  removed: { fg: 1 } as Style,
  /** `[Image #N]` attachments (IMG-2). */
  marker: { fg: 5, bold: true } as Style,
  code: { fg: 3 } as Style,
  codeBlock: { fg: 7 } as Style,
  keyword: { fg: 5 } as Style,
  string: { fg: 2 } as Style,
  number: { fg: 3 } as Style,
  comment: { fg: 8, italic: true } as Style,
  heading: { fg: 6, bold: true } as Style,
  link: { fg: 4, underline: true } as Style,
  border: { fg: 8 } as Style,
  statusBar: { inverse: true } as Style,
  selected: { inverse: true } as Style,
  plan: { fg: 3, bold: true } as Style,
  work: { fg: 2, bold: true } as Style,
} as const;
