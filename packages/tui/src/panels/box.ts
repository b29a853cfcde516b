/** A rounded panel: a titled top border, padded body rows with side borders, a bottom border. */
import { stripAnsi } from '../ansi.js';
import { paint, type Style, theme } from '../style.js';
import { textWidth } from '../text-width.js';
import { type Span, truncate, wrapSpans } from '../wrap.js';

export function visibleWidth(row: string): number {
  return textWidth(stripAnsi(row));
}

export interface BoxOptions {
  readonly title: string;
  readonly titleStyle?: Style;
  /** Right side of the top border (a counter). */
  readonly badge?: string;
  readonly border?: Style;
  /** At most this many rows in all (borders included); the body is cut with a `…` row. */
  readonly maxRows?: number;
  /** Which end of the body to keep when it is cut. */
  readonly keep?: 'start' | 'end';
}

/** Body lines are span lists, word-wrapped to the inner width. */
export function box(lines: readonly (readonly Span[])[], width: number, options: BoxOptions): string[] {
  return boxRows(lines, width, options);
}

/** As `box`; a string line is a row already laid out at the inner width (a diff line). */
export function boxRows(lines: readonly (readonly Span[] | string)[], width: number, options: BoxOptions): string[] {
  const border = options.border ?? theme.border;
  const inner = Math.max(1, width - 4);
  let body: string[] = [];
  for (const line of lines) {
    if (typeof line === 'string') body.push(line);
    else body.push(...wrapSpans(line, { width: inner }));
  }
  const max = options.maxRows ?? Number.POSITIVE_INFINITY;
  if (body.length + 2 > max) {
    const room = Math.max(1, max - 3);
    const cut = body.length - room;
    const more = paint(`… ${cut} more line${cut === 1 ? '' : 's'}`, theme.muted);
    body = options.keep === 'end' ? [more, ...body.slice(cut)] : [...body.slice(0, room), more];
  }
  const title = truncate(options.title, Math.max(1, width - 8 - (options.badge ? options.badge.length + 3 : 0)));
  const badge = options.badge ? ` ${options.badge} ` : '';
  const fill = Math.max(0, width - 5 - textWidth(title) - badge.length);
  const top =
    paint('╭─ ', border) +
    paint(title, options.titleStyle ?? theme.accentBold) +
    paint(` ${'─'.repeat(fill)}`, border) +
    (badge ? paint(badge, theme.muted) : '') +
    paint('╮', border);
  const rows = [top];
  for (const row of body) {
    const pad = Math.max(0, inner - visibleWidth(row));
    rows.push(`${paint('│ ', border)}${row}${' '.repeat(pad)}${paint(' │', border)}`);
  }
  rows.push(paint(`╰${'─'.repeat(Math.max(0, width - 2))}╯`, border));
  return rows;
}
