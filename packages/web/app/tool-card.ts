/**
 * A tool call as a card (issue 19): the tool and the engine's one-line summary, the arguments
 * as a readable list (not escaped JSON), the approval that let it run or stopped it (folded in,
 * not a separate line of the transcript), a coloured diff with line numbers for `edit`/`write`,
 * and the output, collapsed behind an expander when it is long.
 */
import { displayText, el } from './dom.js';

export interface DiffRowView {
  readonly kind: 'add' | 'del' | 'ctx' | 'hunk' | 'note';
  readonly text: string;
  readonly oldLine?: number;
  readonly newLine?: number;
}

/** Output longer than this many lines shows its first lines and an expander. */
export const OUTPUT_PREVIEW_LINES = 12;
/** An argument value longer than this many lines is collapsed. */
const ARGUMENT_PREVIEW_LINES = 6;

type Status = 'running' | 'waiting' | 'done' | 'failed' | 'denied';

const STATUS_TEXT: Readonly<Record<Status, string>> = {
  running: 'running',
  waiting: 'waiting for you',
  done: 'done',
  failed: 'failed',
  denied: 'denied',
};

export class ToolCardView {
  readonly root: HTMLElement;
  private readonly status: HTMLElement;
  private readonly approval: HTMLElement;
  private readonly diff: HTMLElement;
  private readonly output: HTMLElement;
  private state: Status = 'running';
  private streamed = '';

  constructor(
    readonly callId: string,
    readonly name: string,
    args: string,
    summary: string,
  ) {
    this.status = el('span', { class: 'tool-status', text: STATUS_TEXT.running });
    this.approval = el('p', { class: 'tool-approval' });
    this.approval.hidden = true;
    // Scrollable regions take the focus so the keyboard can scroll them.
    this.diff = el('div', { class: 'tool-diff', attrs: { tabindex: '0' } });
    this.diff.hidden = true;
    this.output = el('div', { class: 'tool-output-box' });
    this.output.hidden = true;
    const line = summary || '';
    this.root = el(
      'article',
      { class: 'tool-card', attrs: { 'aria-label': `Tool call ${name}`, 'data-call': callId } },
      el(
        'header',
        {},
        el('span', { class: 'tool-name', text: name }),
        el('span', { class: 'tool-summary', text: displayText(line), attrs: { title: displayText(line) } }),
        this.status,
      ),
      argumentList(name, args),
      this.approval,
      this.diff,
      this.output,
    );
    if (name === 'write' || name === 'edit') this.showDiff(previewRows(name, args), true);
  }

  get finished(): boolean {
    return this.state === 'done' || this.state === 'failed' || this.state === 'denied';
  }

  setStatus(state: Status): void {
    this.state = state;
    this.status.textContent = STATUS_TEXT[state];
    this.root.dataset.status = state;
    this.root.classList.toggle('failed', state === 'failed' || state === 'denied');
  }

  /** The approval line folded into the card (`Approved by Policy`, `Denied by you`). */
  setApproval(text: string): void {
    this.approval.textContent = text;
    this.approval.hidden = false;
  }

  get waitingForApproval(): boolean {
    return this.state === 'waiting';
  }

  get hasApproval(): boolean {
    return !this.approval.hidden;
  }

  appendOutput(chunk: string): void {
    this.streamed += chunk;
    this.showOutput(this.streamed, false);
  }

  finish(isError: boolean, text: string, diff: readonly DiffRowView[] | undefined): void {
    if (this.state !== 'denied') this.setStatus(isError ? 'failed' : 'done');
    if (diff && diff.length > 0) {
      this.showDiff(diff, false);
      // The output of a change is the patch just drawn; the raw text stays one click away.
      this.showOutput(displayText(text), true);
    } else {
      if (isError && this.name !== 'edit' && this.name !== 'write') this.diff.hidden = true;
      this.showOutput(displayText(text), false);
    }
  }

  private showDiff(rows: readonly DiffRowView[] | undefined, preview: boolean): void {
    if (!rows || rows.length === 0) return;
    const table = el('table', { class: 'diff', attrs: { 'aria-label': preview ? 'Proposed change' : 'Change' } });
    const body = el('tbody');
    for (const row of rows) body.append(diffRow(row));
    table.append(body);
    this.diff.replaceChildren(table);
    this.diff.hidden = false;
    this.diff.dataset.preview = preview ? 'true' : 'false';
  }

  private showOutput(text: string, collapsedWhole: boolean): void {
    const trimmed = text.replace(/\s+$/, '');
    if (trimmed === '') {
      this.output.hidden = true;
      return;
    }
    const lines = trimmed.split('\n');
    const pre = el('pre', { class: 'tool-output', attrs: { tabindex: '0' } });
    this.output.hidden = false;
    if (!collapsedWhole && lines.length <= OUTPUT_PREVIEW_LINES) {
      pre.textContent = trimmed;
      this.output.replaceChildren(pre);
      return;
    }
    const hidden = collapsedWhole ? lines.length : lines.length - OUTPUT_PREVIEW_LINES;
    const short = collapsedWhole ? '' : lines.slice(0, OUTPUT_PREVIEW_LINES).join('\n');
    let open = this.output.dataset.open === 'true';
    const button = el('button', { class: 'expand', attrs: { type: 'button' } });
    const paint = (): void => {
      pre.textContent = open ? trimmed : short;
      pre.hidden = pre.textContent === '';
      button.textContent = open
        ? 'Show less'
        : collapsedWhole
          ? `Show the raw output (${lines.length} line${lines.length === 1 ? '' : 's'})`
          : `Show all ${lines.length} lines (${hidden} more)`;
      button.setAttribute('aria-expanded', String(open));
      this.output.dataset.open = String(open);
    };
    button.addEventListener('click', () => {
      open = !open;
      paint();
    });
    paint();
    this.output.replaceChildren(pre, button);
  }
}

function diffRow(row: DiffRowView): HTMLTableRowElement {
  if (row.kind === 'hunk' || row.kind === 'note') {
    return el('tr', { class: `diff-${row.kind}` }, el('td', { attrs: { colspan: '3' }, text: row.text }));
  }
  const sign = row.kind === 'add' ? '+' : row.kind === 'del' ? '-' : ' ';
  const number = row.kind === 'del' ? row.oldLine : row.newLine;
  return el(
    'tr',
    { class: `diff-${row.kind}` },
    el('td', { class: 'diff-number', text: number === undefined ? '' : String(number) }),
    el('td', {
      class: 'diff-sign',
      text: sign,
      attrs: { 'aria-label': row.kind === 'add' ? 'added' : row.kind === 'del' ? 'removed' : 'unchanged' },
    }),
    el('td', { class: 'diff-text', text: displayText(row.text.replace(/\r$/, '')) }),
  );
}

function parseArgs(args: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(args) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The change a `write`/`edit` call proposes, from its arguments, until the tool's own patch arrives. */
function previewRows(name: string, args: string): DiffRowView[] | undefined {
  const input = parseArgs(args);
  if (!input) return undefined;
  const lines = (v: unknown): string[] => (typeof v === 'string' && v !== '' ? v.replace(/\n$/, '').split('\n') : []);
  const rows: DiffRowView[] =
    name === 'write'
      ? lines(input.contents).map((text, i) => ({ kind: 'add', text, newLine: i + 1 }))
      : [
          ...lines(input.old_string).map((text): DiffRowView => ({ kind: 'del', text })),
          ...lines(input.new_string).map((text): DiffRowView => ({ kind: 'add', text })),
        ];
  const max = 40;
  return rows.length > max ? [...rows.slice(0, max), { kind: 'note', text: `${rows.length - max} more lines` }] : rows;
}

/** The arguments as a definition list; the file contents of a change are in the diff instead. */
function argumentList(name: string, args: string): HTMLElement {
  const input = parseArgs(args);
  if (!input) {
    return el('pre', { class: 'tool-args', text: displayText(args) });
  }
  const skip = name === 'write' ? ['contents'] : name === 'edit' ? ['old_string', 'new_string'] : [];
  const list = el('dl', { class: 'tool-args' });
  for (const [key, value] of Object.entries(input)) {
    if (skip.includes(key)) continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    const lines = displayText(text).split('\n');
    let shown: HTMLElement;
    if (lines.length > ARGUMENT_PREVIEW_LINES) {
      shown = el(
        'details',
        {},
        el('summary', { text: `${lines[0]} … (${lines.length} lines)` }),
        el('pre', { text: lines.join('\n') }),
      );
    } else if (lines.length > 1 || typeof value !== 'string') {
      shown = el('pre', { text: lines.join('\n') });
    } else {
      shown = el('span', { text: lines[0] ?? '' });
    }
    list.append(el('dt', { text: key }), el('dd', {}, shown));
  }
  return list;
}
