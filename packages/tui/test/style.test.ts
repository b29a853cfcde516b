import { describe, expect, it } from 'vitest';
import { merge, paint, sgr, theme } from '../src/style.js';

describe('styles (TUI-2)', () => {
  it('TUI-2 (issue 22) a merged style is made once per pair, and its SGR carries both parts', () => {
    const a = merge(theme.heading, theme.code);
    expect(merge(theme.heading, theme.code)).toBe(a);
    expect(merge(theme.code, theme.heading)).not.toBe(a);
    expect(a).toEqual({ fg: 3, bold: true });
    expect(sgr(a)).toBe('\x1b[1;33m');
    expect(merge(undefined, theme.code)).toBe(theme.code);
    expect(merge(theme.code, undefined)).toBe(theme.code);
  });

  it('TUI-2 (issue 22) styles equal in value paint the same, whichever object comes first', () => {
    const fresh = { fg: 6, bold: true };
    expect(sgr(fresh)).toBe(sgr(theme.accentBold));
    expect(sgr({ fg: 200, bg: 9, underline: true, strike: true })).toBe('\x1b[4;9;38;5;200;101m');
    expect(sgr(theme.accentBold)).toBe('\x1b[1;36m');
    expect(paint('x', { italic: true })).toBe('\x1b[3mx\x1b[0m');
    expect(sgr({})).toBe('');
    expect(sgr(undefined)).toBe('');
  });
});
