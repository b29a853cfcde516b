import { describe, expect, it } from 'vitest';
import { encodeInput, InputDecoder } from '../src/input-decoder.js';

describe('InputDecoder', () => {
  it('decodes Enter, Tab, Shift+Tab, Backspace, arrows, paging and Ctrl keys', () => {
    const d = new InputDecoder();
    expect(d.feed('\r\t\x1b[Z\x7f\x1b[A\x1b[B\x1b[5~\x1b[6~\x03\x0a\x16')).toEqual([
      { type: 'key', name: 'enter' },
      { type: 'key', name: 'tab' },
      { type: 'key', name: 'backtab' },
      { type: 'key', name: 'backspace' },
      { type: 'key', name: 'up' },
      { type: 'key', name: 'down' },
      { type: 'key', name: 'pageup' },
      { type: 'key', name: 'pagedown' },
      { type: 'ctrl', letter: 'c' },
      { type: 'ctrl', letter: 'j' },
      { type: 'ctrl', letter: 'v' },
    ]);
  });

  it('keeps typed text together and in order with keys', () => {
    expect(new InputDecoder().feed('ab\x1b[Dc\r')).toEqual([
      { type: 'text', text: 'ab' },
      { type: 'key', name: 'left' },
      { type: 'text', text: 'c' },
      { type: 'key', name: 'enter' },
    ]);
  });

  it('TUI-6 bracketed paste, also split across reads, is one paste event', () => {
    const d = new InputDecoder();
    expect(d.feed('\x1b[200~line one\r\nline')).toEqual([]);
    expect(d.feed(' two\x1b[20')).toEqual([]);
    expect(d.feed('1~x')).toEqual([
      { type: 'paste', text: 'line one\nline two' },
      { type: 'text', text: 'x' },
    ]);
  });

  it('TUI-6 a printable burst with an inner newline is a paste; a trailing CR alone is Enter', () => {
    expect(new InputDecoder().feed('one\rtwo\r')).toEqual([{ type: 'paste', text: 'one\ntwo\n' }]);
    expect(new InputDecoder().feed('one\r')).toEqual([
      { type: 'text', text: 'one' },
      { type: 'key', name: 'enter' },
    ]);
  });

  it('SETUP-2 TUI-6 an Enter at the start of a read is a key: what was typed right after it shares the read but is no paste', () => {
    const d = new InputDecoder();
    expect(d.feed('\rsk-wrong\r')).toEqual([
      { type: 'key', name: 'enter' },
      { type: 'text', text: 'sk-wrong' },
      { type: 'key', name: 'enter' },
    ]);
    // What follows the Enter can still be a paste of its own.
    expect(d.feed('\r\none\ntwo')).toEqual([
      { type: 'key', name: 'enter' },
      { type: 'paste', text: 'one\ntwo' },
    ]);
  });

  it('SETUP-2 encodeInput gives the terminal bytes of decoded keys back (typed ahead of a prompt)', () => {
    const bytes = 'ab\r\x7f\x03\x1b[A\x1b[200~p\nq\x1b[201~';
    const events = new InputDecoder().feed(bytes);
    expect(encodeInput(events)).toBe(bytes);
    expect(new InputDecoder().feed(encodeInput(events))).toEqual(events);
  });

  it('TUI-6 SGR wheel events scroll and are never arrows', () => {
    expect(new InputDecoder().feed('\x1b[<64;10;5M\x1b[<65;10;5M\x1b[<0;3;3M')).toEqual([
      { type: 'wheel', direction: 'up' },
      { type: 'wheel', direction: 'down' },
    ]);
  });

  it('a lone ESC is Escape; an escape sequence cut by the read boundary waits for the rest', () => {
    const d = new InputDecoder();
    expect(d.feed('\x1b')).toEqual([{ type: 'key', name: 'escape' }]);
    expect(d.feed('\x1b[1;5')).toEqual([]);
    expect(d.feed('A')).toEqual([{ type: 'key', name: 'up', ctrl: true }]);
  });

  it('decodes Alt keys, Delete, Home/End and CSI u', () => {
    expect(new InputDecoder().feed('\x1bb\x1b\x7f\x1b[3~\x1b[H\x1b[F\x1b[13;2u')).toEqual([
      { type: 'alt', text: 'b' },
      { type: 'key', name: 'backspace', alt: true },
      { type: 'key', name: 'delete' },
      { type: 'key', name: 'home' },
      { type: 'key', name: 'end' },
      { type: 'key', name: 'enter', shift: true },
    ]);
  });
});
