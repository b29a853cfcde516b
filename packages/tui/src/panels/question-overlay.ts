/**
 * The question overlay (reference §8.5): one tab per question, described choices, selection
 * state, a custom answer and, when needed, a final Confirm tab. A single single-select
 * question submits at once; several questions or multi-select use Confirm.
 * Keys: Up/Down or J/K move; Enter selects; Space toggles (multi-select); Left/Right or Tab
 * switch questions; Escape dismisses. A custom answer is edited in its own buffer: Enter
 * saves, Escape cancels the edit.
 */
import type { InputEvent } from '../input-decoder.js';
import { theme } from '../style.js';
import { textWidth } from '../text-width.js';
import type { QuestionView } from '../view-model.js';
import type { Span } from '../wrap.js';
import { box } from './box.js';

export type QuestionOutcome = { readonly answers: readonly (readonly string[])[] } | 'dismissed' | undefined;

const CUSTOM_LABEL = 'Type your own answer';

export class QuestionState {
  private tab = 0;
  private readonly cursor: number[];
  private readonly chosen: Set<number>[];
  private readonly custom: string[];
  private editing: string | undefined;

  constructor(readonly view: QuestionView) {
    this.cursor = view.questions.map(() => 0);
    this.chosen = view.questions.map(() => new Set<number>());
    this.custom = view.questions.map(() => '');
  }

  private get needsConfirm(): boolean {
    return this.view.questions.length > 1 || this.view.questions.some((q) => q.multiple);
  }

  private get tabs(): number {
    return this.view.questions.length + (this.needsConfirm ? 1 : 0);
  }

  private optionCount(q: number): number {
    const item = this.view.questions[q];
    return item ? item.options.length + (item.custom ? 1 : 0) : 0;
  }

  private isCustom(q: number, index: number): boolean {
    const item = this.view.questions[q];
    return !!item && item.custom && index === item.options.length;
  }

  /** Applies one key; returns the answers when submitted, 'dismissed' on Escape. */
  key(event: InputEvent): QuestionOutcome {
    if (this.editing !== undefined) return this.editKey(event);
    const q = this.tab;
    const onConfirm = q >= this.view.questions.length;
    if (event.type === 'key') {
      switch (event.name) {
        case 'escape':
          return 'dismissed';
        case 'up':
          if (!onConfirm) this.cursor[q] = Math.max(0, (this.cursor[q] ?? 0) - 1);
          return undefined;
        case 'down':
          if (!onConfirm) this.cursor[q] = Math.min(this.optionCount(q) - 1, (this.cursor[q] ?? 0) + 1);
          return undefined;
        case 'left':
        case 'backtab':
          this.tab = Math.max(0, this.tab - 1);
          return undefined;
        case 'right':
        case 'tab':
          this.tab = Math.min(this.tabs - 1, this.tab + 1);
          return undefined;
        case 'enter':
          return onConfirm ? this.submit() : this.select(q, false);
        default:
          return undefined;
      }
    }
    if ((event.type === 'text' || event.type === 'paste') && !onConfirm && this.isCustom(q, this.cursor[q] ?? 0)) {
      // On "Type your own answer" typing goes straight into the answer (nothing is dropped).
      this.editing = (this.custom[q] ?? '') + event.text.replace(/\n/g, ' ');
      return undefined;
    }
    if (event.type === 'text') {
      const k = event.text;
      if (k === 'j' || k === 'k') return this.key({ type: 'key', name: k === 'j' ? 'down' : 'up' });
      if (k === ' ' && !onConfirm) return this.select(q, true);
      const digit = Number(k);
      if (!onConfirm && Number.isInteger(digit) && digit >= 1 && digit <= this.optionCount(q)) {
        this.cursor[q] = digit - 1;
        return this.select(q, false);
      }
    }
    return undefined;
  }

  private select(q: number, toggleOnly: boolean): QuestionOutcome {
    const item = this.view.questions[q];
    if (!item) return undefined;
    const index = this.cursor[q] ?? 0;
    if (this.isCustom(q, index)) {
      if (toggleOnly && item.multiple && this.custom[q] !== '') {
        this.toggle(q, index);
        return undefined;
      }
      this.editing = this.custom[q] ?? '';
      return undefined;
    }
    if (item.multiple) {
      this.toggle(q, index);
      return undefined;
    }
    if (toggleOnly) return undefined;
    this.chosen[q] = new Set([index]);
    if (!this.needsConfirm) return this.submit();
    this.tab = Math.min(this.tabs - 1, q + 1);
    return undefined;
  }

  private toggle(q: number, index: number): void {
    const set = this.chosen[q] as Set<number>;
    if (set.has(index)) set.delete(index);
    else set.add(index);
  }

  private editKey(event: InputEvent): QuestionOutcome {
    const q = this.tab;
    const item = this.view.questions[q];
    if (!item) return undefined;
    if (event.type === 'key' && event.name === 'escape') {
      this.editing = undefined;
      return undefined;
    }
    if (event.type === 'key' && event.name === 'enter') {
      this.custom[q] = this.editing ?? '';
      this.editing = undefined;
      const index = item.options.length;
      if (this.custom[q] === '') {
        this.chosen[q]?.delete(index);
        return undefined;
      }
      if (item.multiple) (this.chosen[q] as Set<number>).add(index);
      else this.chosen[q] = new Set([index]);
      if (!this.needsConfirm) return this.submit();
      if (!item.multiple) this.tab = Math.min(this.tabs - 1, q + 1);
      return undefined;
    }
    if (event.type === 'key' && event.name === 'backspace') {
      this.editing = [...(this.editing ?? '')].slice(0, -1).join('');
      return undefined;
    }
    if (event.type === 'text' || event.type === 'paste') this.editing = (this.editing ?? '') + event.text.replace(/\n/g, ' ');
    return undefined;
  }

  private submit(): QuestionOutcome {
    const answers = this.view.questions.map((item, q) =>
      [...(this.chosen[q] as Set<number>)]
        .sort((a, b) => a - b)
        .map((i) => (i === item.options.length ? (this.custom[q] as string) : (item.options[i]?.label ?? ''))),
    );
    return { answers };
  }

  get isEditing(): boolean {
    return this.editing !== undefined;
  }

  render(width: number, maxRows: number): string[] {
    const lines: Span[][] = [];
    const tabs: Span[] = [];
    this.view.questions.forEach((item, i) => {
      const answered = (this.chosen[i]?.size ?? 0) > 0;
      tabs.push({
        text: ` ${item.header || `Question ${i + 1}`}${answered ? ' ✓' : ''} `,
        style: i === this.tab ? theme.selected : theme.muted,
      });
    });
    if (this.needsConfirm)
      tabs.push({ text: ' Confirm ', style: this.tab === this.view.questions.length ? theme.selected : theme.muted });
    if (this.view.questions.length > 1 || this.needsConfirm) lines.push(tabs);
    const item = this.view.questions[this.tab];
    if (item) {
      lines.push([{ text: item.question, style: theme.bold }]);
      const count = this.optionCount(this.tab);
      const numberWidth = String(count).length;
      // Labels padded to one column so the descriptions line up.
      const labelWidth = Math.max(0, ...item.options.map((o) => textWidth(o.label)));
      for (let i = 0; i < count; i++) {
        const here = i === (this.cursor[this.tab] ?? 0);
        const picked = this.chosen[this.tab]?.has(i) ?? false;
        const mark = item.multiple ? (picked ? '[x] ' : '[ ] ') : !this.needsConfirm ? '' : picked ? '● ' : '  ';
        const number = `${String(i + 1).padStart(numberWidth)}. `;
        const pointer: Span = { text: here ? '› ' : '  ', style: theme.accentBold };
        if (this.isCustom(this.tab, i)) {
          const text = this.editing !== undefined && here ? `${this.editing}▏` : this.custom[this.tab] || '';
          lines.push([
            pointer,
            { text: `${mark}${number}${CUSTOM_LABEL}: `, style: here ? theme.accent : theme.muted },
            { text, style: theme.bold },
          ]);
          continue;
        }
        const option = item.options[i];
        if (!option) continue;
        const pad = ' '.repeat(Math.max(0, labelWidth - textWidth(option.label)));
        lines.push([
          pointer,
          { text: `${mark}${number}${option.label}`, style: here ? theme.accentBold : theme.bold },
          ...(option.description ? [{ text: `${pad}  ${option.description}`, style: theme.muted }] : []),
        ]);
      }
    } else {
      for (const [q, question] of this.view.questions.entries()) {
        const picked = [...(this.chosen[q] as Set<number>)].map((i) =>
          i === question.options.length ? this.custom[q] : question.options[i]?.label,
        );
        lines.push([
          { text: `${question.header || question.question}: `, style: theme.muted },
          { text: picked.join(', ') || '(no answer)' },
        ]);
      }
      lines.push([{ text: 'Press Enter to send these answers.', style: theme.accent }]);
    }
    lines.push([{ text: this.hint(item), style: theme.muted }]);
    const single = this.view.questions.length === 1 ? this.view.questions[0] : undefined;
    const title = single?.header ? `Question · ${single.header}` : 'Question';
    return box(lines, width, { title, maxRows });
  }

  private hint(item: QuestionView['questions'][number] | undefined): string {
    if (this.editing !== undefined) return 'Type your answer · Enter save · Esc cancel edit';
    const parts = ['Up/Down move', item?.multiple ? 'Space toggle' : 'Enter choose'];
    if (item?.multiple) parts.push('Enter toggle');
    if (this.tabs > 1) parts.push('Left/Right questions');
    parts.push('Esc dismiss');
    return parts.join(' · ');
  }
}
