/**
 * The shared output rule of the built-in tools: text is capped at 100,000 characters, then
 * `\n[truncated to 100000 characters]`; line separators are always `\n`.
 */

export const OUTPUT_CAP = 100_000;

export function truncationNote(cap: number): string {
  return `\n[truncated to ${cap} characters]`;
}

/** Normalises line separators and caps the text, never splitting a surrogate pair. */
export function capOutput(text: string, cap = OUTPUT_CAP): string {
  const normal = text.includes('\r\n') ? text.replace(/\r\n/g, '\n') : text;
  if (normal.length <= cap) return normal;
  return cutAt(normal, cap) + truncationNote(cap);
}

/** The first `length` characters, one fewer when that would split a surrogate pair. */
export function cutAt(text: string, length: number): string {
  if (length <= 0) return '';
  if (length >= text.length) return text;
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}

/**
 * Keeps the head and the tail of a stream of text in bounded memory (a command's output can be
 * any size); the middle is counted and dropped, and the result states the cap.
 */
export class HeadTailCollector {
  private head = '';
  private tail = '';
  private dropped = 0;

  constructor(
    private readonly headChars: number,
    private readonly tailChars: number,
    private readonly capLabel: string,
  ) {}

  push(chunk: string): void {
    let rest = chunk;
    if (this.dropped === 0 && this.tail.length === 0 && this.head.length < this.headChars) {
      const room = this.headChars - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
      if (rest.length === 0) return;
    }
    this.tail += rest;
    // Trim in batches so a stream of small chunks costs amortised constant time per character.
    if (this.tail.length > this.tailChars * 2) this.trimTail();
  }

  get omitted(): number {
    return this.dropped + Math.max(0, this.tail.length - this.tailChars);
  }

  text(): string {
    this.trimTail();
    if (this.dropped === 0) return this.head + this.tail;
    return `${this.head}\n[... ${this.dropped} characters of output omitted; ${this.capLabel} ...]\n${this.tail}`;
  }

  private trimTail(): void {
    if (this.tail.length <= this.tailChars) return;
    const cut = this.tail.length - this.tailChars;
    this.dropped += cut;
    this.tail = this.tail.slice(cut);
  }
}
