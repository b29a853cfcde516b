/**
 * The `/btw` panel (BTW-7..10), drawn above the composer. Captions: `Waiting for the model`
 * with the progress spinner until reasoning starts, then `Thinking`, then the answer.
 * Keys: Esc, Enter or Space close; Left/Right step through earlier answers; `x` clears the
 * thread; `i` inserts the shown answer into the composer as plain text; Ctrl+C cancels.
 */
import { renderMarkdown } from '../markdown.js';
import { spinnerFrame } from '../progress.js';
import { paint, theme } from '../style.js';
import type { SideEntryView } from '../view-model.js';
import { type Span, wrapSpans } from '../wrap.js';
import { box } from './box.js';

export function renderSidePanel(
  entries: readonly SideEntryView[],
  index: number,
  width: number,
  maxRows: number,
  now: number,
): string[] {
  const entry = entries[index];
  const badge = entries.length > 1 ? `${index + 1}/${entries.length}` : undefined;
  const hint: Span = {
    text: `Esc close${entries.length > 1 ? ' · Left/Right earlier answers' : ''} · x clear thread · i insert into prompt`,
    style: theme.muted,
  };
  const inner = Math.max(1, width - 4);
  const body: string[] = [];
  if (!entry) {
    body.push(paint('No side questions yet. Ask one with /btw <question>.', theme.muted));
  } else if (entry.state === 'waiting' || entry.state === 'thinking') {
    const caption = entry.state === 'waiting' ? 'Waiting for the model' : 'Thinking';
    body.push(`${paint(spinnerFrame(now), theme.accent)} ${paint(caption, theme.bold)}`);
  } else {
    if (entry.answer !== '') body.push(...answerRows(entry.answer, inner));
    if (entry.state === 'streaming') body.push(paint(spinnerFrame(now), theme.accent));
    if (entry.state === 'failed')
      body.push(...wrapSpans([{ text: entry.error ?? 'The side question failed.', style: theme.error }], { width: inner }));
  }
  const title = entry ? `btw: ${entry.question.replace(/\s+/g, ' ')}` : 'btw';
  const keep = entry?.state === 'streaming' ? 'end' : 'start';
  const rows = body.map((row) => [{ text: row }] as Span[]);
  return box([...rows, [hint]], width, { title, badge, maxRows, keep });
}

let cached: { text: string; width: number; rows: string[] } | undefined;

function answerRows(text: string, width: number): string[] {
  if (!cached || cached.text !== text || cached.width !== width) cached = { text, width, rows: renderMarkdown(text, width) };
  return cached.rows;
}

/** Drops the cached answer layout (the Markdown lexer arrived). */
export function invalidateSidePanel(): void {
  cached = undefined;
}
