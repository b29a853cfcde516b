/** The `Queued` panel above the composer (QUEUE-2): follow-ups and commands waiting to be sent. */
import { paint, theme } from '../style.js';
import type { QueuePhase, QueueItemView } from '../view-model.js';
import { truncate } from '../wrap.js';

export const QUEUE_MAX_ROWS = 5;

/** When the queue goes (QUEUE-3): after the running tool batch, or when the model's step ends. */
const WHEN: Record<QueuePhase, string> = {
  tool_batch: 'sent after the current tool batch',
  turn: "sent when the model's current step ends",
  compacting: 'sent after compaction',
  idle: 'sending next',
};

export function renderQueuePanel(items: readonly QueueItemView[], width: number, phase: QueuePhase = 'turn'): string[] {
  if (items.length === 0) return [];
  const when = WHEN[phase];
  const rows = [
    paint(
      truncate(`Queued (${items.length}) · ${when}${phase === 'idle' ? '' : ' · empty Enter sends now'}`, Math.max(1, width)),
      theme.muted,
    ),
  ];
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
