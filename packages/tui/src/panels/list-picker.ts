/**
 * A searchable list overlay (TUIX-1 the rewind picker, TUIX-11 sessions and models): typed
 * text filters the rows (every word must appear, in any order, case-insensitive), Up/Down
 * move, PageUp/PageDown jump, Enter picks, Esc closes. The host gives the rows and is told
 * the picked value; nothing here knows what a session or a model is.
 */
import type { InputEvent } from '../input-decoder.js';
import { theme } from '../style.js';
import { graphemes } from '../text-width.js';
import type { Span } from '../wrap.js';
import { truncate } from '../wrap.js';
import { box } from './box.js';

export interface ListPickerItem {
  /** What the host is told on Enter. */
  readonly value: string;
  readonly label: string;
  /** Muted text after the label (age, messages, provider). */
  readonly detail?: string;
  /** Marks the current one (the open session, the model in use). */
  readonly current?: boolean;
}

export interface ListPickerOptions {
  readonly title: string;
  readonly items: readonly ListPickerItem[];
  /** Shown when nothing matches or the list is empty. */
  readonly empty?: string;
  readonly onPick: (value: string) => void;
  readonly onClose?: () => void;
}

export type ListPickerOutcome = 'picked' | 'closed' | undefined;

export class ListPicker {
  private query = '';
  private selected = 0;
  private shown: readonly ListPickerItem[];

  constructor(readonly options: ListPickerOptions) {
    this.shown = options.items;
    const current = options.items.findIndex((i) => i.current);
    if (current > 0) this.selected = current;
  }

  get filter(): string {
    return this.query;
  }

  get visibleItems(): readonly ListPickerItem[] {
    return this.shown;
  }

  private refilter(): void {
    const words = this.query.toLowerCase().split(/\s+/).filter(Boolean);
    this.shown =
      words.length === 0
        ? this.options.items
        : this.options.items.filter((item) => {
            const hay = `${item.label} ${item.detail ?? ''} ${item.value}`.toLowerCase();
            return words.every((w) => hay.includes(w));
          });
    this.selected = 0;
  }

  key(event: InputEvent): ListPickerOutcome {
    if (event.type === 'key') {
      switch (event.name) {
        case 'escape':
          this.options.onClose?.();
          return 'closed';
        case 'enter': {
          const item = this.shown[this.selected];
          if (!item) return undefined;
          this.options.onPick(item.value);
          return 'picked';
        }
        case 'up':
          if (this.shown.length > 0) this.selected = (this.selected - 1 + this.shown.length) % this.shown.length;
          return undefined;
        case 'down':
        case 'tab':
          if (this.shown.length > 0) this.selected = (this.selected + 1) % this.shown.length;
          return undefined;
        case 'pageup':
          this.selected = Math.max(0, this.selected - 8);
          return undefined;
        case 'pagedown':
          this.selected = Math.min(Math.max(0, this.shown.length - 1), this.selected + 8);
          return undefined;
        case 'backspace':
          this.query = graphemes(this.query).slice(0, -1).join('');
          this.refilter();
          return undefined;
        default:
          return undefined;
      }
    }
    if (event.type === 'ctrl' && event.letter === 'u') {
      this.query = '';
      this.refilter();
      return undefined;
    }
    if (event.type === 'text' || event.type === 'paste') {
      this.query += event.text.replace(/[\r\n\t]+/g, ' ');
      this.refilter();
    }
    return undefined;
  }

  render(width: number, maxRows: number): string[] {
    const lines: Span[][] = [];
    lines.push([
      { text: 'Search: ', style: theme.muted },
      { text: this.query, style: theme.bold },
      { text: '▏', style: theme.accent },
    ]);
    const room = Math.max(1, maxRows - 4);
    const start = Math.max(0, Math.min(this.selected - room + 1, this.shown.length - room));
    const inner = Math.max(8, width - 6);
    if (this.shown.length === 0) lines.push([{ text: this.options.empty ?? 'Nothing matches.', style: theme.muted }]);
    for (const [i, item] of this.shown.slice(start, start + room).entries()) {
      const here = start + i === this.selected;
      const label = truncate(`${item.current ? '* ' : ''}${item.label}`, inner - 2);
      const detail = item.detail ? truncate(`  ${item.detail}`, Math.max(0, inner - 2 - label.length)) : '';
      lines.push([
        { text: here ? '› ' : '  ', style: theme.accentBold },
        { text: label, style: here ? theme.accentBold : theme.bold },
        ...(detail ? [{ text: detail, style: theme.muted }] : []),
      ]);
    }
    lines.push([{ text: 'Type to search · Up/Down move · Enter choose · Esc close', style: theme.muted }]);
    return box(lines, width, {
      title: this.options.title,
      badge: `${this.shown.length}/${this.options.items.length}`,
      maxRows: maxRows + 1,
    });
  }
}
