/**
 * Word wrap for styled spans. Rows come out as self-contained strings (each styled run wrapped
 * in its SGR and a reset), at most `width` cells wide. Prefixes (list bullets, quote bars,
 * panel borders) are repeated on every row. A `carry` continues a row that an earlier call
 * left open, so a streaming paragraph can be laid out in pieces (see markdown-stream.ts).
 */
import { paint, type Style } from './style.js';
import { graphemes, graphemeWidth, isPlainAscii, textWidth } from './text-width.js';

export interface Span {
  readonly text: string;
  readonly style?: Style | undefined;
}

/** An open last row: its painted text and width, continued by the next call. */
export interface Carry {
  readonly row: string;
  readonly width: number;
}

export interface WrapOptions {
  readonly width: number;
  /** Spans at the start of the first row (a bullet). */
  readonly firstPrefix?: readonly Span[];
  /** Spans at the start of every later row (the bullet's indent). */
  readonly restPrefix?: readonly Span[];
  /** Continue this open row instead of starting a new one. */
  readonly carry?: Carry | undefined;
}

export function spansWidth(spans: readonly Span[]): number {
  let w = 0;
  for (const s of spans) w += textWidth(s.text);
  return w;
}

export function paintSpans(spans: readonly Span[]): string {
  let out = '';
  for (const s of spans) out += paint(s.text, s.style);
  return out;
}

/** Builds rows run by run; consecutive text of one style shares one SGR pair. */
class RowWriter {
  readonly rows: string[] = [];
  private done = '';
  private runText = '';
  private runStyle: Style | undefined;
  col = 0;
  /** True while nothing but the prefix is on the current row. */
  fresh = true;

  constructor(
    readonly width: number,
    private readonly restPrefix: readonly Span[],
    first: readonly Span[],
    carry: Carry | undefined,
  ) {
    if (carry) {
      this.done = carry.row;
      this.col = carry.width;
      this.fresh = false;
    } else this.putPrefix(first);
  }

  private putPrefix(prefix: readonly Span[]): void {
    for (const s of prefix) this.put(s.text, s.style, textWidth(s.text));
    this.fresh = true;
  }

  put(text: string, style: Style | undefined, width: number): void {
    if (style !== this.runStyle) {
      this.flushRun();
      this.runStyle = style;
    }
    this.runText += text;
    this.col += width;
    this.fresh = false;
  }

  private flushRun(): void {
    if (this.runText !== '') this.done += paint(this.runText, this.runStyle);
    this.runText = '';
  }

  newRow(): void {
    this.flushRun();
    this.rows.push(this.done);
    this.done = '';
    this.col = 0;
    this.runStyle = undefined;
    this.putPrefix(this.restPrefix);
  }

  /** The open row (for a carry) without closing it. */
  open(): Carry {
    this.flushRun();
    this.runStyle = undefined;
    return { row: this.done, width: this.col };
  }

  finish(): string[] {
    this.flushRun();
    this.rows.push(this.done);
    return this.rows;
  }
}

/** Whether a UTF-16 code unit is `\s` in a JavaScript regular expression. */
function isSpace(c: number): boolean {
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * The end of the wrap token starting at `at`: a newline alone, a run of other whitespace, or a
 * run of anything else (`/\n|[^\S\n]+|[^\s]+/g`, scanned by hand: `matchAll` cloned its regular
 * expression and made a match array per token on every frame of a streaming reply, issue 22).
 */
export function tokenEnd(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === 10) return at + 1;
  let end = at + 1;
  if (isSpace(first)) {
    while (end < text.length) {
      const c = text.charCodeAt(end);
      if (c === 10 || !isSpace(c)) break;
      end++;
    }
  } else {
    while (end < text.length && !isSpace(text.charCodeAt(end))) end++;
  }
  return end;
}

function layout(spans: readonly Span[], options: WrapOptions): RowWriter {
  const width = Math.max(1, options.width);
  const writer = new RowWriter(width, options.restPrefix ?? [], options.firstPrefix ?? [], options.carry);
  // Whitespace before the next word: kept as typed inside a row, dropped at a wrap.
  let pending: { text: string; style: Style | undefined } | undefined;
  // A continued row is separated from the new words by one space, unless the new text brings
  // its own whitespace (a stream cut before a space): then that whitespace, not both.
  let implicit = false;
  let lineStart = !options.carry;
  if (options.carry && options.carry.width > 0) {
    pending = { text: ' ', style: undefined };
    implicit = true;
  }
  for (const span of spans) {
    const text = span.text;
    for (let at = 0, end = 0; at < text.length; at = end) {
      end = tokenEnd(text, at);
      const first = text.charCodeAt(at);
      if (first === 10) {
        writer.newRow();
        pending = undefined;
        lineStart = true;
        continue;
      }
      const token = text.slice(at, end);
      if (isSpace(first)) {
        // Indentation at the start of a line is kept; whitespace at a wrap is dropped.
        if (!writer.fresh || lineStart) pending = { text: (implicit ? '' : (pending?.text ?? '')) + token, style: span.style };
        implicit = false;
        continue;
      }
      implicit = false;
      lineStart = false;
      const w = isPlainAscii(token) ? token.length : textWidth(token);
      const space = pending ? pending.text.length : 0;
      if (writer.col + space + w <= width) {
        if (pending) writer.put(pending.text, pending.style, space);
        writer.put(token, span.style, w);
      } else if (!writer.fresh && w <= width - prefixWidth(options)) {
        writer.newRow();
        writer.put(token, span.style, w);
      } else {
        if (pending && writer.col + space < width) writer.put(pending.text, pending.style, space);
        breakWord(writer, token, span.style, width);
      }
      pending = undefined;
    }
  }
  return writer;
}

function prefixWidth(options: WrapOptions): number {
  return spansWidth(options.restPrefix ?? []);
}

function breakWord(writer: RowWriter, word: string, style: Style | undefined, width: number): void {
  if (isPlainAscii(word)) {
    let at = 0;
    while (at < word.length) {
      let room = width - writer.col;
      if (room <= 0) {
        writer.newRow();
        room = Math.max(1, width - writer.col);
      }
      const piece = word.slice(at, at + room);
      writer.put(piece, style, piece.length);
      at += piece.length;
    }
    return;
  }
  for (const g of graphemes(word)) {
    const w = graphemeWidth(g);
    if (writer.col + w > width && !writer.fresh) writer.newRow();
    writer.put(g, style, w);
  }
}

/** Word-wraps spans into rows. */
export function wrapSpans(spans: readonly Span[], options: WrapOptions): string[] {
  return layout(spans, options).finish();
}

/** Word-wraps spans and returns the closed rows plus the open last row (to continue later). */
export function wrapSpansOpen(spans: readonly Span[], options: WrapOptions): { rows: string[]; carry: Carry } {
  const writer = layout(spans, options);
  const carry = writer.open();
  return { rows: writer.rows, carry };
}

/** Hard-wraps one line of preformatted spans (code, tool output): every cell kept, breaks anywhere. */
export function wrapHard(spans: readonly Span[], width: number, prefix: readonly Span[] = []): string[] {
  const writer = new RowWriter(Math.max(1, width), prefix, prefix, undefined);
  for (const span of spans) {
    if (isPlainAscii(span.text)) {
      let at = 0;
      while (at < span.text.length) {
        let room = writer.width - writer.col;
        if (room <= 0) {
          writer.newRow();
          room = Math.max(1, writer.width - writer.col);
        }
        const piece = span.text.slice(at, at + room);
        writer.put(piece, span.style, piece.length);
        at += piece.length;
      }
      continue;
    }
    for (const g of graphemes(span.text)) {
      const w = graphemeWidth(g);
      if (writer.col + w > writer.width && !writer.fresh) writer.newRow();
      writer.put(g, span.style, w);
    }
  }
  return writer.finish();
}

/** Cuts plain text to `width` cells, ending with `…` when cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  if (isPlainAscii(text)) return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
  if (textWidth(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const g of graphemes(text)) {
    const w = graphemeWidth(g);
    if (used + w > width - 1) break;
    out += g;
    used += w;
  }
  return `${out}…`;
}

/** Cuts plain text to `width` cells keeping its end (`…` first), for paths. */
export function truncateStart(text: string, width: number): string {
  if (width <= 0) return '';
  if (textWidth(text) <= width) return text;
  const gs = graphemes(text);
  let out = '';
  let used = 0;
  for (let i = gs.length - 1; i >= 0; i--) {
    const g = gs[i] as string;
    const w = graphemeWidth(g);
    if (used + w > width - 1) break;
    out = g + out;
    used += w;
  }
  return `…${out}`;
}
