/**
 * Plain text that streams (reasoning, tool output): completed rows are kept, and only the
 * words after the last wrap point are laid out again, so each delta costs its own length.
 */
import { GrowingText } from './growing-text.js';
import type { Rows } from './rows.js';
import { sanitize } from './sanitize.js';
import type { Style } from './style.js';
import { type Carry, type Span, wrapSpans, wrapSpansOpen } from './wrap.js';

export class PlainStream {
  /** The source; reads start at `consumed`, the text before it is released. */
  private readonly src = new GrowingText();
  private width = -1;
  private done: string[] = [];
  private carry: Carry | undefined;
  /** Source not yet laid out into `done`/`carry` (the last, maybe partial, word). */
  private pending = '';
  private consumed = 0;
  private cached: string[] | undefined;

  constructor(
    private readonly style: Style | undefined,
    private readonly prefix: readonly Span[] = [],
  ) {}

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
    this.cached = undefined;
  }

  rows(width: number): Rows {
    if (width !== this.width) {
      this.width = width;
      this.done = [];
      this.carry = undefined;
      this.consumed = 0;
      this.src.rewind();
      this.cached = undefined;
    }
    if (!this.cached) {
      this.advance();
      const last = wrapSpans([{ text: this.pending, style: this.style }], {
        width,
        carry: this.carry,
        firstPrefix: this.prefix,
        restPrefix: this.prefix,
      });
      this.cached = last;
      this.src.release(this.consumed);
    }
    const done = this.done;
    const tail = this.cached;
    return {
      count: done.length + tail.length,
      row: (i) => (i < done.length ? (done[i] as string) : (tail[i - done.length] ?? '')),
    };
  }

  /** Lays out everything up to the last whitespace; the word after it stays pending. */
  private advance(): void {
    const text = this.src.slice(this.consumed);
    const cut = Math.max(text.lastIndexOf(' '), text.lastIndexOf('\n'));
    if (cut <= 0) {
      this.pending = text;
      return;
    }
    const ready = text.slice(0, cut);
    const lines = ready.split('\n');
    for (const [i, line] of lines.entries()) {
      const open = wrapSpansOpen([{ text: line, style: this.style }], {
        width: this.width,
        carry: this.carry,
        firstPrefix: this.prefix,
        restPrefix: this.prefix,
      });
      this.done.push(...open.rows);
      if (i < lines.length - 1) {
        this.done.push(open.carry.row);
        this.carry = undefined;
      } else this.carry = open.carry;
    }
    this.consumed += cut;
    this.pending = text.slice(cut);
    if (this.pending.startsWith('\n')) {
      if (this.carry) this.done.push(this.carry.row);
      this.carry = undefined;
      this.pending = this.pending.slice(1);
      this.consumed += 1;
    }
  }
}
