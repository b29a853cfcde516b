/**
 * The differential painter (TUI-1). It keeps the last painted frame; a new frame rewrites only
 * the rows that changed, inside one DEC 2026 synchronized update, so the terminal never shows
 * a half-drawn frame (no flicker by construction). A size change clears and repaints all.
 */
import {
  ALT_SCREEN_OFF,
  ALT_SCREEN_ON,
  BRACKETED_PASTE_OFF,
  BRACKETED_PASTE_ON,
  CLEAR_SCREEN,
  CURSOR_HIDE,
  CURSOR_SHOW,
  ERASE_LINE_RIGHT,
  MOUSE_OFF,
  MOUSE_ON,
  moveTo,
  RESET,
  SYNC_BEGIN,
  SYNC_END,
  setTitle,
  TITLE_POP,
  TITLE_PUSH,
} from './ansi.js';

export interface Frame {
  readonly rows: readonly string[];
  /** Where the hardware cursor goes (the composer caret); hidden when absent. */
  readonly cursor?: { readonly row: number; readonly col: number } | undefined;
}

export interface PaintStats {
  /** Rows written by the last paint. */
  readonly rowsWritten: number;
  /** Bytes written by the last paint. */
  readonly bytes: number;
}

export class Painter {
  private previous: string[] = [];
  private size = { cols: 0, rows: 0 };
  private cursorShown = false;
  private cursorAt = '';
  private active = false;
  last: PaintStats = { rowsWritten: 0, bytes: 0 };

  constructor(private readonly write: (data: string) => void) {}

  /** Alternate screen, title, bracketed paste and wheel reporting on. */
  enter(title: string): void {
    this.active = true;
    this.write(`${ALT_SCREEN_ON}${TITLE_PUSH}${setTitle(title)}${CURSOR_HIDE}${BRACKETED_PASTE_ON}${MOUSE_ON}${CLEAR_SCREEN}`);
    this.previous = [];
  }

  /** Restores the terminal: modes off, cursor shown, title back, main screen. */
  leave(): void {
    if (!this.active) return;
    this.active = false;
    this.write(`${RESET}${MOUSE_OFF}${BRACKETED_PASTE_OFF}${CURSOR_SHOW}${TITLE_POP}${ALT_SCREEN_OFF}`);
  }

  /** Forgets the painted frame: the next paint rewrites every row. */
  invalidate(): void {
    this.previous = [];
    this.cursorAt = '';
  }

  paint(frame: Frame, cols: number, rows: number): void {
    let out = SYNC_BEGIN;
    let written = 0;
    if (cols !== this.size.cols || rows !== this.size.rows) {
      this.size = { cols, rows };
      this.previous = [];
      out += `${RESET}${CLEAR_SCREEN}`;
    }
    const next = frame.rows;
    for (let r = 0; r < rows; r++) {
      const row = next[r] ?? '';
      if (this.previous[r] === row) continue;
      out += `${moveTo(r, 0)}${row}${RESET}${ERASE_LINE_RIGHT}`;
      written++;
    }
    this.previous = next.slice(0, rows) as string[];
    while (this.previous.length < rows) this.previous.push('');
    const cursorKey = frame.cursor ? `${frame.cursor.row},${frame.cursor.col}` : '';
    if (written === 0 && cursorKey === this.cursorAt) {
      this.last = { rowsWritten: 0, bytes: 0 };
      return;
    }
    this.cursorAt = cursorKey;
    if (frame.cursor) {
      out += `${moveTo(frame.cursor.row, frame.cursor.col)}${this.cursorShown ? '' : CURSOR_SHOW}`;
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
