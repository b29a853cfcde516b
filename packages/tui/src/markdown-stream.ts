/**
 * Markdown of a message that is still streaming, laid out in time proportional to what
 * arrived since the last frame rather than to the whole message (TUI-2, and the flat
 * per-token cost the issue asks for).
 *
 * - Completed blocks (a blank line outside a code fence, followed by an unindented line) are
 *   lexed and laid out once and kept as frozen rows.
 * - Only the open tail block is re-laid out per frame. When it grows large it is frozen in
 *   pieces too: a long paragraph at a word boundary where no inline span is open (the open
 *   last row is carried into the next piece), a long code fence at a line boundary.
 *
 * The finished message is laid out once more in one piece (`renderMarkdown`), so streaming
 * approximations never outlive the stream.
 */
import type { Token, Tokens } from 'marked';
import { lexMarkdown, markdownReady, renderBlocks, renderCodeLine, renderParagraphOpen, renderPlain } from './markdown.js';
import { GrowingText } from './growing-text.js';
import { sanitize } from './sanitize.js';
import { type Carry, wrapSpansOpen } from './wrap.js';

/**
 * A tail longer than this (characters) is frozen in pieces. The open tail is lexed and wrapped
 * again on every frame, so its length is the per-frame cost while a paragraph streams (a
 * 768-character tail cost about twice the CPU per streamed token of this one, cold).
 */
const PARAGRAPH_FREEZE_AT = 256;
/** Characters kept in the open tail after a paragraph freeze. */
const PARAGRAPH_KEEP = 64;
const CODE_FREEZE_LINES = 24;
const CODE_KEEP_LINES = 6;
/**
 * The first characters of a line the scanner keeps (its blank/fence/indent checks read only a
 * line's start and whether the rest is blank), so a long line is never read again whole.
 */
const LINE_HEAD = 1024;

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
/**
 * One line of text that lexes as one plain text token: a letter first (a paragraph piece is
 * cut before a letter), then none of the characters that open spans, links, entities, HTML,
 * escapes, autolinks or tables.
 */
const PLAIN_TAIL = /^[A-Za-z][^\n\r\t*_`~[\]<>&\\|!#@:^$]*$/;

/**
 * Whether `text`, continuing an open paragraph, lexes as one text token of itself: one line of
 * plain words (`PLAIN_TAIL`) with no `www.` (GFM would link it). Such text is wrapped as it is,
 * without the lexer, as a span of the shape `inline` gives (`style` present, undefined).
 */
function plainLine(text: string): boolean {
  return PLAIN_TAIL.test(text) && !/www\./i.test(text);
}

interface Fence {
  readonly char: string;
  readonly length: number;
  readonly lang: string;
}

function openingFence(line: string): Fence | undefined {
  const m = FENCE.exec(line);
  if (!m) return undefined;
  const marker = m[1] as string;
  return { char: marker[0] as string, length: marker.length, lang: m[2] ?? '' };
}

function closesFence(line: string, fence: Fence): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
  return m !== null && (m[1] as string)[0] === fence.char && (m[1] as string).length >= fence.length;
}

export class MarkdownStream {
  /** The source; reads start at or after `frozenEnd`, the text before it is released. */
  private readonly src = new GrowingText();
  private width = -1;
  private frozen: string[] = [];
  /** Source consumed into `frozen`. */
  private frozenEnd = 0;
  /** The open last row of a paragraph frozen in pieces. */
  private carry: Carry | undefined;
  /** The fence of a code block frozen in pieces (the tail is inside it). */
  private code: Fence | undefined;
  /** Line scanner: start of the next complete line not yet scanned, and its fence state. */
  private scanPos = 0;
  private scanFence: Fence | undefined;
  private blankAt: number | undefined;
  /** Where the last search for a line end gave up (no newline before it). */
  private searchedTo = 0;
  /** The line being scanned (from `scanPos`) as far as `searchedTo`: its first LINE_HEAD characters, whether it is all blank, whether all after its head is. */
  private lineHead = '';
  private lineBlank = true;
  private restBlank = true;
  private tail: string[] = [];
  private tailDirty = true;

  get text(): string {
    return this.src.toString();
  }

  /** Characters of the source that a frame's reads may copy: those since the released point. */
  get workingLength(): number {
    return this.src.unreleased;
  }

  append(delta: string): void {
    if (delta === '') return;
    this.src.append(sanitize(delta));
    this.tailDirty = true;
  }

  /** Rows at `width`: frozen rows then the open tail. */
  rows(width: number): { readonly count: number; row(i: number): string } {
    if (width !== this.width) this.reset(width);
    if (this.tailDirty) {
      if (markdownReady()) {
        this.scan();
        this.freezeTail();
      }
      this.tail = this.layoutTail();
      this.tailDirty = false;
      // Every read from here on starts at or after `frozenEnd` (the scanner reads past `searchedTo`).
      this.src.release(this.frozenEnd);
    }
    const frozen = this.frozen;
    const tail = this.tail;
    return {
      count: frozen.length + tail.length,
      row: (i) => (i < frozen.length ? (frozen[i] as string) : (tail[i - frozen.length] ?? '')),
    };
  }

  private reset(width: number): void {
    this.width = width;
    this.frozen = [];
    this.frozenEnd = 0;
    this.carry = undefined;
    this.code = undefined;
    this.scanPos = 0;
    this.scanFence = undefined;
    this.blankAt = undefined;
    this.searchedTo = 0;
    this.newLine();
    this.src.rewind();
    this.tailDirty = true;
  }

  private newLine(): void {
    this.lineHead = '';
    this.lineBlank = true;
    this.restBlank = true;
  }

  /** Adds the characters [from, to) of the line being scanned to what is known of it. */
  private readLine(from: number, to: number): void {
    const headEnd = Math.min(to, from + Math.max(0, LINE_HEAD - this.lineHead.length));
    if (headEnd > from) {
      const head = this.src.slice(from, headEnd);
      this.lineHead += head;
      if (this.lineBlank && !/^\s*$/.test(head)) this.lineBlank = false;
    }
    if (headEnd < to && this.restBlank && !/^\s*$/.test(this.src.slice(headEnd, to))) {
      this.restBlank = false;
      this.lineBlank = false;
    }
  }

  /** Commits completed blocks found in the complete lines since the last scan. */
  private scan(): void {
    const src = this.src;
    for (;;) {
      const from = Math.max(this.scanPos, this.searchedTo);
      const nl = src.indexOf('\n', from);
      this.readLine(from, nl === -1 ? src.length : nl);
      if (nl === -1) {
        this.searchedTo = src.length;
        return;
      }
      const lineStart = this.scanPos;
      // The line as its checks read it: whole, or (longer than LINE_HEAD) its head, followed by a
      // space when anything after the head is not blank (a fence's `\s*$` fails, as on the whole line).
      const line = this.restBlank ? this.lineHead : `${this.lineHead} x`;
      const blankLine = this.lineBlank;
      this.newLine();
      this.scanPos = nl + 1;
      this.searchedTo = nl + 1;
      if (this.scanFence) {
        if (closesFence(line, this.scanFence)) {
          this.scanFence = undefined;
          // A closed fence is a complete block.
          if (this.code) this.commitCode(lineStart, nl + 1);
          else this.commit(nl + 1);
        }
        continue;
      }
      if (blankLine) {
        this.blankAt = nl + 1;
        continue;
      }
      if (this.blankAt !== undefined && !/^\s/.test(line)) this.commit(this.blankAt);
      this.blankAt = undefined;
      const fence = openingFence(line);
      if (fence) {
        // A fence interrupts a paragraph: what came before it is complete.
        this.commit(lineStart);
        this.scanFence = fence;
      }
    }
  }

  private commit(end: number): void {
    if (end <= this.frozenEnd) return;
    const tokens = lexMarkdown(this.src.slice(this.frozenEnd, end));
    if (tokens) this.pushTokens(tokens, true);
    this.frozenEnd = end;
  }

  /** The lines of a code block frozen in pieces, up to its closing fence (`closeStart`). */
  private commitCode(closeStart: number, end: number): void {
    const fence = this.code as Fence;
    const body = this.src.slice(this.frozenEnd, closeStart).replace(/\n$/, '');
    if (closeStart > this.frozenEnd) for (const line of body.split('\n')) this.frozen.push(...this.codeRows(line, fence));
    this.code = undefined;
    this.frozenEnd = end;
  }

  private codeRows(line: string, fence: Fence): string[] {
    return renderCodeLine(line, fence.lang, this.width, [], []);
  }

  /** Appends rendered tokens; `close` ends an open paragraph row. */
  private pushTokens(tokens: Token[], close: boolean): void {
    const blocks = tokens.filter((t) => t.type !== 'space');
    if (this.carry) {
      const head = blocks[0];
      if (head?.type === 'paragraph') {
        const { rows, carry } = renderParagraphOpen((head as Tokens.Paragraph).tokens, this.width, this.carry);
        this.frozen.push(...rows);
        blocks.shift();
        this.carry = carry;
      }
      if (close || blocks.length > 0) {
        this.frozen.push(this.carry.row);
        this.carry = undefined;
      }
    }
    if (blocks.length === 0) return;
    if (this.frozen.length > 0) this.frozen.push('');
    this.frozen.push(...renderBlocks(blocks, this.width));
  }

  /** Freezes a long open tail in pieces, so a frame never re-lays out more than a bounded tail. */
  private freezeTail(): void {
    if (this.code) {
      this.freezeCodeLines(this.frozenEnd);
      return;
    }
    const tail = this.src.slice(this.frozenEnd);
    const fence = openingFence(tail);
    if (fence && !tail.startsWith(' ')) {
      const firstNl = tail.indexOf('\n');
      if (firstNl === -1 || !this.scanFence) return;
      if (this.frozen.length > 0 && !this.carry) this.frozen.push('');
      else if (this.carry) {
        this.frozen.push(this.carry.row);
        this.carry = undefined;
      }
      this.code = fence;
      this.frozenEnd += firstNl + 1;
      this.freezeCodeLines(this.frozenEnd);
      return;
    }
    if (tail.length <= PARAGRAPH_FREEZE_AT) return;
    const split = neutralSplit(tail, tail.length - PARAGRAPH_KEEP);
    if (split === undefined) return;
    const piece = tail.slice(0, split);
    if (this.carry && plainLine(piece)) {
      // The paragraph goes on with plain words: laid out as the lexer's one text token would be.
      const { rows, carry } = wrapSpansOpen([{ text: piece, style: undefined }], { width: this.width, carry: this.carry });
      this.frozen.push(...rows);
      this.carry = carry;
      this.frozenEnd += split + 1;
      return;
    }
    const blocks = (lexMarkdown(piece) ?? []).filter((t) => t.type !== 'space');
    const last = blocks.at(-1);
    if (last?.type !== 'paragraph') return;
    // Blocks before the long paragraph are complete; the paragraph stays open in the carry.
    if (blocks.length > 1) this.pushTokens(blocks.slice(0, -1), true);
    else if (!this.carry && this.frozen.length > 0) this.frozen.push('');
    if (blocks.length > 1) this.frozen.push('');
    const { rows, carry } = renderParagraphOpen((last as Tokens.Paragraph).tokens, this.width, this.carry);
    this.frozen.push(...rows);
    this.carry = carry;
    this.frozenEnd += split + 1;
  }

  private freezeCodeLines(from: number): void {
    const fence = this.code as Fence;
    const body = this.src.slice(from);
    const lines = body.split('\n');
    const complete = lines.length - 1;
    if (complete < CODE_FREEZE_LINES) return;
    const take = complete - CODE_KEEP_LINES;
    let consumed = 0;
    for (let i = 0; i < take; i++) {
      const line = lines[i] as string;
      if (closesFence(line, fence)) return;
      this.frozen.push(...this.codeRows(line, fence));
      consumed += line.length + 1;
    }
    this.frozenEnd = from + consumed;
  }

  private layoutTail(): string[] {
    const tail = this.src.slice(this.frozenEnd);
    if (!markdownReady()) return renderPlain(tail, this.width);
    if (this.code) {
      const fence = this.code;
      const rows: string[] = [];
      for (const line of tail.split('\n')) {
        if (closesFence(line, fence)) break;
        rows.push(...this.codeRows(line, fence));
      }
      return rows;
    }
    if (tail.trim() === '') return this.carry ? [this.carry.row] : [];
    // The open tail of a long paragraph is re-laid out on every frame: when it is one line of
    // plain words (nothing Markdown would turn into a span, a link or a block), the lexer would
    // give back one text token of the same text, so it is wrapped as that text directly.
    if (this.carry && plainLine(tail)) {
      const open = wrapSpansOpen([{ text: tail, style: undefined }], { width: this.width, carry: this.carry });
      return [...open.rows, open.carry.row];
    }
    const tokens = lexMarkdown(tail) ?? [];
    const blocks = tokens.filter((t) => t.type !== 'space');
    const rows: string[] = [];
    let carry = this.carry;
    if (carry && blocks[0]?.type === 'paragraph') {
      const open = renderParagraphOpen((blocks.shift() as Tokens.Paragraph).tokens, this.width, carry);
      rows.push(...open.rows);
      carry = open.carry;
    }
    if (carry) rows.push(carry.row);
    if (blocks.length > 0) {
      if (this.frozen.length > 0 || rows.length > 0) rows.push('');
      rows.push(...renderBlocks(blocks, this.width));
    }
    return rows;
  }
}

/**
 * A split point at or before `limit`: a space with no inline span open before it and a plain
 * word after it, so the text after it lexes as the same paragraph continuing. Delimiter runs
 * are counted (a run of backticks, asterisks, tildes, or word-boundary underscores toggles a
 * span), brackets must balance. Undefined when there is none.
 */
export function neutralSplit(text: string, limit: number): number | undefined {
  let open = 0;
  let brackets = 0;
  let found: number | undefined;
  const isWord = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  const end = Math.min(limit, text.length - 1);
  for (let i = 0; i <= end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x60 || c === 0x2a || c === 0x7e || c === 0x5f) {
      let j = i;
      while (j + 1 < text.length && text.charCodeAt(j + 1) === c) j++;
      const intraword = c === 0x5f && isWord(text.charCodeAt(i - 1)) && isWord(text.charCodeAt(j + 1));
      if (!intraword) open ^= 1 << (c === 0x60 ? 0 : c === 0x2a ? 1 : c === 0x7e ? 2 : 3);
      i = j;
      continue;
    }
    if (c === 0x5b) brackets++;
    else if (c === 0x5d) brackets--;
    else if ((c === 0x20 || c === 0x0a) && i > 0 && open === 0 && brackets === 0 && text.charCodeAt(i - 1) !== 0x5c) {
      const next = text.charCodeAt(i + 1);
      if ((next >= 0x41 && next <= 0x5a) || (next >= 0x61 && next <= 0x7a)) found = i;
    }
  }
  return found;
}
