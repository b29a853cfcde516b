/**
 * The inline painter (TUIX-8): no alternate screen and no mouse capture. Finished transcript
 * rows are written once, above the live region, and scroll into the terminal's own
 * scroll-back (native scrolling and selection, the conversation stays after exit); only the
 * live region at the bottom (the streaming entry's tail, panels, progress row, status bar,
 * composer) is repainted, in place, with relative cursor moves inside one DEC 2026
 * synchronized update. When the live region keeps its height and nothing is committed, only
 * the rows that changed are rewritten.
 */
import {
  BRACKETED_PASTE_OFF,
  BRACKETED_PASTE_ON,
  CURSOR_HIDE,
  CURSOR_SHOW,
  ERASE_LINE_RIGHT,
  RESET,
  SYNC_BEGIN,
  SYNC_END,
  setTitle,
  stripAnsi,
  TITLE_POP,
  TITLE_PUSH,
} from './ansi.js';
import type { PaintStats } from './painter.js';
import { textWidth } from './text-width.js';

export interface InlineFrame {
  /** Rows to write once into the scroll-back, above the live region. */
  readonly committed: readonly string[];
  /** The live region, top first. */
  readonly live: readonly string[];
  /** The caret, as a row of the live region. */
  readonly cursor?: { readonly row: number; readonly col: number } | undefined;
}

const ERASE_DOWN = '\x1b[J';
const up = (n: number): string => (n > 0 ? `\x1b[${n}A` : '');
const down = (n: number): string => (n > 0 ? `\x1b[${n}B` : '');
const column = (col: number): string => `\r${col > 0 ? `\x1b[${col}C` : ''}`;

export class InlinePainter {
  private previous: string[] = [];
  /** The live row the hardware cursor is on. */
  private cursorRow = 0;
  private cols = 0;
  private cursorShown = false;
  private active = false;
  private fresh = true;
  /** Rows committed above the live region since `enter` (what `discard` may take back). */
  private committedRows = 0;
  last: PaintStats = { rowsWritten: 0, bytes: 0 };

  constructor(private readonly write: (data: string) => void) {}

  enter(title: string): void {
    this.active = true;
    this.fresh = true;
    this.previous = [];
    this.cursorRow = 0;
    this.committedRows = 0;
    this.write(`${TITLE_PUSH}${setTitle(title)}${CURSOR_HIDE}${BRACKETED_PASTE_ON}`);
  }

  /** Writes the last committed rows, erases the live region, and gives the terminal back. */
  leave(committed: readonly string[] = []): void {
    if (!this.active) return;
    this.active = false;
    let out = this.toTop();
    out += ERASE_DOWN;
    for (const row of committed) out += `${row}${RESET}\r\n`;
    this.previous = [];
    this.cursorRow = 0;
    this.write(`${out}${RESET}${BRACKETED_PASTE_OFF}${CURSOR_SHOW}${TITLE_POP}`);
  }

  /**
   * Gives the terminal back with nothing of this session left on it: the live region and, when
   * they are still on the screen (`rows` high), the rows committed since `enter` are erased. For
   * a start-up that failed after its first frame (issue 22), so its error stands alone.
   */
  discard(rows: number): void {
    if (!this.active) return;
    this.active = false;
    const above = this.cursorRow + this.committedRows + 1 <= rows ? this.committedRows : 0;
    const out = `${up(this.cursorRow + above)}\r${ERASE_DOWN}`;
    this.previous = [];
    this.cursorRow = 0;
    this.committedRows = 0;
    this.write(`${out}${RESET}${BRACKETED_PASTE_OFF}${CURSOR_SHOW}${TITLE_POP}`);
  }

  /** Clears the visible screen (the scroll-back stays); the live region starts at the top. */
  clearScreen(): void {
    if (!this.active) return;
    this.write('\x1b[H\x1b[2J');
    this.fresh = true;
    this.previous = [];
    this.cursorRow = 0;
    this.committedRows = 0;
  }

  /** The next paint rewrites the whole live region (the old rows still tell how tall it was). */
  invalidate(): void {
    this.forceFull = true;
  }

  private forceFull = false;

  /** From the cursor to the first live row, column 0. */
  private toTop(): string {
    return `${up(this.cursorRow)}\r`;
  }

  paint(frame: InlineFrame, cols: number, rows: number): void {
    const live = frame.live.slice(Math.max(0, frame.live.length - rows));
    let out = SYNC_BEGIN;
    let written = 0;
    if (cols !== this.cols && !this.fresh) {
      // The terminal re-wrapped the old live rows at the new width: count where the top went.
      let above = 0;
      for (let r = 0; r < this.cursorRow; r++)
        above += Math.max(1, Math.ceil(textWidth(stripAnsi(this.previous[r] ?? '')) / Math.max(1, cols)));
      this.cursorRow = above;
      this.forceFull = true;
    }
    this.cols = cols;
    const full = this.fresh || this.forceFull || frame.committed.length > 0 || live.length !== this.previous.length;
    this.forceFull = false;
    if (full) {
      if (!this.fresh) out += this.toTop();
      else out += '\r';
      out += ERASE_DOWN;
      for (const row of frame.committed) out += `${row}${RESET}\r\n`;
      this.committedRows += frame.committed.length;
      live.forEach((row, i) => {
        out += `${row}${RESET}${i < live.length - 1 ? '\r\n' : ''}`;
      });
      written = frame.committed.length + live.length;
      this.cursorRow = Math.max(0, live.length - 1);
    } else {
      let at = this.cursorRow;
      for (let r = 0; r < live.length; r++) {
        const row = live[r] as string;
        if (this.previous[r] === row) continue;
        out += `${r < at ? up(at - r) : down(r - at)}\r${row}${RESET}${ERASE_LINE_RIGHT}`;
        at = r;
        written++;
      }
      this.cursorRow = at;
    }
    this.fresh = false;
    this.previous = [...live];
    const caret = frame.cursor
      ? { row: Math.min(live.length - 1, frame.cursor.row - (frame.live.length - live.length)), col: frame.cursor.col }
      : undefined;
    if (written === 0 && !caret && !this.cursorShown) {
      this.last = { rowsWritten: 0, bytes: 0 };
      return;
    }
    if (caret && caret.row >= 0) {
      out += `${caret.row < this.cursorRow ? up(this.cursorRow - caret.row) : down(caret.row - this.cursorRow)}${column(caret.col)}`;
      this.cursorRow = caret.row;
      if (!this.cursorShown) out += CURSOR_SHOW;
      this.cursorShown = true;
    } else if (this.cursorShown) {
      out += CURSOR_HIDE;
      this.cursorShown = false;
    }
    out += SYNC_END;
    this.last = { rowsWritten: written, bytes: out.length };
    this.write(out);
  }
}
