/**
 * The transcript viewport (TUI-1). Entries are kept in order; a frame asks only the entries it
 * shows for their rows, walking from the bottom (or from the scroll anchor), so the cost of a
 * frame depends on the viewport height, never on the transcript length.
 *
 * Scroll state is an anchor: the entry and row at the top of the viewport. At the bottom the
 * view follows new output; when scrolled back, new rows never move the reading position.
 */
import type { TranscriptEntry } from './entries.js';

interface Position {
  readonly entry: number;
  /** Row inside the entry's block: row 0 of every entry but the first is the blank separator. */
  readonly row: number;
}

export class Transcript {
  private entries: TranscriptEntry[] = [];
  private anchor: { entry: TranscriptEntry; row: number } | undefined;

  get length(): number {
    return this.entries.length;
  }

  get scrolledBack(): boolean {
    return this.anchor !== undefined;
  }

  get all(): readonly TranscriptEntry[] {
    return this.entries;
  }

  push(...entries: TranscriptEntry[]): void {
    for (const e of entries) this.entries.push(e);
  }

  remove(entry: TranscriptEntry): void {
    const i = this.entries.lastIndexOf(entry);
    if (i === -1) return;
    this.entries.splice(i, 1);
    if (this.anchor?.entry === entry) this.anchor = undefined;
  }

  clear(): void {
    this.entries = [];
    this.anchor = undefined;
  }

  /** Drops every cached layout (the Markdown lexer arrived). */
  invalidate(): void {
    for (const e of this.entries) e.invalidate?.();
  }

  private blockCount(i: number, width: number): number {
    const rows = (this.entries[i] as TranscriptEntry).rows(width).count;
    return i === 0 ? rows : rows + 1;
  }

  private blockRow(i: number, row: number, width: number): string {
    if (i > 0) {
      if (row === 0) return '';
      row -= 1;
    }
    return (this.entries[i] as TranscriptEntry).rows(width).row(row);
  }

  /** The rows the viewport shows, top first (fewer than `height` when the transcript is short). */
  visible(width: number, height: number): string[] {
    if (height <= 0 || this.entries.length === 0) return [];
    if (this.anchor) {
      const start = this.anchorPosition();
      if (start) {
        const rows = this.collectDown(start, height, width);
        if (rows.length === height && !this.atEnd(start, height, width)) return rows;
      }
      this.anchor = undefined;
    }
    return this.collectUp(height, width);
  }

  private anchorPosition(): Position | undefined {
    if (!this.anchor) return undefined;
    const i = this.entries.lastIndexOf(this.anchor.entry);
    return i === -1 ? undefined : { entry: i, row: this.anchor.row };
  }

  private collectUp(height: number, width: number): string[] {
    const rows: string[] = [];
    for (let i = this.entries.length - 1; i >= 0 && rows.length < height; i--) {
      const count = this.blockCount(i, width);
      for (let r = count - 1; r >= 0 && rows.length < height; r--) rows.push(this.blockRow(i, r, width));
    }
    return rows.reverse();
  }

  private collectDown(start: Position, height: number, width: number): string[] {
    const rows: string[] = [];
    let row = Math.min(start.row, Math.max(0, this.blockCount(start.entry, width) - 1));
    for (let i = start.entry; i < this.entries.length && rows.length < height; i++, row = 0) {
      const count = this.blockCount(i, width);
      for (let r = row; r < count && rows.length < height; r++) rows.push(this.blockRow(i, r, width));
    }
    return rows;
  }

  /** True when the view from `start` reaches the last row (nothing below): back to following. */
  private atEnd(start: Position, height: number, width: number): boolean {
    let remaining = -start.row;
    for (let i = start.entry; i < this.entries.length; i++) {
      remaining += this.blockCount(i, width);
      if (remaining > height) return false;
    }
    return true;
  }

  /** The top row of the viewport when following the bottom. */
  private bottomTop(height: number, width: number): Position {
    let need = height;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const count = this.blockCount(i, width);
      if (count >= need) return { entry: i, row: count - need };
      need -= count;
    }
    return { entry: 0, row: 0 };
  }

  /** Scrolls by `delta` rows (negative: back in time). */
  scroll(delta: number, width: number, height: number): void {
    if (this.entries.length === 0 || delta === 0) return;
    let pos = this.anchorPosition() ?? this.bottomTop(height, width);
    if (delta < 0) pos = this.moveUp(pos, -delta, width);
    else pos = this.moveDown(pos, delta, width);
    if (this.atEnd(pos, height, width)) this.anchor = undefined;
    else this.anchor = { entry: this.entries[pos.entry] as TranscriptEntry, row: pos.row };
  }

  scrollToBottom(): void {
    this.anchor = undefined;
  }

  private moveUp(pos: Position, n: number, width: number): Position {
    let { entry, row } = pos;
    while (n > 0) {
      if (row >= n) return { entry, row: row - n };
      n -= row;
      if (entry === 0) return { entry: 0, row: 0 };
      entry -= 1;
      row = this.blockCount(entry, width);
    }
    return { entry, row };
  }

  private moveDown(pos: Position, n: number, width: number): Position {
    let { entry, row } = pos;
    while (n > 0) {
      const count = this.blockCount(entry, width);
      if (row + n < count) return { entry, row: row + n };
      if (entry === this.entries.length - 1) return { entry, row: Math.max(0, count - 1) };
      n -= count - row;
      entry += 1;
      row = 0;
    }
    return { entry, row };
  }
}
