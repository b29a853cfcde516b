/**
 * Maps controller events onto the terminal's view values and transcript entries. The engine
 * decides; this only mirrors what it published (DESIGN.md: the CLI is the composition root).
 */
import type { ChatMessage } from '@crystal/core';
import {
  type Activity,
  autoPassCardLines,
  type ControllerEvent,
  catalogOf,
  type Config,
  changePreview,
  resultDiffLines,
  type ReviewCardFields,
  type SessionController,
} from '@crystal/engine';
import {
  AssistantEntry,
  NoteEntry,
  PanelEntry,
  type ProgressView,
  ReasoningEntry,
  type SideEntryView,
  type StatusView,
  type TerminalApp,
  ToolEntry,
  type TranscriptEntry,
  UserEntry,
} from '@crystal/tui';
import { displayUserText } from './user-text.js';
import { resultSummary, toolCard } from './tool-summary.js';

type ProgressKind = ProgressView['kind'];

/**
 * How many archived messages a resume shows (issue 22 item 5): a long session resumes as fast as
 * a short one; the older messages are counted in a note, and /export writes them all.
 */
export const RESUME_SHOWN_MESSAGES = 50;

const STOP_NOTES: Partial<Record<string, string>> = {
  interrupted: 'Interrupted.',
  output_truncated: 'The reply was cut at the model output limit.',
  content_filtered: 'The provider filtered the reply.',
  context_overflow: 'The conversation no longer fits the model window; start a new one with /clear or compact it with /compact.',
  model_call_limit_reached: 'Stopped: the model-call budget of this turn is used up.',
  tool_call_limit_reached: 'Stopped: the tool-call budget of this turn is used up.',
  duration_limit_reached: 'Stopped: the duration budget of this turn is used up.',
};

export class SessionView {
  private assistant: AssistantEntry | undefined;
  private reasoning: ReasoningEntry | undefined;
  private readonly tools = new Map<string, ToolEntry>();
  private activity: Activity = 'idle';
  private usageIn = 0;
  private usageOut = 0;
  private contextUsed: number | undefined;
  private queued = 0;
  private side: SideEntryView[] = [];
  private pendingDenyTool: string | undefined;
  onQuit: ((sessionId: string) => void) | undefined;

  constructor(
    private readonly app: TerminalApp,
    private readonly controller: SessionController,
    private readonly config: Config,
    private readonly now: () => number = Date.now,
  ) {
    const snapshot = controller.session.snapshot();
    this.usageIn = snapshot.cumulativeUsage.inputTokens;
    this.usageOut = snapshot.cumulativeUsage.outputTokens;
    const last = snapshot.lastUsage.inputTokens + snapshot.lastUsage.outputTokens;
    this.contextUsed = last > 0 ? last : undefined;
    this.queued = controller.queue.length;
  }

  private contextWindow(): number | undefined {
    const session = this.controller.session;
    return catalogOf(this.config)[session.provider]?.models[session.model]?.contextWindow;
  }

  status(): StatusView {
    const session = this.controller.session;
    const window = this.contextWindow();
    return {
      mode: this.controller.mode,
      approval: this.controller.approvalMode,
      model: `${session.provider}/${session.model}`,
      workspace: session.workspace,
      contextPercent: window && this.contextUsed !== undefined ? (100 * this.contextUsed) / window : window ? 0 : undefined,
      inputTokens: this.usageIn,
      outputTokens: this.usageOut,
      queued: this.queued,
    };
  }

  private refreshStatus(): void {
    this.app.setStatus(this.status());
  }

  private progress(kind: ProgressKind): void {
    const current = this.app.currentProgress;
    if (current?.kind === kind) return;
    this.app.setProgress({ kind, since: this.now() } as ProgressView);
  }

  private push(entry: TranscriptEntry): void {
    this.app.transcript.push(entry);
    this.app.transcriptChanged();
  }

  /** Closes the streaming entries of the current attempt. */
  private closeRound(): void {
    this.assistant?.finish();
    this.assistant = undefined;
    this.reasoning = undefined;
  }

  onEvent = (event: ControllerEvent): void => {
    switch (event.type) {
      case 'turn-started':
      case 'follow-up-sent': {
        const shown = displayUserText(event.text);
        this.push(new UserEntry(shown.text, shown.markers));
        return;
      }
      case 'round-started':
        this.closeRound();
        this.progress('waiting');
        return;
      case 'reasoning-delta':
        if (!this.reasoning) {
          this.reasoning = new ReasoningEntry();
          this.push(this.reasoning);
        }
        this.reasoning.append(event.text);
        this.progress('thinking');
        this.app.transcriptChanged();
        return;
      case 'text-delta':
        if (!this.assistant) {
          this.assistant = new AssistantEntry();
          this.push(this.assistant);
        }
        this.assistant.append(event.text);
        this.progress('writing');
        this.app.transcriptChanged();
        return;
      case 'tool-call-delta':
        this.progress('writing');
        return;
      case 'attempt-discarded':
        // RETRY-5: the failed attempt's live text and reasoning disappear.
        if (this.assistant) this.app.transcript.remove(this.assistant);
        if (this.reasoning) this.app.transcript.remove(this.reasoning);
        this.assistant = undefined;
        this.reasoning = undefined;
        this.app.transcriptChanged();
        return;
      case 'retry-scheduled':
        // RETRY-4: the countdown in the progress row, the operator message in the transcript.
        this.app.setProgress({ kind: 'retrying', since: this.now(), dueAt: event.dueAt, attempt: event.attempt });
        this.push(new NoteEntry(`retrying model request: ${event.message}`, 'notice'));
        return;
      case 'round-closed':
        this.closeRound();
        if (event.usage) {
          this.contextUsed = event.usage.inputTokens + event.usage.outputTokens;
          this.usageIn += event.usage.inputTokens;
          this.usageOut += event.usage.outputTokens;
          this.refreshStatus();
        }
        this.app.transcriptChanged();
        return;
      case 'tool-calls':
        for (const call of event.calls) {
          const entry = new ToolEntry(toolCard(call));
          entry.setStatus('running');
          this.tools.set(call.id, entry);
          this.push(entry);
          if (call.name === 'edit' || call.name === 'write') this.previewChange(call.id, entry, call.name, call.input);
        }
        this.progress('running');
        return;
      case 'tool-output':
        this.tools.get(event.callId)?.appendOutput(event.chunk, event.stream);
        this.app.transcriptChanged();
        return;
      case 'tool-results':
        for (const result of event.results) {
          const entry = this.tools.get(result.callId);
          if (!entry) continue;
          const output = result.content.map((c) => (c.type === 'text' ? c.text : `[image ${c.mime}]`)).join('');
          const denied = entry.state === 'denied';
          if (!denied) entry.setStatus(result.isError ? 'failed' : 'done');
          entry.setResult(resultSummary(result.name, output, result.isError, entry.streams));
          entry.setFullOutput(output);
          // TUIX-10: the hunks the tool applied, numbered from the file itself.
          if (!result.isError && (result.name === 'edit' || result.name === 'write')) {
            const lines = resultDiffLines(output);
            if (lines) entry.setDiff(lines);
          }
          this.settled.add(entry);
          this.tools.delete(result.callId);
        }
        this.app.transcriptChanged();
        return;
      case 'usage':
        this.usageIn = event.session.inputTokens;
        this.usageOut = event.session.outputTokens;
        this.refreshStatus();
        return;
      case 'note':
        this.push(new NoteEntry(event.text, 'note'));
        return;
      case 'error':
        this.push(new NoteEntry(event.message, 'error'));
        return;
      case 'turn-finished': {
        this.closeRound();
        const note = STOP_NOTES[event.result.stopReason];
        if (note) this.push(new NoteEntry(note, event.result.stopReason === 'interrupted' ? 'note' : 'notice'));
        return;
      }
      case 'compaction-started':
        this.progress('compacting');
        return;
      case 'compaction-finished':
        if (event.outcome === 'applied') this.push(new NoteEntry('Earlier context was compacted into a summary.', 'note'));
        else if (event.outcome === 'exhausted')
          this.push(new NoteEntry(`Compaction failed: ${event.error ?? 'no summary'}`, 'error'));
        if (this.activity === 'idle') this.app.setProgress(undefined);
        else this.progress('waiting');
        return;
      case 'session-saved':
        return;
      case 'activity':
        this.activity = event.activity;
        this.app.setQueuePhase(event.activity);
        if (event.activity === 'idle') this.app.setProgress(undefined);
        else if (event.activity === 'tool_batch') this.progress('running');
        else if (event.activity === 'compacting') this.progress('compacting');
        else if (!this.app.currentProgress) this.progress('waiting');
        return;
      case 'queue':
        this.queued = event.items.length;
        this.app.setQueue(event.items.map((i) => ({ kind: i.kind, text: i.text })));
        this.refreshStatus();
        return;
      case 'command-output':
        if (event.output.kind === 'text') this.push(new PanelEntry(event.output.title, event.output.text));
        else if (event.output.kind === 'error') this.push(new NoteEntry(event.output.text, 'error'));
        this.refreshStatus();
        return;
      case 'session-changed':
        this.closeRound();
        this.tools.clear();
        this.app.transcript.clear();
        {
          const snapshot = this.controller.session.snapshot();
          this.usageIn = snapshot.cumulativeUsage.inputTokens;
          this.usageOut = snapshot.cumulativeUsage.outputTokens;
          const last = snapshot.lastUsage.inputTokens + snapshot.lastUsage.outputTokens;
          this.contextUsed = last > 0 ? last : undefined;
        }
        if (event.replayed) this.replayRecent();
        this.refreshStatus();
        this.app.transcriptChanged();
        return;
      case 'quit':
        this.onQuit?.(event.sessionId);
        return;
      case 'approval-requested':
        this.pendingDenyTool = event.prompt.card.tool;
        this.app.setApproval({
          id: event.prompt.id,
          ...event.prompt.card,
          ...(event.prompt.card.review ? { reviewNote: reviewNoteOf(event.prompt.card.review) } : {}),
          choices: event.prompt.choices,
        });
        this.progress('approval');
        return;
      case 'approval-resolved':
        this.app.setApproval(undefined);
        if (event.answer === 'deny' && this.pendingDenyTool) {
          for (const entry of this.tools.values()) {
            if (entry.data.name === this.pendingDenyTool && entry.state === 'running') {
              entry.setStatus('denied');
              break;
            }
          }
        }
        this.pendingDenyTool = undefined;
        if (this.activity !== 'idle') this.progress('running');
        this.app.transcriptChanged();
        return;
      case 'auto-pass':
        // REV-3: the engine publishes these only while verboseApprovals is on.
        this.push(new PanelEntry('Auto-approved', autoPassCardLines(event.card).join('\n')));
        return;
      case 'question-requested':
        this.app.setQuestion({ id: event.prompt.id, questions: event.prompt.questions });
        this.progress('question');
        return;
      case 'question-resolved':
        this.app.setQuestion(undefined);
        if (this.activity !== 'idle') this.progress('running');
        return;
      case 'mode-changed':
        this.refreshStatus();
        return;
      case 'todos':
        this.app.setTodos(event.items);
        return;
      case 'side-started':
        this.side = [...this.threadEntries(), { question: event.question, answer: '', state: 'waiting' }];
        this.app.setSide(this.side, true);
        return;
      case 'side-thinking':
        this.updateLiveSide((e) => ({ ...e, state: 'thinking' }));
        return;
      case 'side-delta':
        this.updateLiveSide((e) => ({ ...e, answer: e.answer + event.text, state: 'streaming' }));
        return;
      case 'side-finished':
        this.updateLiveSide((e) => ({ ...e, answer: event.answer, state: 'done' }));
        return;
      case 'side-failed':
        this.updateLiveSide((e) => ({ ...e, state: 'failed', error: event.message }));
        return;
      case 'side-open':
        this.side = event.thread.map((x) => ({ question: x.question, answer: x.answer, state: 'done' }));
        this.app.setSide(this.side, true);
        return;
      case 'side-cleared':
        this.side = [];
        this.app.setSide(this.side, false);
        return;
      default:
        return;
    }
  };

  private readonly settled = new WeakSet<ToolEntry>();

  /** The real hunks of an edit/write before it runs (the file as it is now); the tool's own patch wins. */
  private previewChange(callId: string, entry: ToolEntry, name: string, input: unknown): void {
    void changePreview(this.controller.session.workspace, name, input)
      .then((lines) => {
        if (!lines || this.settled.has(entry) || !this.tools.has(callId)) return;
        entry.setDiff(lines);
        this.app.transcriptChanged();
      })
      .catch(() => undefined);
  }

  private threadEntries(): SideEntryView[] {
    return this.controller.sideExchanges.map((x) => ({ question: x.question, answer: x.answer, state: 'done' }));
  }

  private updateLiveSide(change: (entry: SideEntryView) => SideEntryView): void {
    const last = this.side.at(-1);
    if (!last || last.state === 'done' || last.state === 'failed') return;
    this.side = [...this.side.slice(0, -1), change(last)];
    this.app.setSide(this.side);
  }

  /**
   * Resume: the archive's last messages as transcript entries (HIST-5), from a user message on so
   * no result is shown without its call; the messages before them are counted in one note.
   */
  replayRecent(): void {
    const { messages, earlier } = this.controller.session.recentHistory(RESUME_SHOWN_MESSAGES);
    const start = earlier > 0 ? messages.findIndex((m) => m.role === 'user') : 0;
    const shown = start > 0 ? messages.slice(start) : messages;
    const hidden = earlier + (messages.length - shown.length);
    if (hidden > 0) {
      // Grouped by hand: `toLocaleString` would load ICU's number data on the way to ready (issue 22 item 5).
      const count = String(hidden).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
      this.app.transcript.push(
        new NoteEntry(
          `${count} earlier message${hidden === 1 ? ' is' : 's are'} not shown; /export or 'crystal export ${this.controller.session.id}' writes the whole session.`,
        ),
      );
    }
    this.replay(shown);
  }

  /** The archive as transcript entries, laid out only when shown (HIST-5). */
  replay(history: readonly ChatMessage[]): void {
    const cards = new Map<string, ToolEntry>();
    const entries: TranscriptEntry[] = [];
    for (const message of history) {
      if (message.role === 'user') {
        const text = message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
        if (text === '') continue;
        const shown = displayUserText(text);
        entries.push(new UserEntry(shown.text, shown.markers));
      } else if (message.role === 'assistant') {
        for (const part of message.content) {
          if (part.type === 'text' && part.text.trim() !== '') entries.push(AssistantEntry.of(part.text));
          else if (part.type === 'tool-call') {
            const card = new ToolEntry(toolCard(part));
            card.setStatus('done');
            cards.set(part.id, card);
            entries.push(card);
          }
        }
      } else if (message.role === 'tool') {
        for (const part of message.content) {
          if (part.type !== 'tool-result') continue;
          const card = cards.get(part.callId);
          if (!card) continue;
          const output = part.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
          card.setFullOutput(output);
          if (part.isError) {
            card.setStatus('failed');
            card.setResult(resultSummary(part.name, output, true));
          } else {
            card.setResult(resultSummary(part.name, output, false));
            if (part.name === 'edit' || part.name === 'write') {
              const lines = resultDiffLines(output);
              if (lines) card.setDiff(lines);
            }
          }
        }
      }
    }
    this.app.transcript.push(...entries);
  }
}

/** REV-1: the reviewer's pending verdict on the ask card, one line. */
function reviewNoteOf(review: ReviewCardFields): string {
  const levels = [review.risk ? `risk ${review.risk}` : '', review.authorization ? `authorization ${review.authorization}` : '']
    .filter(Boolean)
    .join(', ');
  return `Reviewer: ${review.outcome}${levels ? ` (${levels})` : ''}${review.rationale ? ` · ${review.rationale}` : ''}`;
}
