/**
 * The slash-command picker (TUI-5): opens while the composer holds a `/` prefix on one line.
 * Up/Down move the selection, Tab accepts it, Enter accepts a partial match first and then
 * submits. After a command name and a space, the command's argument completions are listed.
 */
import { paint, theme } from '../style.js';
import type { PickerCommand } from '../view-model.js';
import { truncate } from '../wrap.js';

export const PICKER_MAX_ROWS = 8;

export interface PickerEntry {
  /** What Tab/Enter puts in the composer. */
  readonly insert: string;
  readonly label: string;
  readonly detail: string;
}

export class SlashPicker {
  private selected = 0;
  private query: string | undefined;
  private entries: PickerEntry[] = [];
  private argCache = new Map<string, readonly string[]>();
  /** Called when async argument completions arrive. */
  onChange: (() => void) | undefined;

  constructor(private commands: readonly PickerCommand[]) {}

  /** The host's commands arrived (the terminal painted before the engine loaded: issue 22). */
  setCommands(commands: readonly PickerCommand[]): void {
    this.commands = commands;
    const query = this.query;
    this.query = undefined;
    if (query !== undefined) this.update(query);
  }

  get open(): boolean {
    return this.entries.length > 0;
  }

  get items(): readonly PickerEntry[] {
    return this.entries;
  }

  get selection(): PickerEntry | undefined {
    return this.entries[this.selected];
  }

  /** Re-computes the entries for the composer text. */
  update(text: string): void {
    if (text === this.query) return;
    this.query = text;
    this.selected = 0;
    this.entries = this.compute(text);
  }

  close(): void {
    this.entries = [];
  }

  private compute(text: string): PickerEntry[] {
    if (!text.startsWith('/') || text.includes('\n')) return [];
    const space = text.indexOf(' ');
    if (space === -1) {
      const typed = text.slice(1).toLowerCase();
      return this.commands
        .filter((c) => [c.name, ...c.aliases].some((n) => n.startsWith(typed)))
        .map((c) => ({
          insert: /[[<]/.test(c.usage) ? `/${c.name} ` : `/${c.name}`,
          label: c.usage,
          detail: aliasText(c) + c.summary,
        }));
    }
    const name = text.slice(1, space).toLowerCase();
    const command = this.commands.find((c) => c.name === name || c.aliases.includes(name));
    if (!command?.complete) return [];
    const arg = text.slice(space + 1);
    const key = `${command.name} ${arg}`;
    let options = this.argCache.get(key);
    if (!options) {
      const result = command.complete(arg);
      if (Array.isArray(result)) options = result as readonly string[];
      else {
        void (result as Promise<readonly string[]>).then(
          (list) => {
            this.argCache.set(key, list);
            if (this.query === text) {
              this.query = undefined;
              this.update(text);
              this.onChange?.();
            }
          },
          () => undefined,
        );
        return [];
      }
    }
    return options
      .filter((o) => o.startsWith(arg) && o !== arg)
      .map((o) => ({ insert: `/${command.name} ${o}`, label: o, detail: '' }));
  }

  move(delta: number): void {
    if (this.entries.length === 0) return;
    this.selected = (this.selected + delta + this.entries.length) % this.entries.length;
  }

  /** True when Enter should accept the selection instead of submitting `text` (a partial match). */
  acceptsOnEnter(text: string): boolean {
    const pick = this.selection;
    if (!pick) return false;
    const typed = text.trim();
    if (typed === pick.insert.trim()) return false;
    if (typed.includes(' ')) return true;
    const name = typed.slice(1).toLowerCase();
    return !this.commands.some((c) => c.name === name || c.aliases.includes(name));
  }

  render(width: number): string[] {
    const rows: string[] = [];
    const start = Math.max(0, Math.min(this.selected - PICKER_MAX_ROWS + 1, this.entries.length - PICKER_MAX_ROWS));
    const shown = this.entries.slice(start, start + PICKER_MAX_ROWS);
    const labelWidth = Math.min(34, Math.max(...shown.map((e) => e.label.length)) + 2);
    for (const [i, entry] of shown.entries()) {
      const here = start + i === this.selected;
      const label = truncate(entry.label, labelWidth).padEnd(labelWidth);
      const detail = truncate(entry.detail, Math.max(0, width - labelWidth - 4));
      rows.push(
        here
          ? paint(` ${label}${detail} `.padEnd(width - 1), theme.selected)
          : ` ${paint(label, theme.accent)}${paint(detail, theme.muted)}`,
      );
    }
    return rows;
  }
}

function aliasText(c: PickerCommand): string {
  return c.aliases.length > 0 ? `(${c.aliases.map((a) => `/${a}`).join(', ')}) ` : '';
}
