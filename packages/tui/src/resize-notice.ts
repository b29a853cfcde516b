/** Below 40x10 (TUIX-9) a centred notice replaces the frame (TUI-1); the frame comes back on resize. */
import { paint, theme } from './style.js';
import { truncate } from './wrap.js';

export const MIN_COLS = 40;
export const MIN_ROWS = 10;

export function tooSmall(cols: number, rows: number): boolean {
  return cols < MIN_COLS || rows < MIN_ROWS;
}

export function renderResizeNotice(cols: number, rows: number): string[] {
  const lines = [
    'Crystal Code needs a larger window',
    `at least ${MIN_COLS}x${MIN_ROWS}, now ${cols}x${rows}`,
    'Enlarge the window to continue.',
  ];
  const out: string[] = Array.from({ length: rows }, () => '');
  const top = Math.max(0, Math.floor((rows - lines.length) / 2));
  for (const [i, line] of lines.entries()) {
    const text = truncate(line, Math.max(1, cols - 1));
    const left = Math.max(0, Math.floor((cols - text.length) / 2));
    if (top + i < rows) out[top + i] = ' '.repeat(left) + paint(text, i === 0 ? theme.accentBold : theme.muted);
  }
  return out;
}
