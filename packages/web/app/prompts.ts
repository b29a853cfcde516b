/**
 * Approval cards and questions the engine is waiting on, answered in the page (WEBX-1). The
 * card shows the engine's values (tool, risk, authority, summary, subject, preview); the
 * buttons are the choices the engine offers.
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

export class Prompts {
  private readonly shown = new Map<number, HTMLElement>();

  constructor(
    private readonly root: HTMLElement,
    private readonly answer: (input: Input) => Promise<void>,
  ) {}

  reset(approvals: readonly ApprovalPrompt[], questions: readonly QuestionPrompt[]): void {
    this.shown.clear();
    this.root.replaceChildren();
    for (const prompt of approvals) this.addApproval(prompt);
    for (const prompt of questions) this.addQuestion(prompt);
  }

  remove(id: number): void {
    this.shown.get(id)?.remove();
    this.shown.delete(id);
    this.root.hidden = this.shown.size === 0;
  }

  addApproval(prompt: ApprovalPrompt): void {
    const { card } = prompt;
    const buttons = prompt.choices.map((choice) =>
      el('button', {
        text: ANSWER_TEXT[choice],
        class: choice === 'deny' ? 'deny' : '',
        attrs: { type: 'button' },
        on: { click: () => void this.answer({ kind: 'approval', id: prompt.id, answer: choice }) },
      }),
    );
    const node = el(
      'section',
      {
        class: `approval risk-${card.risk.toLowerCase()}`,
        attrs: { role: 'alertdialog', 'aria-label': `Approve ${card.tool}?` },
      },
      el('h3', { text: `${card.tool}: ${card.summary}` }),
      prompt.agent && prompt.agent !== 'main' ? el('p', { class: 'approval-agent', text: `Asked by ${prompt.agent}` }) : null,
      el('p', { class: 'approval-meta', text: `Risk ${card.risk} · ${card.authority}` }),
      el('pre', { class: 'approval-subject', text: card.subject }),
      card.sandbox ? el('p', { class: 'approval-sandbox', text: card.sandbox }) : null,
      card.preview && card.preview.length > 0 ? el('pre', { class: 'approval-preview', text: card.preview.join('\n') }) : null,
      el('div', { class: 'approval-choices' }, ...buttons),
    );
    this.show(prompt.id, node);
    buttons[0]?.focus();
  }

  addQuestion(prompt: QuestionPrompt): void {
    const form = el('form', { class: 'question', attrs: { 'aria-label': 'Question from the assistant' } });
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
        ? el('input', { attrs: { type: 'text', name: `${group}-custom`, 'aria-label': `Your own answer to: ${q.question}` } })
        : null;
      form.append(el('fieldset', {}, el('legend', { text: `${q.header}: ${q.question}` }), ...options, custom));
    });
    const submit = el('button', { text: 'Answer', attrs: { type: 'submit' } });
    const dismiss = el('button', {
      text: 'Dismiss',
      attrs: { type: 'button' },
      on: { click: () => void this.answer({ kind: 'question', id: prompt.id, answers: 'dismissed' }) },
    });
    form.append(el('div', { class: 'approval-choices' }, submit, dismiss));
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
  }
}
