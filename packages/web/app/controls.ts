/**
 * The controls the terminal has, in the page (issue 19): the Plan/Work toggle, the approval
 * mode, the model picker, the session browser (resume, fork, export), the context meter, the
 * queue with edit and remove, the progress row with the retry countdown, the `/btw` side panel
 * and the page's own `/help`. A control that the terminal drives with a slash command sends the
 * same command, so the engine keeps its one rule for it.
 */
import type { Input } from './api.js';
import { byId, displayText, el } from './dom.js';
import { renderMarkdown } from './markdown.js';
import type { PageControls, QueueItem } from './types.js';

export async function getControls(): Promise<PageControls> {
  const response = await fetch('/api/controls', { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`The host answered ${response.status} for its controls.`);
  return (await response.json()) as PageControls;
}

/** The page's keys (what `/help` shows here; the terminal's keys are not the page's). */
export const PAGE_KEYS: readonly (readonly [string, string])[] = [
  ['Enter', 'send the message (queued while a turn runs)'],
  ['Shift+Enter', 'a new line'],
  ['Esc', 'interrupt the running turn (the queue stays)'],
  ['Alt+P', 'switch between Plan and Work'],
  ['Approval card', 'Enter or y allow once · s for this session · a always · n or Esc deny · f deny with feedback'],
  ['Question', 'arrows pick · Space ticks · Enter answers · Esc dismisses'],
  ['Images', 'Attach images, drop files on the composer, or paste'],
  ['/btw question', 'a side question, answered in its own panel'],
];

export function shortId(id: string): string {
  return id.length > 8 ? `…${id.slice(-6)}` : id;
}

export class Controls {
  current: PageControls | undefined;
  private readonly mode = byId<HTMLButtonElement>('mode');
  private readonly approval = byId<HTMLSelectElement>('approval-mode');
  private readonly model = byId<HTMLSelectElement>('model');
  private readonly dialog = byId<HTMLDialogElement>('sessions-dialog');
  private contextWindow: number | null = null;

  constructor(
    private readonly scope: () => string,
    private readonly send: (input: Input) => Promise<void>,
    private readonly command: (text: string) => Promise<void>,
    private readonly showHelp: () => void,
  ) {
    this.mode.addEventListener('click', () => this.togglePlan());
    this.approval.addEventListener('change', () => void this.command(`/approval ${this.approval.value}`));
    this.model.addEventListener('change', () => void this.command(`/model ${this.model.value}`));
    byId('sessions-button').addEventListener('click', () => void this.openSessions());
    byId('help-button').addEventListener('click', () => this.showHelp());
    document.addEventListener('keydown', (event) => {
      if (event.altKey && !event.ctrlKey && !event.metaKey && event.key.toLowerCase() === 'p') {
        event.preventDefault();
        this.togglePlan();
      }
    });
  }

  togglePlan(): void {
    const next = this.mode.getAttribute('aria-pressed') === 'true' ? 'work' : 'plan';
    void this.send({ kind: 'plan', mode: next });
  }

  async refresh(): Promise<void> {
    try {
      this.apply(await getControls());
    } catch {
      // The host stopped: main.ts shows that.
    }
  }

  apply(c: PageControls): void {
    this.current = c;
    this.setMode(c.mode);
    this.approval.value = c.approvalMode;
    const chosen = `${c.provider} ${c.model}`;
    const options = c.models.some((m) => `${m.provider} ${m.model}` === chosen)
      ? c.models
      : [{ provider: c.provider, model: c.model }, ...c.models];
    this.model.replaceChildren(
      ...options.map((m) => el('option', { text: `${m.provider}/${m.model}`, attrs: { value: `${m.provider} ${m.model}` } })),
    );
    this.model.value = chosen;
    this.contextWindow = c.contextWindow;
    this.setContext(c.contextPercent);
    const session = byId('session');
    session.textContent = shortId(c.scope);
    session.title = `Session ${c.scope}`;
    session.setAttribute('data-scope', c.scope);
    session.setAttribute('aria-label', `Session ${c.scope}`);
  }

  setMode(mode: 'plan' | 'work'): void {
    this.mode.textContent = mode === 'plan' ? 'Plan' : 'Work';
    this.mode.setAttribute('aria-pressed', String(mode === 'plan'));
    this.mode.setAttribute('aria-label', mode === 'plan' ? 'Plan mode (switch to Work)' : 'Work mode (switch to Plan)');
    document.body.dataset.mode = mode;
  }

  /** The context meter from the last round's reported usage. */
  roundUsage(usage: { inputTokens?: number; outputTokens?: number } | undefined): void {
    if (!usage || !this.contextWindow) return;
    const used = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
    this.setContext(Math.min(100, Math.round((100 * used) / this.contextWindow)));
  }

  private setContext(percent: number | null): void {
    const box = byId('context');
    if (percent === null) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    byId<HTMLMeterElement>('context-meter').value = percent;
    byId('context-text').textContent = `${percent}%`;
    box.title = `Context used: ${percent}% of ${this.contextWindow ?? '?'} tokens`;
    byId('context-meter').setAttribute('aria-label', `Context used: ${percent}%`);
  }

  /** The session browser: saved sessions of this workspace with resume and fork; export this one. */
  async openSessions(): Promise<void> {
    await this.refresh();
    const c = this.current;
    const rows = (c?.sessions ?? []).map((s) => {
      const here = s.id === this.scope();
      const act = (label: string, text: string, name: string) =>
        el('button', {
          text: label,
          attrs: { type: 'button', 'aria-label': `${name} ${s.id}` },
          on: {
            click: () => {
              this.dialog.close();
              void this.command(text);
            },
          },
        });
      return el(
        'li',
        { class: here ? 'current' : '', attrs: { 'aria-label': `Session ${s.id}${here ? ' (this one)' : ''}` } },
        el('span', { class: 'session-title', text: displayText(s.title || '(untitled)') }),
        el('span', {
          class: 'session-meta',
          text: `${s.id} · ${s.updatedUtc.slice(0, 16).replace('T', ' ')} · ${s.messageCount} message${s.messageCount === 1 ? '' : 's'}${s.note ? ` · damaged: ${s.note}` : ''}`,
        }),
        el(
          'span',
          { class: 'session-actions' },
          here ? null : act('Resume', `/resume ${s.id}`, 'Resume'),
          act('Fork', `/fork ${s.id}`, 'Fork'),
        ),
      );
    });
    const exportAs = (format: 'markdown' | 'json', label: string) =>
      el('button', {
        text: label,
        attrs: { type: 'button' },
        on: {
          click: () => {
            this.dialog.close();
            void this.command(`/export ${format}`);
          },
        },
      });
    this.dialog.replaceChildren(
      el('h2', { text: 'Sessions in this workspace' }),
      rows.length > 0 ? el('ul', { class: 'sessions' }, ...rows) : el('p', { text: 'No saved sessions yet.' }),
      el(
        'div',
        { class: 'dialog-actions' },
        exportAs('markdown', 'Export this session as Markdown'),
        exportAs('json', 'Export as JSON'),
        el('button', { text: 'Close', attrs: { type: 'button' }, on: { click: () => this.dialog.close() } }),
      ),
    );
    this.dialog.showModal();
  }
}

/** The queue (QUEUE-*): what waits behind the running turn, each message editable and removable. */
export function renderQueue(root: HTMLElement, items: readonly QueueItem[], send: (input: Input) => Promise<void>): void {
  root.hidden = items.length === 0;
  const rows = items.map((item) => {
    const text = displayText(item.text);
    const li = el('li', { class: item.kind, attrs: { 'aria-label': `Queued ${item.kind}: ${text}` } });
    const show = (): void => {
      li.replaceChildren(
        el('span', { class: 'queue-text', text }),
        ...(item.kind === 'message'
          ? [el('button', { text: 'Edit', attrs: { type: 'button', 'aria-label': `Edit queued: ${text}` }, on: { click: edit } })]
          : []),
        el('button', {
          text: 'Remove',
          attrs: { type: 'button', 'aria-label': `Remove queued: ${text}` },
          on: { click: () => void send({ kind: 'queue', id: item.id, action: 'remove' }) },
        }),
      );
    };
    const edit = (): void => {
      const input = el('input', { attrs: { type: 'text', 'aria-label': 'Queued message text' } });
      input.value = item.text;
      const form = el(
        'form',
        { class: 'queue-edit' },
        input,
        el('button', { text: 'Save', attrs: { type: 'submit' } }),
        el('button', { text: 'Keep', attrs: { type: 'button' }, on: { click: show } }),
      );
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        void send({ kind: 'queue', id: item.id, action: 'edit', text: input.value });
      });
      input.addEventListener('keydown', (event) => {
        event.stopPropagation();
        if (event.key === 'Escape') show();
      });
      li.replaceChildren(form);
      input.focus();
    };
    show();
    return li;
  });
  root.replaceChildren(el('h2', { text: `Queued (${items.length})` }), el('ol', {}, ...rows));
}

/** The progress row: the retry countdown while a failed request waits for its next attempt (RETRY-4). */
export class Progress {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly root: HTMLElement) {}

  retry(attempt: number, dueAt: number, message: string): void {
    this.stop();
    const paint = (): void => {
      const seconds = Math.max(0, Math.ceil((dueAt - Date.now()) / 1000));
      this.root.textContent =
        seconds > 0
          ? `Retrying in ${seconds} s (attempt ${attempt}): ${displayText(message)}`
          : `Retrying now (attempt ${attempt}): ${displayText(message)}`;
      if (seconds === 0) this.stopTimer();
    };
    this.root.hidden = false;
    this.root.dataset.kind = 'retry';
    paint();
    this.timer = setInterval(paint, 250);
  }

  stop(): void {
    // Called for every streamed delta: nothing to do (and no DOM write) once the row is hidden.
    if (this.root.hidden) return;
    this.stopTimer();
    this.root.hidden = true;
    this.root.textContent = '';
    delete this.root.dataset.kind;
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** `/btw` answers in their own panel, not in the transcript (BTW-*). */
export class SidePanel {
  private text = '';
  private answer: HTMLElement | undefined;
  private caption: HTMLElement | undefined;

  constructor(private readonly root: HTMLElement) {}

  private frame(): HTMLElement {
    if (this.root.childElementCount === 0) {
      this.root.append(
        el(
          'header',
          {},
          el('h2', { text: 'By the way' }),
          el('button', {
            text: 'Close',
            attrs: { type: 'button', 'aria-label': 'Close the side panel' },
            on: { click: () => (this.root.hidden = true) },
          }),
        ),
        el('ol', { class: 'side-thread' }),
      );
    }
    this.root.hidden = false;
    return this.root.querySelector('.side-thread') as HTMLElement;
  }

  started(question: string): void {
    this.text = '';
    this.caption = el('p', { class: 'side-caption', text: 'Waiting for the model…' });
    this.answer = el('div', { class: 'markdown side-answer' });
    this.frame().append(
      el('li', {}, el('p', { class: 'side-question', text: displayText(question) }), this.caption, this.answer),
    );
  }

  thinking(): void {
    if (this.caption) this.caption.textContent = 'Thinking…';
  }

  delta(text: string): void {
    this.text += text;
    if (this.caption) this.caption.textContent = 'Answering…';
    if (this.answer) this.answer.textContent = displayText(this.text);
  }

  finished(question: string, answer: string): void {
    if (!this.answer) this.started(question);
    if (this.caption) this.caption.remove();
    if (this.answer) this.answer.innerHTML = renderMarkdown(displayText(answer));
    this.answer = undefined;
    this.caption = undefined;
  }

  failed(question: string, message: string): void {
    if (!this.answer) this.started(question);
    if (this.caption) {
      this.caption.textContent = `Side question failed: ${displayText(message)}`;
      this.caption.classList.add('error');
    }
    this.answer = undefined;
    this.caption = undefined;
  }

  open(thread: readonly { question: string; answer: string }[]): void {
    const list = this.frame();
    list.replaceChildren();
    for (const x of thread) {
      this.started(x.question);
      this.finished(x.question, x.answer);
    }
  }

  clear(): void {
    this.root.replaceChildren();
    this.root.hidden = true;
  }
}
