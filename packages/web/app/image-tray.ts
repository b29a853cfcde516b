/**
 * The images of the message being written (WEB-1, WEB-2, WEBX-2): added by the file picker,
 * drag and drop, or paste; shown as previews; reordered and removed before send.
 *
 * A file whose declared type is not one the host accepts is refused before a preview is
 * allocated (WEB-2): no object URL, no decode. The count, per-image and aggregate byte bounds
 * are checked here as a courtesy, so the user hears about them at once; the host checks every
 * bound again and decodes the whole batch (WEB-3), and its refusal is shown on the member it names.
 */
import { el, formatBytes } from './dom.js';
import type { InputRegistry } from './types.js';

interface Entry {
  readonly id: number;
  readonly file: File;
  readonly url: string;
  refusal?: string;
}

const TYPE_NAMES = 'PNG, JPEG, GIF or WebP';

export class ImageTray {
  private entries: Entry[] = [];
  private nextId = 1;
  private pasted = 0;
  private dragged: number | undefined;

  constructor(
    private readonly list: HTMLElement,
    private readonly alerts: HTMLElement,
    private readonly registry: () => InputRegistry | undefined,
  ) {}

  get files(): File[] {
    return this.entries.map((e) => e.file);
  }

  get size(): number {
    return this.entries.length;
  }

  /** Adds files in the order given; returns the refusals (also shown in the alert region). */
  add(files: Iterable<File>, source: 'picker' | 'drop' | 'paste'): string[] {
    const message = this.registry()?.message;
    const refusals: string[] = [];
    for (const original of files) {
      const file = source === 'paste' && isGenericPasteName(original.name) ? this.renamePasted(original) : original;
      const label = file.name || 'The image';
      if (!message) {
        refusals.push(`${label}: the page is still connecting to the host; try again in a moment.`);
        continue;
      }
      if (!message.imageTypes.includes(file.type)) {
        refusals.push(`${label}: the type ${file.type || 'of this file is unknown and'} is not supported; attach ${TYPE_NAMES}.`);
        continue;
      }
      const { maxImageBytes, maxImagesPerMessage, maxBatchBytes } = message.limits;
      if (file.size > maxImageBytes) {
        refusals.push(`${label}: it is ${formatBytes(file.size)}; one image may be at most ${formatBytes(maxImageBytes)}.`);
        continue;
      }
      if (this.entries.length >= maxImagesPerMessage) {
        refusals.push(`${label}: a message takes at most ${maxImagesPerMessage} images.`);
        continue;
      }
      const total = this.entries.reduce((sum, e) => sum + e.file.size, 0) + file.size;
      if (total > maxBatchBytes) {
        refusals.push(
          `${label}: the images of one message may total at most ${formatBytes(maxBatchBytes)}; with this one they reach ${formatBytes(total)}.`,
        );
        continue;
      }
      this.entries.push({ id: this.nextId++, file, url: URL.createObjectURL(file) });
    }
    this.showAlerts(refusals);
    this.render();
    return refusals;
  }

  move(id: number, delta: number): void {
    const from = this.entries.findIndex((e) => e.id === id);
    const to = from + delta;
    if (from < 0 || to < 0 || to >= this.entries.length) return;
    const [entry] = this.entries.splice(from, 1);
    this.entries.splice(to, 0, entry as Entry);
    this.clearRefusals();
    this.render();
    this.focusButton(id, delta < 0 ? 'earlier' : 'later');
  }

  /** Puts `id` right before `before` (drag and drop inside the tray). */
  moveBefore(id: number, before: number): void {
    if (id === before) return;
    const entry = this.entries.find((e) => e.id === id);
    if (!entry) return;
    this.entries = this.entries.filter((e) => e.id !== id);
    const at = this.entries.findIndex((e) => e.id === before);
    this.entries.splice(at < 0 ? this.entries.length : at, 0, entry);
    this.clearRefusals();
    this.render();
  }

  remove(id: number): void {
    const entry = this.entries.find((e) => e.id === id);
    if (!entry) return;
    URL.revokeObjectURL(entry.url);
    this.entries = this.entries.filter((e) => e.id !== id);
    this.clearRefusals();
    this.render();
  }

  /** Removes the entries of these files (a sent batch), keeping images added since. */
  removeFiles(files: readonly File[]): void {
    const sent = new Set(files);
    for (const entry of this.entries) if (sent.has(entry.file)) URL.revokeObjectURL(entry.url);
    this.entries = this.entries.filter((e) => !sent.has(e.file));
    this.showAlerts([]);
    this.render();
  }

  clear(): void {
    for (const entry of this.entries) URL.revokeObjectURL(entry.url);
    this.entries = [];
    this.showAlerts([]);
    this.render();
  }

  /** Shows the host's refusal on the member it names (1-based position). */
  markRefused(position: number | undefined, message: string): void {
    this.clearRefusals();
    const entry = position !== undefined ? this.entries[position - 1] : undefined;
    if (entry) entry.refusal = message;
    this.showAlerts([message]);
    this.render();
  }

  private clearRefusals(): void {
    for (const entry of this.entries) entry.refusal = undefined;
  }

  private renamePasted(file: File): File {
    this.pasted++;
    const extension = file.type.split('/')[1]?.replace('jpeg', 'jpg') ?? 'png';
    return new File([file], `Pasted image ${this.pasted}.${extension}`, { type: file.type, lastModified: file.lastModified });
  }

  private showAlerts(messages: readonly string[]): void {
    this.alerts.replaceChildren(...messages.map((text) => el('p', { text })));
    this.alerts.hidden = messages.length === 0;
  }

  private focusButton(id: number, which: 'earlier' | 'later'): void {
    const button = this.list.querySelector<HTMLButtonElement>(`[data-id="${id}"] button[data-action="${which}"]`);
    if (button && !button.disabled) button.focus();
    else this.list.querySelector<HTMLElement>(`[data-id="${id}"]`)?.focus();
  }

  private render(): void {
    const count = this.entries.length;
    this.list.hidden = count === 0;
    this.list.replaceChildren(
      ...this.entries.map((entry, index) => {
        const name = entry.file.name;
        const item = el(
          'li',
          {
            class: entry.refusal ? 'tray-item refused' : 'tray-item',
            attrs: {
              'data-id': String(entry.id),
              draggable: 'true',
              tabindex: '-1',
              'aria-label': `Image ${index + 1} of ${count}: ${name}`,
              'aria-invalid': entry.refusal ? 'true' : undefined,
            },
          },
          el('img', { attrs: { src: entry.url, alt: name } }),
          el('span', { class: 'tray-name', text: `${index + 1}. ${name}` }),
          el('span', { class: 'tray-size', text: formatBytes(entry.file.size) }),
          entry.refusal ? el('span', { class: 'tray-refusal', text: entry.refusal }) : null,
          el('span', { class: 'tray-actions' }, ...this.buttons(entry, index, count)),
        );
        item.addEventListener('dragstart', (event) => {
          this.dragged = entry.id;
          event.dataTransfer?.setData('text/x-crystal-tray', String(entry.id));
          if (event.dataTransfer) event.dataTransfer.effectAllowed = 'move';
        });
        item.addEventListener('dragover', (event) => {
          if (this.dragged !== undefined) event.preventDefault();
        });
        item.addEventListener('drop', (event) => {
          if (this.dragged === undefined) return;
          event.preventDefault();
          event.stopPropagation();
          const id = this.dragged;
          this.dragged = undefined;
          this.moveBefore(id, entry.id);
        });
        item.addEventListener('dragend', () => {
          this.dragged = undefined;
        });
        return item;
      }),
    );
  }

  private buttons(entry: Entry, index: number, count: number): HTMLButtonElement[] {
    const name = entry.file.name;
    const button = (action: string, text: string, label: string, disabled: boolean, run: () => void): HTMLButtonElement => {
      const b = el('button', { text, attrs: { type: 'button', 'data-action': action, 'aria-label': label } });
      b.disabled = disabled;
      b.addEventListener('click', run);
      return b;
    };
    return [
      button('earlier', 'Earlier', `Move ${name} earlier`, index === 0, () => this.move(entry.id, -1)),
      button('later', 'Later', `Move ${name} later`, index === count - 1, () => this.move(entry.id, 1)),
      button('remove', 'Remove', `Remove ${name}`, false, () => this.remove(entry.id)),
    ];
  }
}

function isGenericPasteName(name: string): boolean {
  return name === '' || /^image\.(png|jpe?g|gif|webp)$/i.test(name);
}
