/**
 * A child agent's card (AGENT-4): the path, profile and task in the head, the child's own steps
 * (its tool calls with their status), its own progress row while it runs, then how it stopped.
 * Collapsed it shows the last few steps and the first lines of the answer; Ctrl+O expands it
 * to every step, the whole answer and where its transcript is kept. The host feeds it from the
 * engine's `agent-*` events; the card decides nothing.
 */
import { type TranscriptEntry, titleCase } from './entries.js';
import { formatElapsed, progressCaption, SPINNER_MS, spinnerFrame } from './progress.js';
import { arrayRows, type Rows } from './rows.js';
import { sanitize, sanitizeToolBody } from './sanitize.js';
import { paint, type Style, theme } from './style.js';
import type { ProgressView } from './view-model.js';
import { type Span, truncate, wrapHard, wrapSpans } from './wrap.js';

export interface AgentCardData {
  /** `main/explore#1`. */
  readonly path: string;
  readonly profile: string;
  readonly description: string;
  /** `provider/model`. */
  readonly model: string;
  /** Where the child's transcript is kept, and how to export it (shown expanded). */
  readonly transcript?: string | undefined;
}

export type AgentStepStatus = 'running' | 'done' | 'failed' | 'denied';

interface Step {
  readonly name: string;
  readonly summary: string;
  status: AgentStepStatus;
}

export const AGENT_STEPS_COLLAPSED = 3;
export const AGENT_ANSWER_COLLAPSED = 3;
const AGENT_EXPANDED_MAX_LINES = 400;

const STEP_MARK: Record<AgentStepStatus, { dot: string; style: Style }> = {
  running: { dot: '●', style: theme.warn },
  done: { dot: '●', style: theme.success },
  failed: { dot: '●', style: theme.error },
  denied: { dot: '●', style: theme.error },
};

export class AgentEntry implements TranscriptEntry {
  private readonly steps = new Map<string, Step>();
  private activity: ProgressView['kind'] = 'waiting';
  private since: number;
  private live = '';
  private answer = '';
  private stop: string | undefined;
  private counts = { modelCalls: 0, toolCalls: 0 };
  private open = false;

  constructor(
    readonly data: AgentCardData,
    private readonly now: () => number = Date.now,
  ) {
    this.since = now();
  }

  get running(): boolean {
    return this.stop === undefined;
  }

  get expanded(): boolean {
    return this.open;
  }

  /** Whether Ctrl+O would show more than the collapsed card. */
  get expandable(): boolean {
    return (
      this.steps.size > AGENT_STEPS_COLLAPSED ||
      this.answer.split('\n').length > AGENT_ANSWER_COLLAPSED ||
      this.data.transcript !== undefined
    );
  }

  setExpanded(open: boolean): void {
    this.open = open;
    this.changed();
  }

  /** A copy printed expanded below (the inline view's scroll-back cannot change). */
  expandedCopy(): AgentEntry {
    const copy = new AgentEntry(this.data, this.now);
    for (const [id, step] of this.steps) copy.steps.set(id, { ...step });
    copy.activity = this.activity;
    copy.since = this.since;
    copy.answer = this.answer;
    copy.stop = this.stop;
    copy.counts = { ...this.counts };
    copy.open = true;
    return copy;
  }

  /** The child's own progress (its progress row). */
  setActivity(kind: ProgressView['kind']): void {
    if (kind === this.activity) return;
    this.activity = kind;
    this.since = this.now();
    this.changed();
  }

  /** A round started: the text of the previous one is over. */
  roundStarted(): void {
    this.live = '';
    this.counts.modelCalls++;
    this.setActivity('waiting');
  }

  appendText(delta: string): void {
    this.live += delta;
    this.changed();
    this.setActivity('writing');
  }

  addStep(callId: string, name: string, summary: string): void {
    this.steps.set(callId, { name, summary, status: 'running' });
    this.changed();
    this.counts.toolCalls++;
    this.setActivity('running');
  }

  finishStep(callId: string, status: AgentStepStatus): void {
    const step = this.steps.get(callId);
    if (step && step.status !== 'denied') step.status = status;
    this.changed();
  }

  /** The running step of `tool` that the operator denied (the approval belongs to this child). */
  denyRunning(tool: string): void {
    for (const step of this.steps.values()) {
      if (step.name === tool && step.status === 'running') {
        step.status = 'denied';
        this.changed();
        return;
      }
    }
  }

  finish(stopReason: string, answer: string, modelCalls: number, toolCalls: number): void {
    this.stop = stopReason;
    this.changed();
    this.answer = answer;
    this.counts = { modelCalls, toolCalls };
  }

  invalidate(): void {
    this.cache = undefined;
  }

  private cache: { key: string; rows: Rows } | undefined;

  /** Laid out once per width and change; while running also once per spinner step (its progress row moves). */
  rows(width: number): Rows {
    const key = `${width}:${this.version}:${this.stop === undefined ? Math.floor(this.now() / SPINNER_MS) : ''}`;
    if (this.cache?.key !== key) this.cache = { key, rows: arrayRows(this.layout(width)) };
    return this.cache.rows;
  }

  private version = 0;

  private changed(): void {
    this.version++;
  }

  private layout(width: number): string[] {
    const pad: Span = { text: '  │ ', style: theme.border };
    const head: Span[] = [
      { text: 'Agent ', style: theme.bold },
      { text: this.data.path, style: theme.accentBold },
      { text: ' ' },
      { text: truncate(sanitize(this.data.description).replace(/\n/g, ' '), Math.max(10, width - this.data.path.length - 12)) },
    ];
    const mark =
      this.stop === undefined
        ? STEP_MARK.running
        : this.stop === 'completed'
          ? STEP_MARK.done
          : this.stop === 'interrupted'
            ? { dot: '●', style: theme.muted }
            : STEP_MARK.failed;
    const rows = wrapSpans(head, {
      width,
      firstPrefix: [{ text: `${mark.dot} `, style: mark.style }],
      restPrefix: [{ text: '  ' }],
    });
    rows.push(
      ...wrapSpans([{ text: `${this.data.profile} · ${this.data.model}`, style: theme.muted }], { width, firstPrefix: [pad] }),
    );
    const steps = [...this.steps.values()];
    const shown = this.open ? steps : steps.slice(-AGENT_STEPS_COLLAPSED);
    if (steps.length > shown.length)
      rows.push(
        ...wrapSpans([{ text: `… ${plural(steps.length - shown.length, 'earlier step')}`, style: theme.muted }], {
          width,
          firstPrefix: [pad],
        }),
      );
    for (const step of shown) {
      const m = STEP_MARK[step.status];
      rows.push(
        ...wrapSpans(
          [
            { text: `${m.dot} `, style: m.style },
            { text: titleCase(step.name), style: theme.bold },
            { text: ` ${truncate(sanitize(step.summary).replace(/\n/g, ' '), Math.max(10, width - 20))}` },
            ...(step.status === 'denied' ? [{ text: '  Denied', style: theme.error }] : []),
          ],
          { width, firstPrefix: [pad], restPrefix: [pad] },
        ),
      );
    }
    if (this.stop === undefined) {
      // The child's own progress row: spinner, caption, time in it, its calls so far.
      const now = this.now();
      const view = { kind: this.activity, since: this.since } as ProgressView;
      const tail = this.live.trim().split('\n').at(-1) ?? '';
      rows.push(
        `${paint('  │ ', theme.border)}${paint(spinnerFrame(now), theme.accent)} ${paint(progressCaption(view, now), theme.bold)}${paint(
          ` · ${formatElapsed(now - this.since)} · ${plural(this.counts.modelCalls, 'model call')} · ${plural(this.counts.toolCalls, 'tool call')}`,
          theme.muted,
        )}`,
      );
      if (tail !== '')
        rows.push(...wrapHard([{ text: truncate(sanitize(tail), width * 2), style: theme.muted }], width, [pad]).slice(0, 1));
      return rows;
    }
    const tone = this.stop === 'completed' ? theme.muted : theme.error;
    rows.push(
      ...wrapSpans(
        [
          {
            text: `${this.stop === 'completed' ? 'Done' : `Stopped: ${this.stop}`} · ${plural(this.counts.modelCalls, 'model call')} · ${plural(this.counts.toolCalls, 'tool call')}`,
            style: tone,
          },
        ],
        { width, firstPrefix: [pad] },
      ),
    );
    const answer = sanitizeToolBody(this.answer.replace(/\s+$/, ''));
    if (answer !== '') {
      const lines = answer.split('\n');
      const limit = this.open ? AGENT_EXPANDED_MAX_LINES : AGENT_ANSWER_COLLAPSED;
      for (const line of lines.slice(0, limit)) rows.push(...wrapHard([{ text: line }], width, [pad]));
      if (lines.length > limit)
        rows.push(
          ...wrapSpans([{ text: `… ${lines.length - limit} more lines · Ctrl+O expands`, style: theme.muted }], {
            width,
            firstPrefix: [pad],
          }),
        );
    }
    if (this.open && this.data.transcript)
      rows.push(
        ...wrapSpans([{ text: `Transcript: ${this.data.transcript}`, style: theme.muted }], {
          width,
          firstPrefix: [pad],
          restPrefix: [pad],
        }),
      );
    if (this.open) rows.push(...wrapSpans([{ text: 'Ctrl+O collapses', style: theme.muted }], { width, firstPrefix: [pad] }));
    return rows;
  }
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
