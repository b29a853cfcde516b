/**
 * Approval cards and questions the engine is waiting on, answered in the page (WEBX-1). The
 * card shows the engine's values (tool, risk, authority, summary, subject, preview); the
 * buttons are the choices the engine offers.
 *
 * They sit in the dock above the composer, so they are on screen whenever they wait (issue 19);
 * focus moves to them and the keyboard answers them with the terminal's keys: Enter or y allows
 * once, s for the session, a always, n or Escape denies, f denies with feedback for the model.
 * A question: Enter answers, Escape dismisses, arrows move between options.
 */
import type { Input } from './api.js';
import { el } from './dom.js';
import type { ApprovalAnswer, ApprovalPrompt, QuestionPrompt } from './types.js';

const ANSWER_TEXT: Readonly<Record<ApprovalAnswer, string>> = {
  once: 'Allow once',
  session: 'Allow for this session',
  always: 'Always allow',
  deny: 'Deny',
};

/** The terminal's keys (packages/tui/src/panels/approval-card.ts). */
const ANSWER_KEYS: Readonly<Record<ApprovalAnswer, readonly string[]>> = {
  once: ['y', '1'],
  session: ['s', '2'],
  always: ['a', '3'],
  deny: ['n', '4'],
};

const FEEDBACK_KEYS = ['f', '5'];

export class Prompts {
  private readonly shown = new Map<number, HTMLElement>();

  constructor(
    private readonly root: HTMLElement,
    private readonly answer: (input: Input) => Promise<void>,
    /** Where focus goes back to once nothing waits (the composer). */
    private readonly home: () => HTMLElement,
  ) {}

  get waiting(): boolean {
    return this.shown.size > 0;
  }

  reset(approvals: readonly ApprovalPrompt[], questions: readonly QuestionPrompt[]): void {
    this.shown.clear();
    this.root.replaceChildren();
    this.root.hidden = true;
    for (const prompt of approvals) this.addApproval(prompt);
    for (const prompt of questions) this.addQuestion(prompt);
  }

  remove(id: number): void {
    const node = this.shown.get(id);
    if (!node) return;
    const hadFocus = node.contains(document.activeElement);
    node.remove();
    this.shown.delete(id);
    this.root.hidden = this.shown.size === 0;
    if (!hadFocus) return;
    const next = [...this.shown.values()][0];
    if (next) focusFirst(next);
    else this.home().focus();
  }

  addApproval(prompt: ApprovalPrompt): void {
    const { card } = prompt;
    const choose = (choice: ApprovalAnswer): void => void this.answer({ kind: 'approval', id: prompt.id, answer: choice });
    const buttons = prompt.choices.map((choice) =>
      el('button', {
        text: ANSWER_TEXT[choice],
        class: choice === 'deny' ? 'deny' : '',
        attrs: { type: 'button', 'aria-keyshortcuts': ANSWER_KEYS[choice][0], 'data-answer': choice },
        on: { click: () => choose(choice) },
      }),
    );
    const canDeny = prompt.choices.includes('deny');
    const feedbackInput = el('input', {
      attrs: {
        type: 'text',
        'aria-label': 'Feedback for the model',
        placeholder: 'What should it do instead?',
        maxlength: '4000',
      },
    });
    const feedbackSend = el('button', { text: 'Deny and tell the model', class: 'deny', attrs: { type: 'submit' } });
    const feedback = el(
      'form',
      { class: 'approval-feedback', attrs: { 'aria-label': 'Deny with feedback' } },
      feedbackInput,
      feedbackSend,
    );
    feedback.hidden = true;
    const openFeedback = (): void => {
      feedback.hidden = false;
      feedbackInput.focus();
    };
    const feedbackButton = canDeny
      ? el('button', {
          text: 'Deny with feedback…',
          class: 'deny',
          attrs: { type: 'button', 'aria-keyshortcuts': 'f' },
          on: { click: openFeedback },
        })
      : null;
    feedback.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = feedbackInput.value.trim();
      if (text === '') {
        feedbackInput.focus();
        return;
      }
      void this.answer({ kind: 'approval', id: prompt.id, answer: 'deny', feedback: text });
    });
    feedbackInput.addEventListener('keydown', (event) => {
      event.stopPropagation();
      if (event.key === 'Escape') {
        event.preventDefault();
        feedback.hidden = true;
        focusFirst(node);
      }
    });
    const keys = prompt.choices.map((c) => `${ANSWER_KEYS[c][0]} ${ANSWER_TEXT[c].toLowerCase()}`);
    if (canDeny) keys.push('f deny with feedback');
    const node = el(
      'section',
      {
        class: `approval risk-${card.risk.toLowerCase()}`,
        attrs: { role: 'alertdialog', 'aria-label': `Approve ${card.tool}?`, 'data-prompt': String(prompt.id) },
      },
      el('h3', { text: `${card.tool}: ${card.summary}` }),
      el('p', { class: 'approval-meta', text: `Risk ${card.risk} · ${card.authority}` }),
      el('pre', { class: 'approval-subject', text: card.subject }),
      card.sandbox ? el('p', { class: 'approval-sandbox', text: card.sandbox }) : null,
      card.preview && card.preview.length > 0 ? el('pre', { class: 'approval-preview', text: card.preview.join('\n') }) : null,
      el('div', { class: 'approval-choices' }, ...buttons, feedbackButton),
      feedback,
      el('p', { class: 'keys', text: `Keys: Enter allows once · ${keys.join(' · ')} · Esc denies` }),
    );
    node.addEventListener('keydown', (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const key = event.key.toLowerCase();
      let choice: ApprovalAnswer | undefined;
      if (key === 'escape') choice = 'deny';
      else if (key === 'enter' && !(event.target instanceof HTMLButtonElement)) choice = 'once';
      else choice = prompt.choices.find((c) => ANSWER_KEYS[c].includes(key));
      if (choice && prompt.choices.includes(choice)) {
        event.preventDefault();
        choose(choice);
      } else if (canDeny && FEEDBACK_KEYS.includes(key)) {
        event.preventDefault();
        openFeedback();
      }
    });
    this.show(prompt.id, node);
  }

  addQuestion(prompt: QuestionPrompt): void {
    const form = el('form', {
      class: 'question',
      attrs: { 'aria-label': 'Question from the assistant', 'data-prompt': String(prompt.id) },
    });
    prompt.questions.forEach((q, index) => {
      const group = `q${prompt.id}-${index}`;
      const options = q.options.map((option) =>
        el(
          'label',
          { class: 'option' },
          el('input', { attrs: { type: q.multiple ? 'checkbox' : 'radio', name: group, value: option.label } }),
          ` ${option.label}`,
          option.description ? el('span', { class: 'option-description', text: ` ${option.description}` }) : null,
        ),
      );
      const custom = q.custom
        ? el('input', {
            attrs: {
              type: 'text',
              name: `${group}-custom`,
              'aria-label': `Your own answer to: ${q.question}`,
              placeholder: 'Your own answer',
            },
          })
        : null;
      form.append(el('fieldset', {}, el('legend', { text: `${q.header}: ${q.question}` }), ...options, custom));
    });
    const submit = el('button', { text: 'Answer', attrs: { type: 'submit', 'aria-keyshortcuts': 'Enter' } });
    const dismiss = el('button', {
      text: 'Dismiss',
      attrs: { type: 'button', 'aria-keyshortcuts': 'Escape' },
      on: { click: () => void this.answer({ kind: 'question', id: prompt.id, answers: 'dismissed' }) },
    });
    form.append(
      el('div', { class: 'approval-choices' }, submit, dismiss),
      el('p', { class: 'keys', text: 'Keys: arrows pick, Space ticks, Enter answers, Esc dismisses' }),
    );
    form.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        void this.answer({ kind: 'question', id: prompt.id, answers: 'dismissed' });
      } else if (event.key === 'Enter' && !(event.target instanceof HTMLButtonElement)) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const data = new FormData(form);
      const answers = prompt.questions.map((_, index) => {
        const group = `q${prompt.id}-${index}`;
        const chosen = data.getAll(group).map(String);
        const own = String(data.get(`${group}-custom`) ?? '').trim();
        return own ? [...chosen, own] : chosen;
      });
      void this.answer({ kind: 'question', id: prompt.id, answers });
    });
    this.show(prompt.id, form);
  }

  private show(id: number, node: HTMLElement): void {
    this.shown.get(id)?.remove();
    this.shown.set(id, node);
    this.root.append(node);
    this.root.hidden = false;
    // The first prompt that waits takes the focus (later ones wait their turn below it).
    if ([...this.shown.keys()][0] === id) {
      focusFirst(node);
      node.scrollIntoView({ block: 'nearest' });
    }
  }
}

function focusFirst(node: HTMLElement): void {
  const target = node.querySelector<HTMLElement>('input:not([type=hidden]), button');
  target?.focus();
}
