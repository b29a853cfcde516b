/**
 * The terminal app: state the display owns (composer, scroll, panels, picker), the frame
 * composition, the key map, and frame scheduling. The host sets the view values and pushes
 * transcript entries; input comes back as intents. No engine here (DESIGN.md).
 *
 * - Key batches are handled strictly in order; a Ctrl+V paste is awaited before the next key
 *   (IMG-21), while frames keep painting.
 * - Frames are coalesced (at most one per FRAME_MS while text streams; keys paint at once).
 * - A timer runs only while something is in progress (spinner, elapsed time, retry
 *   countdown); when idle there is no timer at all.
 */
import { Composer } from './composer.js';
import { sanitizeInput } from './sanitize.js';
import { encodeInput, type InputEvent, InputDecoder } from './input-decoder.js';
import type { CtrlCResult, Intents } from './intents.js';
import { loadMarkdown, markdownWarm, warmMarkdown } from './markdown.js';
import { onExactWidths } from './text-width.js';
import { type Frame, Painter } from './painter.js';
import { approvalKey, isFeedbackKey, renderApproval } from './panels/approval-card.js';
import { AssistantEntry, ReasoningEntry, ToolEntry, type TranscriptEntry } from './entries.js';
import { AgentEntry } from './agent-card.js';
import { type InlineFrame, InlinePainter } from './inline-painter.js';
import { ListPicker, type ListPickerOptions } from './panels/list-picker.js';
import { QuestionState } from './panels/question-overlay.js';
import { renderQueuePanel } from './panels/queue-panel.js';
import { invalidateSidePanel, renderSidePanel } from './panels/side-panel.js';
import { SlashPicker } from './panels/slash-picker.js';
import { renderProgress, SPINNER_MS } from './progress.js';
import { renderResizeNotice, tooSmall } from './resize-notice.js';
import { renderStatusBar } from './status-bar.js';
import { paint, type Style, theme } from './style.js';
import { renderTodosBar } from './todos-bar.js';
import { Transcript } from './transcript.js';
import type {
  ApprovalView,
  PickerCommand,
  ProgressView,
  QueueItemView,
  QueuePhase,
  QuestionView,
  SideEntryView,
  StatusView,
  TodoView,
} from './view-model.js';
import { type Span, spansWidth, wrapSpans } from './wrap.js';

/** Minimum time between two frames caused by streaming output. */
export const FRAME_MS = 33;
/**
 * How long a model round waits for its first token before the Markdown lexer is warmed: well after
 * the engine's own work before the request (tens of ms), well before a hosted model's first
 * token (hundreds).
 */
export const WARM_AFTER_MS = 150;
const COMPOSER_MAX_ROWS = 8;
const WHEEL_ROWS = 3;
const HISTORY_LIMIT = 200;

export interface AppHost {
  write(data: string): void;
  size(): { readonly cols: number; readonly rows: number };
}

export interface AppOptions {
  readonly host: AppHost;
  /**
   * Omitted when the frame is painted before the host can act (issue 22: the terminal paints
   * and takes keys before the engine loads): keys that only edit the composer apply at once;
   * the first key that needs the host (Enter, Tab, Esc, Ctrl+C, …) waits, with every key after
   * it, in order, until `connect`.
   */
  readonly intents?: Intents;
  readonly status: StatusView;
  readonly commands?: readonly PickerCommand[];
  /** Home folder shown as `~` in the status bar. */
  readonly home?: string;
  readonly now?: () => number;
  readonly title?: string;
  /**
   * `inline` (TUIX-8): finished entries go to the terminal's scroll-back and only the live
   * region repaints, no mouse capture; `fullscreen`: the alternate-screen view.
   */
  readonly view?: 'inline' | 'fullscreen';
  /** The host calls `loadMarkdown()` itself (once its own start-up is done) instead of `start()`. */
  readonly deferMarkdown?: boolean;
}

/** The notice while a key waits for `connect`. */
const WAITING_FOR_HOST = 'Starting the session… the keys typed so far are kept and handled in order.';

/** Stands in until `connect`; never called, since keys that need the host wait for it. */
const NO_HOST: Intents = {
  submit: () => undefined,
  ctrlC: () => 'clear-composer',
  togglePlan: () => undefined,
  answerApproval: () => undefined,
  answerQuestion: () => undefined,
  pasteImage: async () => ({ error: 'The session is still starting.' }),
  cancelSide: () => undefined,
  clearSideThread: () => undefined,
};

export class TerminalApp {
  readonly transcript = new Transcript();
  readonly composer = new Composer();
  private readonly painter: Painter;
  private readonly inlinePainter: InlinePainter | undefined;
  readonly view: 'inline' | 'fullscreen';
  private readonly decoder = new InputDecoder();
  private readonly picker: SlashPicker;
  private intents: Intents;
  private connected: boolean;
  private readonly deferMarkdown: boolean;
  private readonly host: AppHost;
  private readonly now: () => number;

  private status: StatusView;
  private progress: ProgressView | undefined;
  private queue: readonly QueueItemView[] = [];
  private queuePhase: QueuePhase = 'idle';
  private todos: readonly TodoView[] = [];
  private approval: ApprovalView | undefined;
  /** The line typed for "No, and tell the model what to do instead" (TUIX-12). */
  private approvalFeedback: string | undefined;
  private question: QuestionState | undefined;
  private sideEntries: readonly SideEntryView[] = [];
  private sideOpen = false;
  private sideIndex = 0;
  private noticeText: { text: string; style: Style } | undefined;
  private pickerDismissed = false;
  private list: ListPicker | undefined;
  /** An Esc on an empty idle composer; a second Esc right after it opens the rewind picker (TUIX-1). */
  private escArmed = false;

  private history: string[] = [];
  private historyIndex: number | undefined;
  private draft: ReturnType<Composer['snapshot']> | undefined;

  private events: InputEvent[] = [];
  private held: InputEvent[] = [];
  private draining = false;
  private frameTimer: { cancel(): void } | undefined;
  private frameDue = 0;
  private lastFrameAt = 0;
  private ticker: NodeJS.Timeout | undefined;
  private running = false;
  /** Frames painted (for tests and benchmarks). */
  frames = 0;

  constructor(options: AppOptions) {
    this.host = options.host;
    this.intents = options.intents ?? NO_HOST;
    this.connected = options.intents !== undefined;
    this.deferMarkdown = options.deferMarkdown === true;
    this.status = options.status;
    this.now = options.now ?? Date.now;
    this.painter = new Painter((data) => this.host.write(data));
    this.view = options.view ?? 'fullscreen';
    if (this.view === 'inline') this.inlinePainter = new InlinePainter((data) => this.host.write(data));
    this.picker = new SlashPicker(options.commands ?? []);
    this.picker.onChange = () => this.requestFrame(true);
    this.home = options.home;
    this.title = options.title ?? 'Crystal Code';
  }

  private readonly home: string | undefined;
  private readonly title: string;

  /** Enters the alternate screen and paints the first frame at once. */
  start(): void {
    this.running = true;
    if (this.inlinePainter) this.inlinePainter.enter(this.title);
    else this.painter.enter(this.title);
    this.render();
    if (this.events.length > 0) void this.drain();
    if (!this.deferMarkdown) void this.loadMarkdown();
    this.stopWidthWatch = onExactWidths(() => this.relayout());
  }

  private relayout(): void {
    this.transcript.invalidate();
    invalidateSidePanel();
    this.requestFrame();
  }

  /** Loads the Markdown lexer (once) and lays the transcript out again with it. */
  loadMarkdown(): Promise<void> {
    return loadMarkdown().then(() => this.relayout());
  }

  /**
   * The host is ready (see `AppOptions.intents`): its intents and its slash commands; the keys
   * that waited are handled now, in the order they were typed.
   */
  connect(intents: Intents, commands?: readonly PickerCommand[]): void {
    this.intents = intents;
    this.connected = true;
    if (commands) this.picker.setCommands(commands);
    if (this.noticeText?.text === WAITING_FOR_HOST) this.noticeText = undefined;
    this.requestFrame(true);
    void this.drain();
  }

  get isConnected(): boolean {
    return this.connected;
  }

  /**
   * Before `connect`: whether a key only edits the composer (applied at once) or needs the host
   * (it waits). Conservative: anything that might call an intent waits.
   */
  private local(event: InputEvent): boolean {
    switch (event.type) {
      case 'text':
        return !(event.text === '?' && this.composer.isEmpty);
      case 'paste':
      case 'alt':
      case 'wheel':
        return true;
      case 'ctrl':
        return 'jwaeukdl'.includes(event.letter);
      case 'key':
        if (event.name === 'enter') return event.alt === true;
        return ['left', 'right', 'home', 'end', 'backspace', 'delete', 'up', 'down', 'pageup', 'pagedown'].includes(event.name);
      default:
        return false;
    }
  }

  private stopWidthWatch: (() => void) | undefined;

  /** Stops timers and restores the terminal. */
  stop(): void {
    this.halt();
    // Inline: everything still on screen goes to the scroll-back, so the conversation stays.
    if (this.inlinePainter) this.inlinePainter.leave(this.takeCommitted(this.width(), true));
    else this.painter.leave();
  }

  /**
   * Stops like `stop`, but leaves nothing behind: the full-screen view leaves the alternate
   * screen, the inline view erases what it painted (a start-up error follows, issue 22).
   */
  abandon(): void {
    if (!this.inlinePainter) {
      this.stop();
      return;
    }
    this.halt();
    this.inlinePainter.discard(this.host.size().rows);
  }

  /** No more frames: timers cleared, waiters for a painted frame woken. */
  private halt(): void {
    this.running = false;
    this.stopWidthWatch?.();
    this.frameTimer?.cancel();
    this.frameTimer = undefined;
    for (const wake of this.paintedWaiters.splice(0)) wake();
    this.stopTicker();
    if (this.warmTimer) clearTimeout(this.warmTimer);
    this.warmTimer = undefined;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Whether any timer is armed (a pending frame or the spinner); none while idle. */
  get timersActive(): boolean {
    return this.frameTimer !== undefined || this.ticker !== undefined;
  }

  // ---- view values set by the host -------------------------------------------------------

  setStatus(status: StatusView): void {
    this.status = status;
    this.requestFrame();
  }

  setProgress(progress: ProgressView | undefined): void {
    this.progress = progress;
    if (progress?.kind === 'waiting') this.warmMarkdownWhileWaiting();
    this.requestFrame();
  }

  private warmTimer: NodeJS.Timeout | undefined;

  /**
   * The Markdown lexer's first use costs 40-60 ms (markdown.ts, `warmMarkdown`). A new session's
   * first reply would pay it in its first frame; a request still waiting for its first token
   * WARM_AFTER_MS after its round started is idle time (the request is on the wire by then), so
   * it is paid there. Nothing happens once any text was lexed (a resumed transcript, a reply).
   */
  private warmMarkdownWhileWaiting(): void {
    if (this.warmTimer || markdownWarm() || !this.running) return;
    this.warmTimer = setTimeout(() => {
      this.warmTimer = undefined;
      if (this.running && this.progress?.kind === 'waiting') warmMarkdown();
    }, WARM_AFTER_MS);
    this.warmTimer.unref?.();
  }

  get currentProgress(): ProgressView | undefined {
    return this.progress;
  }

  setQueue(items: readonly QueueItemView[]): void {
    this.queue = items;
    this.requestFrame();
  }

  /** What the session is doing (the queue caption says when the queue goes). */
  setQueuePhase(phase: QueuePhase): void {
    if (this.queuePhase === phase) return;
    this.queuePhase = phase;
    if (this.queue.length > 0) this.requestFrame();
  }

  setTodos(items: readonly TodoView[]): void {
    this.todos = items;
    this.requestFrame();
  }

  setApproval(card: ApprovalView | undefined): void {
    if (card?.id !== this.approval?.id) this.approvalFeedback = undefined;
    this.approval = card;
    this.requestFrame(true);
  }

  setQuestion(view: QuestionView | undefined): void {
    this.question = view ? new QuestionState(view) : undefined;
    this.requestFrame(true);
  }

  /** The `/btw` thread; `open` shows the panel on its newest entry. */
  setSide(entries: readonly SideEntryView[], open?: boolean): void {
    const followLast = this.sideIndex >= this.sideEntries.length - 1;
    this.sideEntries = entries;
    if (open) {
      this.sideOpen = true;
      this.sideIndex = Math.max(0, entries.length - 1);
    } else if (followLast) this.sideIndex = Math.max(0, entries.length - 1);
    this.sideIndex = Math.min(this.sideIndex, Math.max(0, entries.length - 1));
    this.requestFrame();
  }

  get sidePanelOpen(): boolean {
    return this.sideOpen;
  }

  /** A one-line message above the status bar until the next key (clipboard errors: CLIP-6). */
  notice(text: string, tone: 'info' | 'error' = 'info'): void {
    this.noticeText = { text, style: tone === 'error' ? theme.error : theme.warn };
    this.requestFrame(true);
  }

  /** Opens a searchable list over the composer (TUIX-11); it owns the keys until closed. */
  openList(options: ListPickerOptions): void {
    this.list = new ListPicker(options);
    this.requestFrame(true);
  }

  get listOpen(): ListPicker | undefined {
    return this.list;
  }

  /** Puts text in the composer for editing (a picked earlier message). */
  editText(text: string): void {
    this.composer.setText(text);
    this.composerEdited();
    this.requestFrame(true);
  }

  setHistory(entries: readonly string[]): void {
    this.history = entries.slice(-HISTORY_LIMIT);
  }

  /** The transcript changed (the host pushed or streamed into entries). */
  transcriptChanged(): void {
    this.requestFrame();
  }

  // ---- input -----------------------------------------------------------------------------

  /** Raw terminal input. Events are handled in order; an async key (Ctrl+V) holds the rest. */
  input(data: string): void {
    for (const event of this.decoder.feed(data)) this.events.push(event);
    void this.drain();
  }

  /**
   * The keys read but not yet handled, as terminal bytes, and forgets them: when the frame
   * stops to let the host read the terminal (`/login`), the keys typed after the Enter that
   * stopped it belong to the host's prompt, not to the composer.
   */
  takePendingInput(): string {
    const rest = encodeInput(this.events);
    this.events = [];
    return rest;
  }

  /** Resolves once every queued key has been handled (tests). */
  async settled(): Promise<void> {
    const waiting = (): boolean => this.events.length > 0 && (this.connected || this.local(this.events[0] as InputEvent));
    while (this.draining || (this.running && waiting())) await new Promise((r) => setImmediate(r));
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      // A stopped frame (the host reads the terminal itself, `/login`) leaves the rest unread.
      while (this.events.length > 0 && this.running) {
        // Before the host is connected, a key that needs it waits (with the rest) for `connect`.
        if (!this.connected && !this.local(this.events[0] as InputEvent)) {
          this.notice(WAITING_FOR_HOST);
          break;
        }
        const event = this.events.shift() as InputEvent;
        const { cols, rows } = this.host.size();
        if (tooSmall(cols, rows) && !(event.type === 'ctrl' && event.letter === 'c')) {
          // TUIX-9: keys typed while the window is too small are kept and applied once it is not.
          this.held.push(event);
          continue;
        }
        const pending = this.handle(event);
        this.requestFrame(true);
        if (pending) {
          await pending;
          this.requestFrame(true);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  resize(): void {
    const { cols, rows } = this.host.size();
    if (this.held.length > 0 && !tooSmall(cols, rows)) {
      this.events.unshift(...this.held);
      this.held = [];
      void this.drain();
    }
    this.painter.invalidate();
    this.inlinePainter?.invalidate();
    this.requestFrame(true);
  }

  private width(): number {
    return Math.max(1, this.host.size().cols - 1);
  }

  private viewportHeight(): number {
    return Math.max(1, this.host.size().rows - 6);
  }

  private handle(event: InputEvent): Promise<void> | undefined {
    const isEsc = event.type === 'key' && event.name === 'escape';
    const armed = this.escArmed;
    if (!isEsc) this.escArmed = false;
    if (this.noticeText && !(event.type === 'ctrl' && event.letter === 'c')) this.noticeText = undefined;
    if (this.scrollKey(event)) return undefined;
    if (this.approval) {
      if (event.type === 'ctrl' && event.letter === 'c') return void this.ctrlC();
      if (this.approvalFeedback !== undefined) return void this.feedbackKey(event, this.approval);
      if (isFeedbackKey(event, this.approval)) {
        this.approvalFeedback = '';
        return undefined;
      }
      const choice = approvalKey(event, this.approval);
      if (choice) this.intents.answerApproval(this.approval.id, choice);
      return undefined;
    }
    if (this.question) {
      if (event.type === 'ctrl' && event.letter === 'c') return void this.ctrlC();
      const outcome = this.question.key(event);
      if (outcome) {
        const id = this.question.view.id;
        this.question = undefined;
        this.intents.answerQuestion(id, outcome === 'dismissed' ? 'dismissed' : outcome.answers);
      }
      return undefined;
    }
    if (this.list) {
      if (event.type === 'ctrl' && event.letter === 'c') {
        // Ctrl+C keeps its rules (QUEUE-12/13): a busy turn is interrupted; at idle it closes the list.
        if (this.intents.interrupt?.()) return undefined;
        this.list = undefined;
        return undefined;
      }
      const list = this.list;
      if (list.key(event)) {
        if (this.list === list) this.list = undefined;
      }
      return undefined;
    }
    if (this.sideOpen) return void this.sideKey(event);
    if (isEsc) return void this.escape(armed);
    return this.composerKey(event);
  }

  private feedbackKey(event: InputEvent, card: ApprovalView): void {
    const text = this.approvalFeedback ?? '';
    if (event.type === 'key') {
      if (event.name === 'escape') this.approvalFeedback = undefined;
      else if (event.name === 'backspace') this.approvalFeedback = [...text].slice(0, -1).join('');
      else if (event.name === 'enter' && text.trim() !== '') {
        this.approvalFeedback = undefined;
        this.intents.answerApproval(card.id, 'deny', text.trim());
      }
      return;
    }
    if (event.type === 'ctrl' && event.letter === 'u') this.approvalFeedback = '';
    else if (event.type === 'text' || event.type === 'paste')
      this.approvalFeedback = text + sanitizeInput(event.text).replace(/\n+/g, ' ');
  }

  /** Ctrl+O (TUIX-7): expands or collapses the newest tool card that has more to show. */
  private toggleToolOutput(): void {
    const entries = this.transcript.all;
    const printed = this.printedIndex();
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i];
      // AGENT-4: a child's card expands the same way (inline: a copy is printed below).
      if (entry instanceof AgentEntry && (entry.expandable || entry.expanded)) {
        if (i <= printed) this.transcript.push(entry.expandedCopy());
        else entry.setExpanded(!entry.expanded);
        this.notice(
          i <= printed || entry.expanded ? 'Expanded the agent card · Ctrl+O collapses it' : 'Collapsed the agent card',
        );
        return;
      }
      if (entry instanceof ToolEntry && i <= printed && entry.expandable) {
        // Inline: the card is in the scroll-back already; its whole output is printed below.
        const copy = new ToolEntry(entry.data);
        copy.copyResultOf(entry);
        copy.setExpanded(true);
        this.transcript.push(copy);
        this.notice('Printed the whole output below; the scroll-back keeps it.');
        return;
      }
      if (entry instanceof ToolEntry && (entry.expandable || entry.expanded)) {
        entry.setExpanded(!entry.expanded);
        if (entry.expanded) this.notice('Expanded the last tool output · Ctrl+O collapses it');
        return;
      }
    }
    this.notice('No tool output to expand.');
  }

  private scrollKey(event: InputEvent): boolean {
    // Inline: the terminal's own scroll-back scrolls (Shift+PageUp, the wheel); keys stay keys.
    if (this.inlinePainter) return false;
    const page = Math.max(1, this.viewportHeight() - 1);
    let delta = 0;
    if (event.type === 'wheel') delta = event.direction === 'up' ? -WHEEL_ROWS : WHEEL_ROWS;
    else if (event.type === 'key' && event.name === 'pageup') delta = -page;
    else if (event.type === 'key' && event.name === 'pagedown') delta = page;
    else if (event.type === 'key' && event.ctrl && (event.name === 'up' || event.name === 'down'))
      delta = event.name === 'up' ? -1 : 1;
    else return false;
    this.transcript.scroll(delta, this.width(), this.lastViewport);
    return true;
  }

  /**
   * Esc (TUIX-1): closes the slash picker; interrupts a running turn (the queue and the
   * composer text stay); at idle clears the composer; a second Esc on an empty composer
   * opens the list of earlier messages to edit and send again.
   */
  private escape(armed: boolean): void {
    this.escArmed = false;
    if (this.pickerOpen()) {
      this.pickerDismissed = true;
      return;
    }
    if (this.intents.interrupt?.()) return;
    if (!this.composer.isEmpty) {
      this.clearComposer();
      return;
    }
    if (!armed) {
      this.escArmed = true;
      return;
    }
    // CKPT-3: the host opens the rewind picker (panels/rewind-picker.ts) when checkpoints are on.
    if (this.intents.rewind?.()) return;
    this.openRewind();
  }

  private openRewind(): void {
    const messages = this.intents.userMessages?.() ?? [];
    const items = messages
      .map((text, i) => ({ value: String(i), label: text.replace(/\s*\n\s*/g, ' ⏎ '), detail: `#${i + 1}` }))
      .reverse();
    this.openList({
      title: 'Edit an earlier message',
      items,
      empty: 'No earlier messages in this conversation.',
      onPick: (value) => {
        const text = messages[Number(value)];
        if (text !== undefined) this.editText(text);
      },
    });
  }

  private ctrlC(): CtrlCResult {
    const result = this.intents.ctrlC(this.composer.isEmpty);
    if (result === 'clear-composer') this.clearComposer();
    else if (result === 'exit-armed') this.notice('Press Ctrl+C again to exit.');
    return result;
  }

  private sideKey(event: InputEvent): void {
    if (event.type === 'ctrl' && event.letter === 'c') {
      this.intents.cancelSide();
      this.sideOpen = false;
      return;
    }
    if (event.type === 'key') {
      if (event.name === 'escape' || event.name === 'enter') this.sideOpen = false;
      else if (event.name === 'left') this.sideIndex = Math.max(0, this.sideIndex - 1);
      else if (event.name === 'right') this.sideIndex = Math.min(Math.max(0, this.sideEntries.length - 1), this.sideIndex + 1);
      return;
    }
    if (event.type !== 'text') return;
    if (event.text === ' ') this.sideOpen = false;
    else if (event.text === 'x') {
      this.intents.clearSideThread();
      this.sideOpen = false;
    } else if (event.text === 'i') {
      const entry = this.sideEntries[this.sideIndex];
      if (entry && entry.answer !== '') {
        this.composer.insertText(entry.answer);
        this.composerEdited();
      }
      this.sideOpen = false;
    }
  }

  private composerKey(event: InputEvent): Promise<void> | undefined {
    const c = this.composer;
    const imagesBefore = c.imageNumbers().length;
    switch (event.type) {
      case 'ctrl':
        return this.ctrlKey(event.letter);
      case 'alt':
        if (event.text === 'b') c.wordLeft();
        else if (event.text === 'f') c.wordRight();
        else if (event.text === 'd') {
          const at = c.cursor;
          c.wordRight();
          while (c.cursor > at) c.backspace();
        }
        break;
      case 'paste':
        c.insertPaste(event.text);
        this.composerEdited();
        break;
      case 'text':
        if (event.text === '?' && c.isEmpty) {
          this.intents.submit('/help', []);
          return undefined;
        }
        c.insertText(event.text);
        this.composerEdited();
        break;
      case 'wheel':
        break;
      case 'key': {
        const pending = this.namedKey(event);
        if (pending) return pending;
        break;
      }
    }
    if (c.imageNumbers().length !== imagesBefore) this.intents.imagesChanged?.(c.imageNumbers());
    return undefined;
  }

  private namedKey(event: Extract<InputEvent, { type: 'key' }>): Promise<void> | undefined {
    const c = this.composer;
    const width = this.composerWidth();
    switch (event.name) {
      case 'enter':
        if (event.alt) {
          c.newline();
          this.composerEdited();
        } else this.enter();
        return;
      case 'tab':
        // TUIX-2: Tab completes and never changes the mode (Shift+Tab does).
        if (this.pickerOpen()) this.acceptPick();
        else return this.completeWord();
        return;
      case 'backtab':
        this.intents.togglePlan();
        return;
      case 'up':
      case 'down': {
        const dir = event.name === 'up' ? -1 : 1;
        if (this.pickerOpen()) this.picker.move(dir);
        else if (!c.moveVertical(dir, width)) this.browseHistory(dir);
        return;
      }
      case 'left':
        if (event.ctrl || event.alt) c.wordLeft();
        else c.left();
        return;
      case 'right':
        if (event.ctrl || event.alt) c.wordRight();
        else c.right();
        return;
      case 'home':
        c.home();
        return;
      case 'end':
        c.end();
        return;
      case 'backspace':
        if (event.alt || event.ctrl) c.deleteWordBack();
        else c.backspace();
        this.composerEdited();
        return;
      case 'delete':
        c.deleteForward();
        this.composerEdited();
        return;
      default:
        return;
    }
  }

  private ctrlKey(letter: string): Promise<void> | undefined {
    const c = this.composer;
    const before = c.imageNumbers().length;
    switch (letter) {
      case 'c':
        this.ctrlC();
        break;
      case 'j':
        c.newline();
        this.composerEdited();
        break;
      case 'v':
        return this.pasteImage();
      case 'w':
        c.deleteWordBack();
        this.composerEdited();
        break;
      case 'a':
        c.home();
        break;
      case 'e':
        c.end();
        break;
      case 'u':
        c.deleteToLineStart();
        this.composerEdited();
        break;
      case 'k':
        c.deleteToLineEnd();
        this.composerEdited();
        break;
      case 'd':
        c.deleteForward();
        this.composerEdited();
        break;
      case 'l':
        this.painter.invalidate();
        this.inlinePainter?.invalidate();
        break;
      case 'o':
        this.toggleToolOutput();
        break;
      default:
        break;
    }
    if (c.imageNumbers().length !== before) this.intents.imagesChanged?.(c.imageNumbers());
    return undefined;
  }

  /** Ctrl+V: the host reserves the number, reads and attaches; the marker lands at the cursor. */
  private async pasteImage(): Promise<void> {
    this.notice('Reading the clipboard…');
    const result = await this.intents.pasteImage();
    if ('number' in result) {
      this.noticeText = undefined;
      this.composer.insertImage(result.number);
      this.composerEdited();
      this.intents.imagesChanged?.(this.composer.imageNumbers());
    } else this.notice(result.error, 'error');
  }

  private enter(): void {
    const c = this.composer;
    if (this.pickerOpen() && this.picker.acceptsOnEnter(c.text)) {
      this.acceptPick();
      return;
    }
    if (c.takeTrailingBackslash()) {
      c.newline();
      this.composerEdited();
      return;
    }
    const { text, spans } = c.value();
    if (text.trim() !== '' && spans.length === 0) this.remember(text);
    // The submit takes the attached images along: they are not deleted drafts (IMG-7).
    this.clearComposer(false);
    this.transcript.scrollToBottom();
    this.intents.submit(text, spans);
  }

  private remember(text: string): void {
    if (this.history.at(-1) !== text) this.history.push(text);
    if (this.history.length > HISTORY_LIMIT) this.history.shift();
    this.intents.remember?.(text);
  }

  private browseHistory(dir: -1 | 1): void {
    if (this.history.length === 0) return;
    if (this.historyIndex === undefined) {
      if (dir === 1) return;
      this.draft = this.composer.snapshot();
      this.historyIndex = this.history.length - 1;
    } else {
      const next = this.historyIndex + dir;
      if (next < 0) return;
      if (next >= this.history.length) {
        this.historyIndex = undefined;
        if (this.draft) this.composer.restore(this.draft);
        this.draft = undefined;
        this.afterEdit();
        return;
      }
      this.historyIndex = next;
    }
    this.composer.setText(this.history[this.historyIndex] as string);
    this.afterEdit();
  }

  private clearComposer(reportImages = true): void {
    const had = reportImages && this.composer.imageNumbers().length > 0;
    this.composer.clear();
    this.historyIndex = undefined;
    this.draft = undefined;
    this.afterEdit();
    if (had) this.intents.imagesChanged?.([]);
  }

  private composerEdited(): void {
    this.historyIndex = undefined;
    this.afterEdit();
  }

  private afterEdit(): void {
    this.pickerDismissed = false;
    this.picker.update(this.composer.text);
  }

  private pickerOpen(): boolean {
    return this.picker.open && !this.pickerDismissed;
  }

  /** Tab outside the slash picker: completes the `@path` word before the cursor (TUIX-5). */
  private async completeWord(): Promise<void> {
    const c = this.composer;
    const before = c.content.slice(0, c.cursor);
    let start = before.length;
    while (start > 0 && typeof before[start - 1] === 'string' && !/\s/.test(before[start - 1] as string)) start--;
    const word = before.slice(start).join('');
    if (!word.startsWith('@') || !this.intents.completePath) return;
    const query = word.slice(1);
    const found = await this.intents.completePath(query);
    if (found.length === 0) {
      this.notice(`No file matches @${query}.`);
      return;
    }
    const replace = (path: string): void => {
      // The word is still where it was (keys wait while the completion runs).
      for (let i = 0; i < word.length; i++) c.backspace();
      c.insertText(`@${path}${path.endsWith('/') ? '' : ' '}`);
      this.composerEdited();
      this.requestFrame(true);
    };
    if (found.length === 1) {
      replace(found[0] as string);
      return;
    }
    this.openList({
      title: `Files matching @${query}`,
      items: found.map((path) => ({ value: path, label: path })),
      onPick: replace,
    });
  }

  private acceptPick(): void {
    const pick = this.picker.selection;
    if (!pick) return;
    this.composer.setText(pick.insert);
    this.afterEdit();
  }

  private composerWidth(): number {
    return Math.max(4, this.width() - this.promptPrefix().reduce((w, s) => w + s.text.length, 0));
  }

  private promptPrefix(): Span[] {
    const plan = this.status.mode === 'plan';
    const first = this.composer.content[0];
    if (first === '!' && this.composer.length > 1)
      return [
        { text: 'Shell', style: theme.warn },
        { text: ' › ', style: theme.muted },
      ];
    return [
      { text: plan ? 'Plan' : 'Work', style: plan ? theme.plan : theme.work },
      { text: ' › ', style: theme.muted },
    ];
  }

  // ---- frames ----------------------------------------------------------------------------

  /** Schedules a frame; `urgent` paints on the next turn of the event loop (keys). */
  requestFrame(urgent = false): void {
    if (!this.running || (this.frameTimer && !urgent)) return;
    const now = this.now();
    const due = urgent ? now : Math.max(now, this.lastFrameAt + FRAME_MS);
    if (this.frameTimer) {
      if (due >= this.frameDue) return;
      this.frameTimer.cancel();
    }
    this.frameDue = due;
    const paint = (): void => {
      this.frameTimer = undefined;
      this.render();
    };
    // A frame due now (a key's) is painted in this turn of the event loop: a timer of 0 waits at
    // least 1 ms, a key's echo included (issue 22).
    if (due <= now) {
      const immediate = setImmediate(paint);
      this.frameTimer = { cancel: () => clearImmediate(immediate) };
    } else {
      const timer = setTimeout(paint, due - now);
      this.frameTimer = { cancel: () => clearTimeout(timer) };
    }
  }

  private lastViewport = 1;
  private paintedWaiters: (() => void)[] = [];

  /**
   * Resolves once no frame is waiting to be painted: a host that does long work in steps (the
   * engine loading after the first frame, issue 22) lets a typed key echo between them.
   */
  painted(): Promise<void> {
    if (!this.running || !this.frameTimer) return Promise.resolve();
    if (this.frameDue <= this.now()) {
      // Due already (a key's frame): painted now rather than at the end of this turn.
      this.frameTimer.cancel();
      this.frameTimer = undefined;
      this.render();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.paintedWaiters.push(resolve));
  }

  /** Composes and paints one frame now. */
  render(): void {
    if (!this.running) return;
    const now = this.now();
    this.lastFrameAt = now;
    const { cols, rows } = this.host.size();
    if (this.inlinePainter) this.inlinePainter.paint(this.composeInline(cols, rows, now), cols, rows);
    else this.painter.paint(this.compose(cols, rows, now), cols, rows);
    this.frames++;
    this.updateTicker();
    if (this.paintedWaiters.length > 0) for (const wake of this.paintedWaiters.splice(0)) wake();
  }

  private needsTicker(): boolean {
    if (this.progress) return true;
    const entry = this.sideEntries[this.sideIndex];
    return (
      this.sideOpen &&
      entry !== undefined &&
      (entry.state === 'waiting' || entry.state === 'thinking' || entry.state === 'streaming')
    );
  }

  /**
   * The spinner's step, a one-shot timer set again by every frame: every frame draws the spinner
   * and its time from the clock, so while frames come (a streaming reply paints one per read,
   * every 33-34 ms) the spinner rides along and its timer never fires; when they stop (a long
   * tool call, a stall, the wait for the first token) it paints each step, as an interval did.
   * An interval woke the process ten times a second in the middle of a stream to find the step
   * already painted (issue 22: every wake-up is a trip through the event loop and the timer
   * lists). Cleared and set, not `refresh()`ed: a refreshed Node timer still wakes the loop at its
   * old due time, while a cleared one leaves the timer queue.
   */
  private updateTicker(): void {
    if (this.needsTicker()) {
      if (this.ticker) clearTimeout(this.ticker);
      this.ticker = setTimeout(this.tick, SPINNER_MS);
    } else this.stopTicker();
  }

  private readonly tick = (): void => {
    this.ticker = undefined;
    this.requestFrame();
  };

  private stopTicker(): void {
    if (this.ticker) clearTimeout(this.ticker);
    this.ticker = undefined;
  }

  /** The rows under the transcript: overlays, panels, progress, status bar and composer. */
  private composeBottom(cols: number, rows: number, now: number): { bottom: string[]; cursor?: { row: number; col: number } } {
    const width = Math.max(1, cols - 1);
    const composer = this.composerRows(width, rows);
    const composerRows = composer.rows;
    const above: string[] = [];
    const overlayRoom = Math.max(3, Math.floor(rows * 0.6));
    if (this.approval) above.push(...renderApproval(this.approval, width, overlayRoom, this.approvalFeedback));
    else if (this.question) above.push(...this.question.render(width, overlayRoom));
    else if (this.list) above.push(...this.list.render(width, Math.min(14, overlayRoom)));
    else if (this.pickerOpen()) above.push(...this.picker.render(width));
    if (this.sideOpen)
      above.push(...renderSidePanel(this.sideEntries, this.sideIndex, width, Math.max(4, Math.floor(rows * 0.4)), now));
    above.push(...renderQueuePanel(this.queue, width, this.queuePhase));
    const todos = renderTodosBar(this.todos, width);
    if (todos) above.push(todos);
    if (this.noticeText)
      above.push(...wrapSpans([{ text: this.noticeText.text, style: this.noticeText.style }], { width }).slice(0, 2));
    if (this.progress) above.push(renderProgress(this.progress, now));
    const all = [...above, renderStatusBar(this.status, cols, this.home), ...composerRows];
    const bottom = all.slice(Math.max(0, all.length - rows));
    const overlayOwnsKeys =
      this.approval !== undefined || this.question !== undefined || this.list !== undefined || this.sideOpen;
    const cursor = overlayOwnsKeys
      ? undefined
      : {
          row: bottom.length - composerRows.length + composer.cursorRow,
          col: Math.min(cols - 1, composer.cursorCol),
        };
    return { bottom, cursor };
  }

  /** The empty composer's one row, for the prompt prefix it was painted with. */
  private emptyComposer: { mode: StatusView['mode']; row: string; prefixWidth: number } | undefined;

  /**
   * The composer's rows (the bottom of the frame) with the Plan/Work prompt prefix, and the
   * cursor's row among them and column. An empty composer, the usual state while a reply
   * streams, is one row that changes only with the prefix: it is painted once, not per frame.
   */
  private composerRows(width: number, rows: number): { rows: string[]; cursorRow: number; cursorCol: number } {
    if (this.composer.isEmpty) {
      // The prompt prefix of an empty composer is the mode's (promptPrefix).
      if (this.emptyComposer?.mode !== this.status.mode) {
        const prefix = this.promptPrefix();
        this.emptyComposer = {
          mode: this.status.mode,
          row: paintRow([...prefix, { text: 'Type a message, / for commands', style: theme.muted }]),
          prefixWidth: spansWidth(prefix),
        };
      }
      return { rows: [this.emptyComposer.row], cursorRow: 0, cursorCol: this.emptyComposer.prefixWidth };
    }
    const prefix = this.promptPrefix();
    const prefixWidth = spansWidth(prefix);
    const layout = this.composer.layout(Math.max(4, width - prefixWidth));
    const maxComposer = Math.min(COMPOSER_MAX_ROWS, Math.max(1, Math.floor(rows / 4)));
    const firstShown = Math.max(0, Math.min(layout.cursorRow - maxComposer + 1, layout.rows.length - maxComposer));
    const shownRows = layout.rows.slice(firstShown, firstShown + maxComposer);
    const indent: Span = { text: ' '.repeat(prefixWidth) };
    return {
      rows: shownRows.map((spans, i) => paintRow(i === 0 && firstShown === 0 ? [...prefix, ...spans] : [indent, ...spans])),
      cursorRow: layout.cursorRow - firstShown,
      cursorCol: prefixWidth + layout.cursorCol,
    };
  }

  /** The whole frame, top to bottom (TUI-1). */
  compose(cols: number, rows: number, now: number): Frame {
    if (tooSmall(cols, rows)) return { rows: renderResizeNotice(cols, rows) };
    const width = Math.max(1, cols - 1);
    const { bottom, cursor } = this.composeBottom(cols, rows, now);
    const viewport = Math.max(1, rows - bottom.length);
    this.lastViewport = viewport;
    const transcriptRows = this.transcript.visible(width, viewport);
    const frameRows = [...transcriptRows];
    while (frameRows.length < viewport) frameRows.push('');
    if (this.transcript.scrolledBack)
      frameRows[viewport - 1] = paint('  ↓ more below · PageDown or wheel to follow', theme.muted);
    frameRows.push(...bottom);
    const top = frameRows.length - rows;
    return {
      rows: frameRows.slice(Math.max(0, top)),
      cursor: cursor && { row: cursor.row + viewport - Math.max(0, top), col: cursor.col },
    };
  }

  // ---- inline view (TUIX-8) --------------------------------------------------------------

  /** The last transcript entry written to the scroll-back, and where it was. */
  private printedLast: TranscriptEntry | undefined;
  private printedAt = -1;

  /** Index of the last printed entry now (-1: none, or the transcript was cleared). O(1) unless entries moved. */
  private printedIndex(): number {
    if (!this.printedLast) return -1;
    const entries = this.transcript.all;
    if (entries[this.printedAt] !== this.printedLast) this.printedAt = entries.lastIndexOf(this.printedLast);
    return this.printedAt;
  }

  /** Whether an entry is done changing, so it can go to the scroll-back. */
  private settledEntry(entry: TranscriptEntry, isLast: boolean): boolean {
    if (entry instanceof AssistantEntry) return !entry.streaming;
    if (entry instanceof ToolEntry) return entry.state !== 'running' && entry.state !== 'pending';
    if (entry instanceof AgentEntry) return !entry.running;
    if (entry instanceof ReasoningEntry) return !isLast || this.progress === undefined;
    return true;
  }

  /** Rows of the entries from the first not yet printed; `all` takes unsettled ones too (exit). */
  private takeCommitted(width: number, all: boolean): string[] {
    const entries = this.transcript.all;
    const found = this.printedIndex();
    let i = found + 1;
    const out: string[] = [];
    for (; i < entries.length; i++) {
      const entry = entries[i] as TranscriptEntry;
      if (!all && !this.settledEntry(entry, i === entries.length - 1)) break;
      const rows = entry.rows(width);
      if (i > 0 || found >= 0) out.push('');
      for (let r = 0; r < rows.count; r++) out.push(rows.row(r));
      // The scroll-back holds its rows now: the layout is not kept, so a long session's memory
      // (and the collector's work on every frame) does not grow with what was printed.
      entry.invalidate?.();
      this.printedLast = entry;
      this.printedAt = i;
    }
    return out;
  }

  composeInline(cols: number, rows: number, now: number): InlineFrame {
    if (tooSmall(cols, rows)) return { committed: [], live: renderResizeNotice(cols, rows).filter((r) => r !== '') };
    // The transcript was cleared (/clear, /resume): the screen starts over (the scroll-back stays).
    if (this.printedLast && this.printedIndex() === -1) {
      this.printedLast = undefined;
      this.inlinePainter?.clearScreen();
    }
    const width = Math.max(1, cols - 1);
    const committed = this.takeCommitted(width, false);
    const { bottom, cursor } = this.composeBottom(cols, rows, now);
    // The entries still changing: their last rows, as many as fit above the bottom rows.
    const room = Math.max(0, rows - 1 - bottom.length);
    const entries = this.transcript.all;
    const from = this.printedIndex() + 1;
    const live: string[] = [];
    for (let i = entries.length - 1; i >= from && live.length < room; i--) {
      const r = (entries[i] as TranscriptEntry).rows(width);
      const take = Math.min(r.count, room - live.length);
      const part: string[] = [];
      for (let k = r.count - take; k < r.count; k++) part.push(r.row(k));
      live.unshift(...part);
      if (live.length < room) live.unshift('');
    }
    if (committed.length === 0 && from === 0 && live[0] === '') live.shift();
    const rowsOut = [...live.slice(Math.max(0, live.length - room)), ...bottom];
    return { committed, live: rowsOut, cursor: cursor && { row: cursor.row + rowsOut.length - bottom.length, col: cursor.col } };
  }
}

function paintRow(spans: readonly Span[]): string {
  let out = '';
  for (const s of spans) out += paint(s.text, s.style);
  return out;
}
