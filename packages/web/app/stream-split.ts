/**
 * Incremental Markdown while a message streams (issue 19): the text is cut at block boundaries
 * that later text cannot change, so each frame renders only the tail since the last cut, and
 * what is before it is rendered once and stays. A cut is a blank line outside a fenced code
 * block that is followed by a line that cannot continue the block before it (not indented, not
 * a list item, not a quote): so a loose list or a code block is never split.
 *
 * Pure text logic (no DOM), so it is tested on its own; transcript.ts does the rendering.
 */
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const CONTINUES = /^(?:\s|[-*+]\s|\d{1,9}[.)]\s|>|\[\^?[^\]]*\]:)/;

export class StreamSplit {
  /** Text before this index is frozen: it renders the same whatever follows. */
  frozen = 0;
  /** Complete lines before this index have been looked at. */
  private scanned = 0;
  /** The open fence (its character and length), if the scanned text is inside one. */
  private fence: { char: string; length: number } | undefined;
  /** A blank line outside a fence ended here: a cut, if the next line allows it. */
  private candidate: number | undefined;

  /** Looks at the complete lines added since the last call; returns the frozen length. */
  advance(text: string): number {
    for (;;) {
      const end = text.indexOf('\n', this.scanned);
      if (end < 0) break;
      const line = text.slice(this.scanned, end);
      const start = this.scanned;
      this.scanned = end + 1;
      this.line(line, start);
    }
    return this.frozen;
  }

  private line(line: string, start: number): void {
    const fence = FENCE.exec(line);
    if (this.fence) {
      const marker = fence?.[1];
      if (marker && marker[0] === this.fence.char && marker.length >= this.fence.length && line.trim() === marker) {
        this.fence = undefined;
      }
      return;
    }
    if (line.trim() === '') {
      this.candidate ??= this.scanned;
      return;
    }
    if (this.candidate !== undefined && !CONTINUES.test(line)) this.frozen = start;
    this.candidate = undefined;
    if (fence?.[1]) this.fence = { char: fence[1][0] as string, length: fence[1].length };
  }
}
