import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../src/ansi.js';
import { NoteEntry, type TranscriptEntry } from '../src/entries.js';
import { arrayRows, type Rows } from '../src/rows.js';
import { Transcript } from '../src/transcript.js';

/** An entry that counts how often it is laid out. */
class Counted implements TranscriptEntry {
  layouts = 0;
  constructor(private readonly lines: string[]) {}
  rows(_width: number): Rows {
    this.layouts++;
    return arrayRows(this.lines);
  }
}

const view = (t: Transcript, height: number): string[] => t.visible(40, height).map(stripAnsi);

describe('Transcript viewport (TUI-1)', () => {
  it('shows the newest rows at the bottom with a blank row between entries', () => {
    const t = new Transcript();
    t.push(new Counted(['a1', 'a2']), new Counted(['b1']));
    expect(view(t, 10)).toEqual(['a1', 'a2', '', 'b1']);
    expect(view(t, 2)).toEqual(['', 'b1']);
  });

  it('TUI-1 a frame asks only the entries it shows: the cost does not grow with the transcript', () => {
    const t = new Transcript();
    const entries = Array.from({ length: 5000 }, (_, i) => new Counted([`entry ${i}`]));
    t.push(...entries);
    expect(view(t, 10).at(-1)).toBe('entry 4999');
    const touched = entries.filter((e) => e.layouts > 0).length;
    expect(touched).toBeLessThanOrEqual(6);
    expect((entries[0] as Counted).layouts).toBe(0);
  });

  it('TUI-6 scrolling back keeps the reading position while new output arrives; scrolling down follows again', () => {
    const t = new Transcript();
    for (let i = 0; i < 20; i++) t.push(new Counted([`line ${i}`]));
    t.scroll(-10, 40, 5);
    const before = view(t, 5);
    expect(t.scrolledBack).toBe(true);
    t.push(new Counted(['new output']));
    expect(view(t, 5)).toEqual(before);
    t.scroll(100, 40, 5);
    expect(t.scrolledBack).toBe(false);
    expect(view(t, 5).at(-1)).toBe('new output');
  });

  it('removing an entry (a discarded attempt) drops its rows', () => {
    const t = new Transcript();
    const keep = new NoteEntry('kept');
    const gone = new NoteEntry('discarded');
    t.push(keep, gone);
    t.remove(gone);
    expect(view(t, 5).join('\n')).not.toContain('discarded');
  });
});
