/** Terminal control sequences the painter writes. One place, so nothing else spells escapes. */

export const ALT_SCREEN_ON = '\x1b[?1049h';
export const ALT_SCREEN_OFF = '\x1b[?1049l';
/** DEC 2026 synchronized output: the terminal shows a frame only once it is complete. */
export const SYNC_BEGIN = '\x1b[?2026h';
export const SYNC_END = '\x1b[?2026l';
export const CURSOR_HIDE = '\x1b[?25l';
export const CURSOR_SHOW = '\x1b[?25h';
export const BRACKETED_PASTE_ON = '\x1b[?2004h';
export const BRACKETED_PASTE_OFF = '\x1b[?2004l';
/** Button events plus SGR coordinates (wheel included); alternate scroll off so the wheel never turns into arrows. */
export const MOUSE_ON = '\x1b[?1000h\x1b[?1006h\x1b[?1007l';
export const MOUSE_OFF = '\x1b[?1006l\x1b[?1000l';
export const CLEAR_SCREEN = '\x1b[2J';
export const ERASE_LINE_RIGHT = '\x1b[K';
export const RESET = '\x1b[0m';
/** Pushes the window title on the terminal's stack, and pops it back. */
export const TITLE_PUSH = '\x1b[22;0t';
export const TITLE_POP = '\x1b[23;0t';

export function moveTo(row: number, col: number): string {
  return `\x1b[${row + 1};${col + 1}H`;
}

export function setTitle(title: string): string {
  return `\x1b]0;${title}\x07`;
}

// CSI … final, OSC … BEL/ST, and two-character escapes.
const ANSI = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

/** Removes escape sequences (for measuring styled text). */
export function stripAnsi(text: string): string {
  return text.includes('\x1b') ? text.replace(ANSI, '') : text;
}
