/**
 * The terminal's pickers (TUIX-11): `/resume` (and `crystal -r`) with no id lists this
 * workspace's sessions (title, age, messages); `/model` with no argument lists the catalog's
 * models. The choice is submitted as the command with its argument, so the engine's own
 * `/resume ID` and `/model PROVIDER MODEL` do the work and keep their rules (busy refusals).
 */
import { catalogOf, type Config, listSessions, parseCommand, type SessionController } from '@crystal/engine';
import type { ListPickerItem, ListPickerOptions } from '@crystal/tui';

export type OpenPicker = (options: ListPickerOptions) => void;

/** `3m ago`, `5h ago`, `2d ago`. */
export function age(iso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

export async function openSessionPicker(controller: SessionController, open: OpenPicker): Promise<void> {
  const session = controller.session;
  const sessions = await listSessions(session.home, session.workspace).catch(() => []);
  const items: ListPickerItem[] = sessions.map((s) => ({
    value: s.id,
    label: s.title.trim() === '' ? '(untitled)' : s.title.replace(/\s+/g, ' '),
    detail: `${age(s.updatedUtc)} · ${s.messageCount} message${s.messageCount === 1 ? '' : 's'} · ${s.id}`,
    current: s.id === session.id,
  }));
  open({
    title: 'Resume a session',
    items,
    empty: 'No saved sessions in this workspace.',
    onPick: (id) => controller.submit(`/resume ${id}`),
  });
}

export function openModelPicker(controller: SessionController, config: Config, open: OpenPicker): void {
  const session = controller.session;
  const items: ListPickerItem[] = [];
  for (const [provider, entry] of Object.entries(catalogOf(config))) {
    for (const [model, info] of Object.entries(entry.models ?? {})) {
      const window = (info as { contextWindow?: number }).contextWindow;
      items.push({
        value: `${provider} ${model}`,
        label: `${provider}/${model}`,
        detail: [entry.protocol, window ? `${Math.round(window / 1000)}k context` : ''].filter(Boolean).join(' · '),
        current: provider === session.provider && model === session.model,
      });
    }
  }
  open({
    title: 'Switch model',
    items,
    empty: 'No models in the catalog.',
    onPick: (value) => controller.submit(`/model ${value}`),
  });
}

/** Whether a submitted line is a picker command; opens the picker when it is. */
export function pickerFor(text: string, controller: SessionController, config: Config, open: OpenPicker): boolean {
  const parsed = parseCommand(text);
  if (parsed?.argument !== '') return false;
  if (!parsed) return false;
  if (parsed.spec.name === 'resume') {
    void openSessionPicker(controller, open);
    return true;
  }
  if (parsed.spec.name === 'model') {
    openModelPicker(controller, config, open);
    return true;
  }
  return false;
}
