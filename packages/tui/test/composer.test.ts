import { describe, expect, it } from 'vitest';
import { Composer } from '../src/composer.js';

function composer(text = ''): Composer {
  const c = new Composer();
  c.insertText(text);
  return c;
}

describe('Composer', () => {
  it('IMG-2 an attached marker is one atom: Backspace removes all of it', () => {
    const c = composer('look ');
    c.insertImage(3);
    expect(c.value()).toEqual({ text: 'look [Image #3]', spans: [{ start: 5, number: 3 }] });
    c.backspace();
    expect(c.text).toBe('look ');
    expect(c.imageNumbers()).toEqual([]);
  });

  it('IMG-2 arrows step over the whole marker and Delete removes it whole', () => {
    const c = composer('a');
    c.insertImage(1);
    c.insertText('b');
    c.left();
    c.left();
    expect(c.cursor).toBe(1);
    c.insertText('X');
    expect(c.text).toBe('aX[Image #1]b');
    c.deleteForward();
    expect(c.text).toBe('aXb');
  });

  it('IMG-2 word deletion and line deletion never split a marker', () => {
    const c = composer('see ');
    c.insertImage(2);
    c.deleteWordBack();
    expect(c.text).toBe('see ');
    c.insertImage(4);
    c.insertText(' end');
    c.home();
    c.right();
    c.deleteToLineEnd();
    expect(c.text).toBe('s');
    expect(c.imageNumbers()).toEqual([]);
  });

  it('IMG-3 the same characters typed by the user are plain text', () => {
    const c = composer('[Image #1]');
    expect(c.value().spans).toEqual([]);
    c.backspace();
    expect(c.text).toBe('[Image #1');
  });

  it('IMG-4 spans point at the label in the submitted text, after multi-line text', () => {
    const c = composer('line one\nline ');
    c.insertImage(7);
    c.insertText(' and ');
    c.insertImage(8);
    const { text, spans } = c.value();
    for (const span of spans)
      expect(text.slice(span.start, span.start + `[Image #${span.number}]`.length)).toBe(`[Image #${span.number}]`);
    expect(spans.map((s) => s.number)).toEqual([7, 8]);
  });

  it('TUI-6 pasted text is normalised: CRLF to LF, controls and bidi characters dropped', () => {
    const c = composer('a\r\nb\u202ec\u0007d\u2063');
    expect(c.text).toBe('a\nbcd');
  });

  it('TUI-6 a trailing backslash turns Enter into a newline', () => {
    const c = composer('first\\');
    expect(c.takeTrailingBackslash()).toBe(true);
    c.newline();
    c.insertText('second');
    expect(c.text).toBe('first\nsecond');
    expect(c.takeTrailingBackslash()).toBe(false);
  });

  it('TUI-6 Up/Down move through visual rows and report the edges (for history)', () => {
    const c = composer('0123456789abcdef');
    // width 8: two visual rows.
    expect(c.moveVertical(-1, 8)).toBe(true);
    expect(c.cursor).toBe(7);
    expect(c.moveVertical(-1, 8)).toBe(false);
    expect(c.moveVertical(1, 8)).toBe(true);
    expect(c.moveVertical(1, 8)).toBe(false);
  });

  it('lays out a marker unbroken: it wraps whole to the next row', () => {
    const c = composer('abcdefgh');
    c.insertImage(12);
    const layout = c.layout(12);
    expect(layout.rows.map((r) => r.map((s) => s.text).join(''))).toEqual(['abcdefgh', '[Image #12]']);
    expect(layout.cursorRow).toBe(1);
  });

  it('wide characters count two cells', () => {
    const c = composer('漢字');
    expect(c.layout(20).cursorCol).toBe(4);
  });
});
