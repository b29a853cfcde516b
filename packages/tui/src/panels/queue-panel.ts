/** The `Queued` panel above the composer (QUEUE-2): follow-ups and commands waiting to be sent. */
import { paint, theme } from '../style.js';
import type { QueueItemView } from '../view-model.js';
import { truncate } from '../wrap.js';

export const QUEUE_MAX_ROWS = 5;

export function renderQueuePanel(items: readonly QueueItemView[], width: number): string[] {
  if (items.length === 0) return [];
  const rows = [paint(`Queued (${items.length}) · sent after the current tool batch · empty Enter sends now`, theme.muted)];
  const shown = items.slice(0, QUEUE_MAX_ROWS - 1);
  for (const [i, item] of shown.entries()) {
    const text = item.text.replace(/\s*\n\s*/g, ' ⏎ ').replace(/\u2063/g, '');
    rows.push(
      `${paint(` ${i + 1}. `, theme.accent)}${paint(truncate(text, width - 6), item.kind === 'command' ? theme.warn : undefined)}`,
    );
  }
  if (items.length > shown.length) rows.push(paint(` … ${items.length - shown.length} more`, theme.muted));
  return rows;
}
