/**
 * The status bar (TUI-3): Plan/Work, approval mode, model, workspace, CTX %, cumulative IN/OUT
 * tokens and the queued count. Named labels are Title Case, abbreviations upper case. When the
 * row is too narrow the workspace is shortened from the left first.
 */
import { paint, theme } from './style.js';
import { textWidth } from './text-width.js';
import type { StatusView } from './view-model.js';
import { truncate, truncateStart } from './wrap.js';

/** `950`, `1.2k`, `34k`, `1.5M`. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

function label(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

let last: { status: StatusView; width: number; home: string | undefined; row: string } | undefined;

/** The status row; the same values at the same width give the same string without work. */
export function renderStatusBar(status: StatusView, width: number, home?: string): string {
  if (last && last.status === status && last.width === width && last.home === home) return last.row;
  const row = layoutStatusBar(status, width, home);
  last = { status, width, home, row };
  return row;
}

function layoutStatusBar(status: StatusView, width: number, home?: string): string {
  const mode = status.mode === 'plan' ? 'Plan' : 'Work';
  const workspace = home && status.workspace.startsWith(home) ? `~${status.workspace.slice(home.length)}` : status.workspace;
  const tail = [
    `CTX ${status.contextPercent === undefined ? '--' : `${Math.round(status.contextPercent)}%`}`,
    `IN ${formatTokens(status.inputTokens)}`,
    `OUT ${formatTokens(status.outputTokens)}`,
    ...(status.queued > 0 ? [`${status.queued} Queued`] : []),
  ];
  const head = [label(status.approval), status.model];
  const sep = ' │ ';
  const fixed = textWidth(` ${mode}${sep}${head.join(sep)}${sep}${sep}${tail.join(sep)} `);
  const room = width - 1 - fixed;
  const ws = room >= 6 ? truncateStart(workspace, room) : '';
  const parts = [...head, ...(ws ? [ws] : []), ...tail];
  const modeStyle = status.mode === 'plan' ? theme.plan : theme.work;
  let text = `${sep}${parts.join(sep)} `;
  text = truncate(text, Math.max(0, width - 1 - mode.length - 1));
  const pad = Math.max(0, width - 1 - 1 - mode.length - textWidth(text));
  return `${paint(` ${mode}`, { ...modeStyle, inverse: true })}${paint(text + ' '.repeat(pad), theme.statusBar)}`;
}
