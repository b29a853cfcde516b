/**
 * The approval overlay (APPR-2, APPR-3, reference §6.3/§6.5): tool, risk, authority, the
 * classifier summary, the subject, a capped `+`/`-` preview for edit/write, and the keys.
 * Keys: `Y`/Enter/`1` once, `S`/`2` session, `A`/`3` always, `N`/Esc/`4` deny.
 */
import { titleCase } from '../entries.js';
import type { InputEvent } from '../input-decoder.js';
import { type Style, theme } from '../style.js';
import type { ApprovalChoice, ApprovalView } from '../view-model.js';
import type { Span } from '../wrap.js';
import { box } from './box.js';

const KEYS: readonly { choice: ApprovalChoice; key: string; label: string }[] = [
  { choice: 'once', key: 'Y', label: 'Once' },
  { choice: 'session', key: 'S', label: 'Session' },
  { choice: 'always', key: 'A', label: 'Always' },
  { choice: 'deny', key: 'N', label: 'Deny' },
];

/** The choice a key makes on an approval card, if any. */
export function approvalKey(event: InputEvent, card: ApprovalView): ApprovalChoice | undefined {
  let choice: ApprovalChoice | undefined;
  if (event.type === 'key' && event.name === 'enter') choice = 'once';
  else if (event.type === 'key' && event.name === 'escape') choice = 'deny';
  else if (event.type === 'text' && event.text.length === 1) {
    const k = event.text.toLowerCase();
    choice =
      k === 'y' || k === '1'
        ? 'once'
        : k === 's' || k === '2'
          ? 'session'
          : k === 'a' || k === '3'
            ? 'always'
            : k === 'n' || k === '4'
              ? 'deny'
              : undefined;
  }
  return choice && card.choices.includes(choice) ? choice : undefined;
}

const RISK_STYLE: Record<string, Style> = {
  Read: theme.success,
  Write: theme.warn,
  Privileged: theme.errorBold,
  Forbidden: theme.errorBold,
};

export function renderApproval(card: ApprovalView, width: number, maxRows: number): string[] {
  const lines: Span[][] = [];
  lines.push([
    { text: 'Risk ', style: theme.muted },
    { text: card.risk, style: RISK_STYLE[card.risk] ?? theme.warn },
    { text: '  Authority ', style: theme.muted },
    { text: card.authority, style: card.authority === 'Workspace' ? theme.bold : theme.warn },
  ]);
  if (card.summary) lines.push([{ text: card.summary }]);
  if (card.subject && card.subject !== card.summary) lines.push([{ text: card.subject, style: theme.accent }]);
  if (card.sandbox) lines.push([{ text: card.sandbox, style: card.sandbox.startsWith('Sandboxed') ? theme.muted : theme.warn }]);
  const preview = card.preview ?? [];
  const room = Math.max(0, maxRows - lines.length - 4);
  const shown = preview.slice(0, room);
  for (const line of shown) {
    lines.push([{ text: line, style: line.startsWith('+') ? theme.added : line.startsWith('-') ? theme.removed : theme.muted }]);
  }
  if (preview.length > shown.length) lines.push([{ text: `… ${preview.length - shown.length} more lines`, style: theme.muted }]);
  const keys: Span[] = [];
  for (const k of KEYS) {
    if (!card.choices.includes(k.choice)) continue;
    keys.push({ text: `[${k.key}]`, style: theme.accentBold }, { text: ` ${k.label}  ` });
  }
  keys.push({ text: 'Enter Once · Esc Deny', style: theme.muted });
  lines.push(keys);
  return box(lines, width, { title: `Approve ${titleCase(card.tool)}?`, titleStyle: theme.warn, border: theme.warn, maxRows });
}
