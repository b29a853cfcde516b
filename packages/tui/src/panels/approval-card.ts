/**
 * The approval overlay (APPR-2, APPR-3, reference §6.3/§6.5): tool, risk, authority, the
 * classifier summary, the subject, the real hunks for edit/write (TUIX-10), what Session and
 * Always cover (TUIX-12), and the keys.
 * Keys: `Y`/Enter/`1` once, `S`/`2` session, `A`/`3` always, `N`/Esc/`4` deny, `F`/`5` deny
 * and tell the model what to do instead (a line typed in the card; Enter sends, Esc goes back).
 */
import { diffLineRows, titleCase } from '../entries.js';
import type { InputEvent } from '../input-decoder.js';
import { type Style, theme } from '../style.js';
import type { ApprovalChoice, ApprovalView } from '../view-model.js';
import type { Span } from '../wrap.js';
import { boxRows } from './box.js';

const KEYS: readonly { choice: ApprovalChoice; key: string; label: string }[] = [
  { choice: 'once', key: 'Y', label: 'Once' },
  { choice: 'session', key: 'S', label: 'Session' },
  { choice: 'always', key: 'A', label: 'Always' },
  { choice: 'deny', key: 'N', label: 'Deny' },
];

/** The fifth answer (TUIX-12): deny with a message for the model. */
export const FEEDBACK_LABEL = 'No, and tell the model what to do instead';

/** Whether a key asks to deny with feedback. */
export function isFeedbackKey(event: InputEvent, card: ApprovalView): boolean {
  return (
    card.choices.includes('deny') &&
    event.type === 'text' &&
    event.text.length === 1 &&
    (event.text.toLowerCase() === 'f' || event.text === '5')
  );
}

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

export function renderApproval(card: ApprovalView, width: number, maxRows: number, feedback?: string): string[] {
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
  if (card.reviewNote) lines.push([{ text: card.reviewNote, style: theme.warn }]);
  const tail: Span[][] = [];
  if (card.grantScope && (card.choices.includes('session') || card.choices.includes('always')))
    tail.push([{ text: card.grantScope, style: theme.muted }]);
  if (feedback !== undefined) {
    tail.push([
      { text: 'Tell the model what to do instead: ', style: theme.accent },
      { text: `${feedback}▏`, style: theme.bold },
    ]);
    tail.push([{ text: 'Enter deny and send · Esc back to the choices', style: theme.muted }]);
  } else {
    const keys: Span[] = [];
    for (const k of KEYS) {
      if (!card.choices.includes(k.choice)) continue;
      keys.push({ text: `[${k.key}]`, style: theme.accentBold }, { text: ` ${k.label}  ` });
    }
    if (card.choices.includes('deny')) keys.push({ text: '[F]', style: theme.accentBold }, { text: ` ${FEEDBACK_LABEL}` });
    tail.push(keys);
    tail.push([{ text: 'Enter Once · Esc Deny', style: theme.muted }]);
  }
  const inner = Math.max(1, width - 4);
  const preview = card.preview ?? [];
  const room = Math.max(0, maxRows - lines.length - tail.length - 4);
  const previewRows: string[] = [];
  let used = 0;
  for (const line of preview) {
    const rows = diffLineRows(line, inner, []);
    if (previewRows.length + rows.length > room) break;
    previewRows.push(...rows);
    used++;
  }
  const body: (Span[] | string)[] = [...lines, ...previewRows];
  if (preview.length > used) body.push([{ text: `… ${preview.length - used} more lines`, style: theme.muted }]);
  body.push(...tail);
  return boxRows(body, width, {
    title: `Approve ${titleCase(card.tool)}?${card.agent && card.agent !== 'main' ? ` · asked by ${card.agent}` : ''}`,
    titleStyle: theme.warn,
    border: theme.warn,
    maxRows,
  });
}
