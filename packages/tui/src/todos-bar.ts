/** The pinned `Todos` bar: the first four items, then `+N more` (reference §8.1). */
import { paint, theme } from './style.js';
import type { TodoView } from './view-model.js';
import { truncate } from './wrap.js';

const MARK = { pending: '[ ]', in_progress: '[~]', completed: '[x]', cancelled: '[-]' } as const;

export function renderTodosBar(todos: readonly TodoView[], width: number): string | undefined {
  const open = todos.filter((t) => t.status !== 'cancelled');
  if (open.length === 0 || open.every((t) => t.status === 'completed')) return undefined;
  const shown = open.slice(0, 4).map((t) => `${MARK[t.status]} ${t.content.replace(/\s+/g, ' ')}`);
  const more = open.length > 4 ? ` · +${open.length - 4} more` : '';
  return paint('Todos ', theme.accentBold) + paint(truncate(shown.join(' · ') + more, Math.max(1, width - 7)), theme.muted);
}
