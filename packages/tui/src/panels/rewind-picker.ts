/**
 * The rewind picker (CKPT-3, TUIX-1): Esc Esc on an empty composer or `/rewind` alone. The
 * host hands over the earlier user messages it was told about (the engine's `rewind-picker`
 * event); the pick asks what to restore, like Claude Code does: code and conversation, the
 * conversation only, the code only, or nothing. The answer goes back as a choice; the host
 * turns it into `/rewind N both|chat|code`, so the engine's rules apply. A conflict (files
 * changed since the checkpoint) is asked about with the same list: overwrite or keep.
 *
 * Both are plain list pickers: nothing here knows what a checkpoint is.
 */
import type { ListPickerItem, ListPickerOptions } from './list-picker.js';

/** One earlier user message, as the engine listed it. */
export interface RewindPickerEntry {
  readonly turn: number;
  readonly text: string;
  /** ISO time of the checkpoint. */
  readonly at: string;
  /** Files a code rewind to it puts back. */
  readonly files: number;
}

export type RewindChoice = 'both' | 'chat' | 'code';

export type OpenList = (options: ListPickerOptions) => void;

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function ago(iso: string, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

/** Opens the list of earlier messages (newest first, selected); a pick asks what to restore. */
export function openRewindPicker(
  entries: readonly RewindPickerEntry[],
  open: OpenList,
  choose: (turn: number, what: RewindChoice) => void,
  now: number = Date.now(),
): void {
  const items: ListPickerItem[] = [...entries].reverse().map((e) => ({
    value: String(e.turn),
    label: e.text.replace(/\s*\n\s*/g, ' ⏎ '),
    detail: [`#${e.turn}`, ago(e.at, now), e.files > 0 ? `${plural(e.files, 'file')} changed since` : 'no file changed since']
      .filter(Boolean)
      .join(' · '),
  }));
  open({
    title: 'Rewind to before an earlier message',
    items,
    empty: 'No earlier messages to rewind to.',
    onPick: (value) => {
      const entry = entries.find((e) => String(e.turn) === value);
      if (entry) openRestoreChoice(entry, open, choose);
    },
  });
}

/** The second question: what goes back to before message N. */
export function openRestoreChoice(
  entry: RewindPickerEntry,
  open: OpenList,
  choose: (turn: number, what: RewindChoice) => void,
): void {
  const files = entry.files > 0 ? `${plural(entry.files, 'file')} go back` : '';
  const items: ListPickerItem[] =
    entry.files > 0
      ? [
          { value: 'both', label: 'Restore code and conversation', detail: `${files}; the message returns to the composer` },
          { value: 'chat', label: 'Restore conversation', detail: 'files stay; the message returns to the composer' },
          { value: 'code', label: 'Restore code', detail: `${files}; the conversation stays` },
          { value: 'none', label: 'Never mind' },
        ]
      : [
          { value: 'chat', label: 'Restore conversation', detail: 'no file changed since; the message returns to the composer' },
          { value: 'none', label: 'Never mind' },
        ];
  const text = entry.text.replace(/\s+/g, ' ').trim();
  open({
    title: `Rewind to before #${entry.turn}: ${text.length > 40 ? `${text.slice(0, 39)}…` : text}`,
    items,
    onPick: (value) => {
      if (value === 'both' || value === 'chat' || value === 'code') choose(entry.turn, value);
    },
  });
}

export interface RewindConflictView {
  readonly turn: number;
  readonly conflicts: ReadonlyArray<{ readonly path: string; readonly reason: string }>;
  /** The command that overwrites them (`/rewind N both force`). */
  readonly force: string;
}

/** CKPT-4: files changed since the checkpoint are listed and asked about; nothing is overwritten unless chosen. */
export function openRewindConflict(view: RewindConflictView, open: OpenList, submit: (command: string) => void): void {
  const n = view.conflicts.length;
  const shown = view.conflicts.slice(0, 3).map((c) => c.path);
  const names = `${shown.join(', ')}${n > shown.length ? `, +${n - shown.length}` : ''}`;
  open({
    title: `${plural(n, 'file')} changed since the checkpoint`,
    items: [
      { value: 'keep', label: 'Keep my files (do not rewind)', detail: names },
      { value: 'force', label: 'Overwrite them with the checkpoint', detail: view.force },
    ],
    onPick: (value) => {
      if (value === 'force') submit(view.force);
    },
  });
}
