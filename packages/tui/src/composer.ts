/**
 * The composer buffer (TUI-6): multi-line text plus attached image markers. A marker from an
 * attachment is one atom: the cursor steps over it whole and deletion removes it whole, so no
 * part of `[Image #N]` can ever be left behind (IMG-2). The same characters typed or pasted
 * by the user are ordinary text atoms and stay plain (IMG-3).
 */
import { sanitizeInput } from './sanitize.js';
import { theme } from './style.js';
import { graphemes, graphemeWidth } from './text-width.js';
import type { Span } from './wrap.js';

export interface ImageAtom {
  readonly image: number;
}

/** A large paste shown as `[Pasted text #N +K lines]` (TUIX-6); the whole text is sent. */
export interface PasteAtom {
  readonly paste: number;
  readonly text: string;
}

/** One grapheme of text (`\n` included), an attached image, or a collapsed paste. */
export type Atom = string | ImageAtom | PasteAtom;

/** A paste of at least this many lines, or this many characters, collapses (TUIX-6). */
export const PASTE_COLLAPSE_LINES = 10;
export const PASTE_COLLAPSE_CHARS = 1000;

export function pasteLabel(atom: PasteAtom): string {
  const lines = atom.text.split('\n').length;
  return `[Pasted text #${atom.paste} +${lines} line${lines === 1 ? '' : 's'}]`;
}

function atomLabel(atom: ImageAtom | PasteAtom): string {
  return 'image' in atom ? markerLabel(atom.image) : pasteLabel(atom);
}

/** Where an attached marker starts in the submitted text, and its image number. */
export interface ComposerSpan {
  readonly start: number;
  readonly number: number;
}

export interface ComposerValue {
  readonly text: string;
  readonly spans: readonly ComposerSpan[];
}

export function markerLabel(number: number): string {
  return `[Image #${number}]`;
}

const TAB_WIDTH = 4;

function atomWidth(atom: Atom): number {
  if (typeof atom !== 'string') return atomLabel(atom).length;
  if (atom === '\t') return TAB_WIDTH;
  return graphemeWidth(atom);
}

function isWordChar(atom: Atom | undefined): boolean {
  return typeof atom === 'string' && /[\p{L}\p{N}_]/u.test(atom);
}

export interface ComposerLayout {
  /** Spans of each visual row (without the prompt prefix). */
  readonly rows: Span[][];
  readonly cursorRow: number;
  readonly cursorCol: number;
}

export class Composer {
  private atoms: Atom[] = [];
  private cursorAt = 0;

  get cursor(): number {
    return this.cursorAt;
  }

  get isEmpty(): boolean {
    return this.atoms.length === 0;
  }

  get length(): number {
    return this.atoms.length;
  }

  /** The atoms (read-only view, for tests and rendering). */
  get content(): readonly Atom[] {
    return this.atoms;
  }

  /** Plain text, markers as their labels. */
  get text(): string {
    return this.value().text;
  }

  /** The submitted text and where its attached markers are (IMG-4 tags exactly these). */
  value(): ComposerValue {
    let text = '';
    const spans: ComposerSpan[] = [];
    for (const atom of this.atoms) {
      if (typeof atom === 'string') text += atom;
      else if ('paste' in atom) text += atom.text;
      else {
        spans.push({ start: text.length, number: atom.image });
        text += markerLabel(atom.image);
      }
    }
    return { text, spans };
  }

  imageNumbers(): number[] {
    return this.atoms.filter((a): a is ImageAtom => typeof a !== 'string' && 'image' in a).map((a) => a.image);
  }

  /** Typed or pasted text: sanitised, CRLF as LF, inserted at the cursor as plain atoms. */
  insertText(text: string): void {
    const clean = sanitizeInput(text);
    if (clean === '') return;
    const atoms = graphemes(clean);
    this.atoms.splice(this.cursorAt, 0, ...atoms);
    this.cursorAt += atoms.length;
  }

  private pastes = 0;

  /**
   * A paste: a large one (PASTE_COLLAPSE_LINES lines or PASTE_COLLAPSE_CHARS characters) becomes
   * one atomic `[Pasted text #N +K lines]` span, numbered in this composer; a small one is text.
   */
  insertPaste(text: string): void {
    const clean = sanitizeInput(text);
    if (clean.split('\n').length < PASTE_COLLAPSE_LINES && clean.length < PASTE_COLLAPSE_CHARS) {
      this.insertText(clean);
      return;
    }
    this.pastes += 1;
    this.atoms.splice(this.cursorAt, 0, { paste: this.pastes, text: clean });
    this.cursorAt += 1;
  }

  insertImage(number: number): void {
    this.atoms.splice(this.cursorAt, 0, { image: number });
    this.cursorAt += 1;
  }

  newline(): void {
    this.atoms.splice(this.cursorAt, 0, '\n');
    this.cursorAt += 1;
  }

  /** A copy of the buffer (the draft kept while browsing history). */
  snapshot(): { readonly atoms: readonly Atom[]; readonly cursor: number } {
    return { atoms: [...this.atoms], cursor: this.cursorAt };
  }

  restore(snapshot: { readonly atoms: readonly Atom[]; readonly cursor: number }): void {
    this.atoms = [...snapshot.atoms];
    this.cursorAt = Math.min(snapshot.cursor, this.atoms.length);
  }

  /** Replaces everything (history recall); the text is plain (no attachments). */
  setText(text: string): void {
    this.atoms = graphemes(sanitizeInput(text));
    this.cursorAt = this.atoms.length;
  }

  clear(): void {
    this.atoms = [];
    this.cursorAt = 0;
  }

  /** The atom before the cursor, whole (a marker goes at once). */
  backspace(): boolean {
    if (this.cursorAt === 0) return false;
    this.atoms.splice(this.cursorAt - 1, 1);
    this.cursorAt -= 1;
    return true;
  }

  deleteForward(): boolean {
    if (this.cursorAt >= this.atoms.length) return false;
    this.atoms.splice(this.cursorAt, 1);
    return true;
  }

  left(): void {
    if (this.cursorAt > 0) this.cursorAt -= 1;
  }

  right(): void {
    if (this.cursorAt < this.atoms.length) this.cursorAt += 1;
  }

  /** Start of the current logical line. */
  home(): void {
    while (this.cursorAt > 0 && this.atoms[this.cursorAt - 1] !== '\n') this.cursorAt -= 1;
  }

  end(): void {
    while (this.cursorAt < this.atoms.length && this.atoms[this.cursorAt] !== '\n') this.cursorAt += 1;
  }

  private wordStartBefore(at: number): number {
    let i = at;
    while (i > 0 && !isWordChar(this.atoms[i - 1]) && typeof this.atoms[i - 1] === 'string') i -= 1;
    if (i > 0 && typeof this.atoms[i - 1] !== 'string') return i - 1;
    while (i > 0 && isWordChar(this.atoms[i - 1])) i -= 1;
    return i;
  }

  wordLeft(): void {
    this.cursorAt = this.wordStartBefore(this.cursorAt);
  }

  wordRight(): void {
    let i = this.cursorAt;
    if (i < this.atoms.length && typeof this.atoms[i] !== 'string') {
      this.cursorAt = i + 1;
      return;
    }
    while (i < this.atoms.length && !isWordChar(this.atoms[i]) && typeof this.atoms[i] === 'string') i += 1;
    while (i < this.atoms.length && isWordChar(this.atoms[i])) i += 1;
    this.cursorAt = i;
  }

  /** Ctrl+W / Alt+Backspace: the word before the cursor (a marker counts as one word). */
  deleteWordBack(): void {
    const start = this.wordStartBefore(this.cursorAt);
    this.atoms.splice(start, this.cursorAt - start);
    this.cursorAt = start;
  }

  /** Ctrl+U: to the start of the logical line. */
  deleteToLineStart(): void {
    const end = this.cursorAt;
    this.home();
    this.atoms.splice(this.cursorAt, end - this.cursorAt);
  }

  /** Ctrl+K: to the end of the logical line. */
  deleteToLineEnd(): void {
    const start = this.cursorAt;
    let end = start;
    while (end < this.atoms.length && this.atoms[end] !== '\n') end += 1;
    this.atoms.splice(start, end - start);
  }

  /** Removes the last atom when it is `\` (for `\` then Enter = newline); true when it did. */
  takeTrailingBackslash(): boolean {
    if (this.cursorAt === 0 || this.atoms[this.cursorAt - 1] !== '\\') return false;
    this.atoms.splice(this.cursorAt - 1, 1);
    this.cursorAt -= 1;
    return true;
  }

  /** Visual rows at `width` (character wrap; a marker never splits), with the cursor position. */
  layout(width: number): ComposerLayout {
    const w = Math.max(4, width);
    const rows: Span[][] = [[]];
    let col = 0;
    let cursorRow = 0;
    let cursorCol = 0;
    let run = '';
    const flush = (): void => {
      if (run !== '') (rows.at(-1) as Span[]).push({ text: run });
      run = '';
    };
    const breakRow = (): void => {
      flush();
      rows.push([]);
      col = 0;
    };
    for (let i = 0; i <= this.atoms.length; i++) {
      const atom = this.atoms[i];
      if (atom !== undefined && atom !== '\n' && col + atomWidth(atom) > w) breakRow();
      if (i === this.cursorAt) {
        cursorRow = rows.length - 1;
        cursorCol = col;
      }
      if (atom === undefined) break;
      if (atom === '\n') {
        breakRow();
        continue;
      }
      if (typeof atom === 'string') {
        run += atom === '\t' ? ' '.repeat(TAB_WIDTH) : atom;
      } else {
        flush();
        (rows.at(-1) as Span[]).push({ text: atomLabel(atom), style: theme.marker });
      }
      col += atomWidth(atom);
    }
    flush();
    if (cursorCol >= w) {
      cursorRow += 1;
      cursorCol = 0;
      if (rows.length <= cursorRow) rows.push([]);
    }
    return { rows, cursorRow, cursorCol };
  }

  /**
   * Moves the cursor one visual row up or down at `width`, keeping its column as near as it
   * can. False at the first/last row (the caller browses history then).
   */
  moveVertical(direction: -1 | 1, width: number): boolean {
    const w = Math.max(4, width);
    // Position of every cursor slot 0..length.
    const slots: { row: number; col: number }[] = [];
    let row = 0;
    let col = 0;
    for (let i = 0; i <= this.atoms.length; i++) {
      const atom = this.atoms[i];
      if (atom !== undefined && atom !== '\n' && col + atomWidth(atom) > w) {
        row += 1;
        col = 0;
      }
      slots.push({ row, col });
      if (atom === undefined) break;
      if (atom === '\n') {
        row += 1;
        col = 0;
      } else col += atomWidth(atom);
    }
    const here = slots[this.cursorAt] as { row: number; col: number };
    const target = here.row + direction;
    if (target < 0 || target > row) return false;
    let best = -1;
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i] as { row: number; col: number };
      if (s.row !== target) continue;
      if (best === -1 || s.col <= here.col) best = i;
      if (s.col >= here.col) break;
    }
    if (best === -1) return false;
    this.cursorAt = best;
    return true;
  }
}
