/**
 * Text from the model, tools and files is sanitised before it is painted (reference §8.1):
 * escape sequences, C0/C1 controls and DEL are removed; tabs become four spaces; a carriage
 * return in a tool body overwrites its line as a terminal would.
 */
import { stripAnsi } from './ansi.js';

// C0 except \n, DEL, C1, and the bidi controls that could reorder a row.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2063]/g;

export function sanitize(text: string): string {
  let out = text.includes('\x1b') ? stripAnsi(text) : text;
  if (out.includes('\r')) out = out.replace(/\r\n/g, '\n');
  if (out.includes('\t')) out = out.replace(/\t/g, '    ');
  return out.replace(UNSAFE, '');
}

/** A tool body: each `\r` inside a line rewinds to its start and the later text overwrites. */
export function sanitizeToolBody(text: string): string {
  const lines = stripAnsi(text).replace(/\r\n/g, '\n').split('\n');
  return sanitize(lines.map(overwriteLine).join('\n'));
}

function overwriteLine(line: string): string {
  if (!line.includes('\r')) return line;
  let shown = '';
  for (const segment of line.split('\r')) shown = segment + shown.slice(segment.length);
  return shown;
}

// Pasted text: controls (but \n and \t), invisible formatting and bidi characters are dropped.
const PASTE_DROP =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/** Pasted or typed text entering the composer: LF line ends, no controls or bidi marks. */
export function sanitizeInput(text: string): string {
  return stripAnsi(text).replace(/\r\n?/g, '\n').replace(PASTE_DROP, '');
}
