/**
 * The progress row (TUI-4): a one-cell braille spinner, the caption, and the time spent in
 * it (reset when the caption changes). The retry caption counts the wait down from `dueAt`.
 */
import { paint, theme } from './style.js';
import type { ProgressView } from './view-model.js';

export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const;
/** Spinner step; also the frame timer while anything is in progress (no timer when idle). */
export const SPINNER_MS = 100;

export function spinnerFrame(now: number): string {
  return SPINNER[Math.floor(now / SPINNER_MS) % SPINNER.length] as string;
}

/** `5s`, `2m18s`, `1h04m`. */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

const CAPTIONS = {
  waiting: 'Waiting For Model',
  thinking: 'Thinking',
  writing: 'Writing',
  running: 'Running Command',
  approval: 'Awaiting Approval',
  question: 'Waiting For Answer',
  compacting: 'Compacting',
} as const;

export function progressCaption(view: ProgressView, now: number): string {
  if (view.kind === 'retrying') {
    const left = Math.max(0, Math.ceil((view.dueAt - now) / 1000));
    return `Retrying In ${left}s (Attempt ${view.attempt})`;
  }
  return CAPTIONS[view.kind];
}

let last: { view: ProgressView; step: number; second: number; row: string } | undefined;

/**
 * The progress row. Frames come faster than its spinner steps (every 100 ms) and its clock
 * (every second), so the row last painted is given again while the view, the spinner step and
 * the elapsed second are the same (the retry countdown, rare, is painted every time).
 */
export function renderProgress(view: ProgressView, now: number): string {
  const step = Math.floor(now / SPINNER_MS);
  const second = Math.floor((now - view.since) / 1000);
  if (view.kind !== 'retrying' && last && last.view === view && last.step === step && last.second === second) return last.row;
  const row = `${paint(spinnerFrame(now), theme.accent)} ${paint(progressCaption(view, now), theme.bold)}${paint(` · ${formatElapsed(now - view.since)}`, theme.muted)}`;
  last = { view, step, second, row };
  return row;
}
