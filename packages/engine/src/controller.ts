/**
 * The session controller: the one engine face the terminal and the Web host drive (DESIGN.md).
 * An explicit state machine (idle, turn, tool batch, compacting) owns the follow-up queue and
 * command scheduling of QUEUE-1..13, so surfaces only forward input and render state.
 */
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-write.js';
import {
  type CommandOutput,
  type CommandSpec,
  helpText,
  isCommand,
  type ParsedCommand,
  parseCommand,
  withCustomCommands,
} from './commands/registry.js';
import { customCommandSpecs, discoverCommands, expandCommand, matchCustomCommand } from './extensions/commands.js';
import type { ExtensionPlaces } from './extensions/search-paths.js';
import { runShellEscape, shellContextBlock, shellEscapeCommand } from './shell-escape.js';
import type { EngineEvent, TurnResult } from './events.js';
import type { ToolContext } from '@crystal/core';
import type {
  ApprovalAnswer,
  ApprovalCard,
  ApprovalReply,
  ApprovalMode,
  ApprovalRequest,
  AutoPassCard,
} from './approval/index.js';
import { APPROVAL_MODES } from './approval/index.js';
import { ApprovalModel, type ApprovalModelFlags, approvalModelSettings, createReviewer } from './approval/reviewer/index.js';
import { parseApprovalMode } from './approval/policy.js';
import type { ToolRestriction } from './extensions/allowed-tools.js';
import { deliverPrompt, type SessionStartSource } from './extensions/lifecycle-hooks.js';
import { Session, type SessionOptions, type TurnHooks } from './session.js';
import { type MarkerSpan, taggedMarker, taggedMarkerNumbers } from './images/index.js';
import { submittedText } from './message-admission.js';
import { UsageError } from './errors.js';
import type { Question, QuestionAnswers, TodoItem } from './tools/builtin/index.js';
import { assembleWorkspaceTools, type WorkspaceTools } from './workspace-tools.js';
import { attachMcpResources, mcpPromptCommandOf, mcpStatusText } from './mcp/mcp-commands.js';
import { catalogOf } from './catalog.js';
import { persistPreferences, resolveModelArgument } from './preferences.js';
import { markWarmStart, THINKING_EFFORTS, type ThinkingEffort } from '@crystal/core';
import { listSessions } from './session-store.js';
import { SIDE_THREAD_LIMIT, type SideEvent, type SideExchange } from './side-question.js';
import { checkpointCommand } from './checkpoints/commands.js';
import { fsOperatorMessage } from './fs-errors.js';
import { currentAgentPath } from './agents/lineage.js';

export type Activity = 'idle' | 'turn' | 'tool_batch' | 'compacting';

export type QueueItem =
  | {
      readonly id: number;
      readonly kind: 'message';
      readonly text: string;
      /** A custom command's `allowed-tools` for the turn that sends it (CMD-1). */
      readonly allowedTools?: ToolRestriction;
    }
  | { readonly id: number; readonly kind: 'command'; readonly text: string };

export type ControllerEvent =
  | EngineEvent
  | SideEvent
  /** An empty `/btw`: the surface reopens its side panel on the existing thread. */
  | { readonly type: 'side-open'; readonly thread: readonly SideExchange[] }
  | { readonly type: 'side-cleared' }
  | { readonly type: 'activity'; readonly activity: Activity }
  | { readonly type: 'queue'; readonly items: readonly QueueItem[] }
  | { readonly type: 'command-output'; readonly command: string; readonly output: CommandOutput }
  | { readonly type: 'session-changed'; readonly sessionId: string; readonly replayed: boolean }
  | { readonly type: 'quit'; readonly sessionId: string }
  | { readonly type: 'approval-requested'; readonly prompt: ApprovalPrompt }
  | { readonly type: 'approval-resolved'; readonly id: number; readonly answer: ApprovalAnswer | 'cancelled' }
  | { readonly type: 'auto-pass'; readonly card: AutoPassCard }
  | { readonly type: 'question-requested'; readonly prompt: QuestionPrompt }
  | { readonly type: 'question-resolved'; readonly id: number }
  /** A running command's output as it arrives; `stream` tells stderr apart (TUIX-7). */
  | { readonly type: 'tool-output'; readonly callId: string; readonly chunk: string; readonly stream?: 'stdout' | 'stderr' }
  | { readonly type: 'mode-changed'; readonly mode: 'plan' | 'work' }
  | { readonly type: 'todos'; readonly items: readonly TodoItem[] }
  /** An MCP server's state, tools, prompts or resources changed (`/mcp` shows them). */
  | { readonly type: 'mcp-changed'; readonly server: string }

  /** An unattended session refused what would have asked the operator (exit code 4 in `run`). */
  | { readonly type: 'unattended-refusal'; readonly what: 'approval' | 'question'; readonly tool: string };

export type ControllerListener = (event: ControllerEvent) => void;

/** A call waiting for the operator (APPR-2): the card to show and the answers to offer. */
export interface ApprovalPrompt {
  readonly id: number;
  /** The tool call this card is about (surfaces mark its tool card). */
  readonly callId: string;
  readonly card: ApprovalCard;
  readonly choices: readonly ApprovalAnswer[];
  /** AGENT-4: who asks: `main`, or a child's path (`main/explore#1`); surfaces label the card with it. */
  readonly agent: string;
}

/** A `question` tool call waiting for the operator. */
export interface QuestionPrompt {
  readonly id: number;
  readonly questions: readonly Question[];
}

/** What the surfaces need to open a session: everything but the tools, which the controller assembles. */
export interface ControllerOptions extends Omit<SessionOptions, 'tools' | 'policy' | 'mapException'> {
  readonly approval?: ApprovalMode | undefined;
  readonly plan?: boolean | undefined;
  readonly bashTimeoutSeconds?: number | null | undefined;
  /** Hold the MCP servers until `startMcp()` (the terminal starts them after its first frame, MCP-5). */
  readonly deferMcpStart?: boolean;
  /** Extra tools appended to the catalog (in-process tools of an embedding host, tests). */
  readonly extraTools?: readonly import('@crystal/core').ToolDefinition[];
  /**
   * No operator (`crystal run`, CLI-2): a call that would ask is denied with the normal
   * rejection and the question tool is dismissed; each is published as `unattended-refusal`.
   */
  readonly unattended?: boolean | undefined;
  /** Whether a turn a crash interrupted goes on at open (default true; `run` closes it instead). */
  readonly continueInterrupted?: boolean | undefined;
  /** `crystal run --trust-workspace`: project code may load here (SEC-1, CLI-8). */
  readonly trustWorkspace?: boolean | undefined;
  /** REV-2: the approval-model launch flags (process only). */
  readonly approvalModel?: ApprovalModelFlags | undefined;
}

/** What Ctrl+C did (QUEUE-12, QUEUE-13); clearing the composer is the surface's part. */
export type CtrlCOutcome = 'interrupted' | 'clear-composer' | 'exit-armed' | 'exit';

export class SessionController {
  private readonly listeners = new Set<ControllerListener>();
  private queueItems: QueueItem[] = [];
  private nextId = 1;
  /** Report-only commands, one after another (runCommand never rejects). */
  private reportChain: Promise<void> = Promise.resolve();
  private current: Activity = 'idle';
  private running: Promise<void> | undefined;
  private unsubscribe: () => void;
  private ctrlCArmed = false;
  private quitting = false;

  private tools: WorkspaceTools | undefined;
  private approvals = new Map<number, { prompt: ApprovalPrompt; resolve: (answer: ApprovalReply) => void }>();
  private questions = new Map<number, { prompt: QuestionPrompt; resolve: (answers: QuestionAnswers | 'dismissed') => void }>();
  private promptIds = 1;

  private constructor(private active: Session) {
    this.unsubscribe = active.on(this.forward);
    // Queued follow-ups saved before a crash are offered back (sent on the next Enter).
    for (const text of active.queued) this.queueItems.push({ id: this.nextId++, kind: 'message', text });
  }

  /**
   * Opens a session with the workspace tools and an approval policy that asks the operator
   * through `approval-requested` events (answered with `answerApproval`).
   */
  static async open(options: ControllerOptions): Promise<SessionController> {
    const holder: { controller?: SessionController } = {};
    // Notes that arrive before the controller or its first listener (a failing MCP server) are held.
    const early: string[] = [];
    const note = (text: string): void => {
      if (holder.controller) holder.controller.note(text);
      else early.push(text);
    };
    const unattended = options.unattended === true;
    // REV-1, REV-2: the reviewer of Review and Audit reads the active session's model context.
    const approvalModel = new ApprovalModel(approvalModelSettings(options.config, options.approvalModel), {
      home: options.home,
      config: options.config,
      env: options.env ?? process.env,
      sessionClient: () => (holder.controller as SessionController).session.chatClient,
      sessionThinking: () => holder.controller?.session.thinking,
    });
    const reviewer = createReviewer({
      client: () => approvalModel.client(),
      context: () => holder.controller?.session.modelContext() ?? [],
      thinking: () => approvalModel.thinking(),
    });
    const assembling = assembleWorkspaceTools({
      reviewer,
      home: options.home,
      workspace: options.workspace,
      config: options.config,
      mode: options.plan ? 'plan' : 'work',
      approval: options.approval,
      bashTimeoutSeconds: options.bashTimeoutSeconds,
      skills: options.skills,
      userHome: options.userHome,
      ...(options.trustWorkspace !== undefined ? { trustWorkspace: options.trustWorkspace } : {}),
      ...(unattended
        ? {
            onDecided: (outcome) => {
              if (outcome.by === 'unattended')
                holder.controller?.emit({ type: 'unattended-refusal', what: 'approval', tool: outcome.call.name });
            },
          }
        : { askApproval: (request) => (holder.controller as SessionController).askApproval(request) }),
      askQuestion: async (questions, context) => {
        if (!unattended) return (holder.controller as SessionController).askQuestion(questions, context);
        holder.controller?.emit({ type: 'unattended-refusal', what: 'question', tool: 'question' });
        return 'dismissed';
      },
      onOutput: (callId, chunk, stream) => holder.controller?.emit({ type: 'tool-output', callId, chunk, stream }),
      // REV-3: auto-pass cards are published unless `verboseApprovals` is false; the ask card always is.
      ...(options.config.verboseApprovals === false
        ? {}
        : { onAutoPass: (card: AutoPassCard) => holder.controller?.emit({ type: 'auto-pass', card }) }),
      onNote: note,
      ...(options.deferMcpStart ? { deferMcpStart: true } : {}),
      onMcpChange: (server) => holder.controller?.emit({ type: 'mcp-changed', server }),
      sessionId: () => holder.controller?.session.id ?? '',
      imageInput: () => holder.controller?.session.imageInput ?? false,
    });
    // Start-up (issue 22 item 4): the session (its file, the model client, the system prompt) opens
    // while the tools assemble, whose sandbox probe waits on bubblewrap processes; the session asks
    // for the tools only when a round runs, after both are done.
    let assembled: WorkspaceTools | undefined;
    const ready = (): WorkspaceTools => {
      if (!assembled) throw new Error('internal: the workspace tools were asked for before they were assembled');
      return assembled;
    };
    const extra = options.extraTools ?? [];
    const opening = Session.open({
      agents: true,
      ...options,
      mode: options.plan ? 'plan' : 'work',
      tools: () => (extra.length > 0 ? [...ready().tools(), ...extra] : ready().tools()),
      policy: { decide: (call, signal) => ready().policy.decide(call, signal) },
      mapException: (error, call) => ready().mapException(error, call),
      // HOOK-1: PreCompact hooks run before every compaction, automatic or /compact.
      beforeCompaction: (trigger, signal) => ready().lifecycle.preCompact(trigger, signal),
    });
    const [toolsOpened, sessionOpened] = await Promise.allSettled([assembling, opening]);
    if (toolsOpened.status === 'rejected' || sessionOpened.status === 'rejected') {
      // What one of the two opened is undone: MCP servers stopped, the session lock released.
      if (toolsOpened.status === 'fulfilled') await toolsOpened.value.close().catch(() => undefined);
      if (sessionOpened.status === 'fulfilled') sessionOpened.value.release();
      throw toolsOpened.status === 'rejected' ? toolsOpened.reason : (sessionOpened as PromiseRejectedResult).reason;
    }
    const tools = toolsOpened.value;
    assembled = tools;
    const session = sessionOpened.value;
    const controller = new SessionController(session);
    holder.controller = controller;
    controller.tools = tools;
    controller.approvalModel = approvalModel;
    controller.startSession(options.resume !== undefined || options.continueLatest === true ? 'resume' : 'startup');
    controller.userHome = options.userHome;
    tools.todos.onChange((items) => controller.emit({ type: 'todos', items }));
    // Beyond the peers: a turn a crash interrupted (say, while an approval was pending) goes on
    // where it stopped; the approval is asked again instead of being lost.
    if (options.continueInterrupted !== false && session.danglingCalls().length > 0) {
      controller.resumePending = true;
      queueMicrotask(() => {
        controller.emit({ type: 'note', text: 'Continuing the turn that was interrupted; pending approvals are asked again.' });
        controller.pump();
      });
    }
    // Notes from start-up (a skipped tool set, …) wait for the first listener.
    controller.heldNotes.push(...tools.notes, ...early);
    // The bin keeps this process's code cache at exit, however it ends (launch.ts).
    markWarmStart();
    return controller;
  }

  /** Plan or Work (TOOLS-1); Tab toggles it. The next round uses the new catalog (TURN-1). */
  get mode(): 'plan' | 'work' {
    return this.tools?.mode() ?? 'work';
  }

  togglePlan(): 'plan' | 'work' {
    const next = this.mode === 'plan' ? 'work' : 'plan';
    this.tools?.setMode(next);
    this.active.setMode(next);
    this.emit({ type: 'mode-changed', mode: next });
    return next;
  }

  get approvalMode(): ApprovalMode {
    return this.tools?.policy.mode ?? 'default';
  }

  /** Starts MCP servers held by `deferMcpStart`; they connect in the background. */
  startMcp(): void {
    this.tools?.startMcp();
  }

  /** The session's MCP servers (`/mcp`, prompts, resources). */
  get mcp(): import('./mcp/mcp-host.js').McpHost | undefined {
    return this.tools?.mcp;
  }

  get todos(): readonly TodoItem[] {
    return this.tools?.todos.list() ?? [];
  }

  get pendingApprovals(): readonly ApprovalPrompt[] {
    return [...this.approvals.values()].map((a) => a.prompt);
  }

  get pendingQuestions(): readonly QuestionPrompt[] {
    return [...this.questions.values()].map((q) => q.prompt);
  }

  private resumePending = false;
  private userHome: string | undefined;
  private approvalModel: ApprovalModel | undefined;

  /** AGENT-3: parallel children may ask at once; the operator gets one card at a time, in order. */
  private approvalQueue: Promise<unknown> = Promise.resolve();

  private askApproval(request: ApprovalRequest): Promise<ApprovalReply> {
    const turn = this.approvalQueue.then(() => (request.signal.aborted ? ('deny' as const) : this.askApprovalNow(request)));
    this.approvalQueue = turn.catch(() => undefined);
    return turn;
  }

  private async askApprovalNow(request: ApprovalRequest): Promise<ApprovalReply> {
    const { card, choices, signal, call } = request;
    // Saved before asking, so a crash here asks again at resume.
    await this.active.markApprovalPending(call.id, true).catch(() => undefined);
    const answer = await this.promptApproval(call.id, card, choices, signal);
    // Cleared before the tool runs, so a crash during the tool never runs it twice.
    await this.active.markApprovalPending(call.id, false).catch(() => undefined);
    return answer;
  }

  private promptApproval(
    callId: string,
    card: ApprovalCard,
    choices: readonly ApprovalAnswer[],
    signal: AbortSignal,
  ): Promise<ApprovalReply> {
    const id = this.promptIds++;
    const prompt: ApprovalPrompt = { id, callId, card, choices, agent: currentAgentPath() };
    return new Promise<ApprovalReply>((resolve) => {
      const onAbort = (): void => {
        if (!this.approvals.delete(id)) return;
        this.emit({ type: 'approval-resolved', id, answer: 'cancelled' });
        resolve('deny');
      };
      this.approvals.set(id, {
        prompt,
        resolve: (answer) => {
          signal.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.emit({ type: 'approval-requested', prompt });
    });
  }

  /**
   * The operator's answer to an approval card (Y/S/A/N in the terminal, buttons on the Web page).
   * A denial may carry feedback: the model reads it in the tool result (TUIX-12).
   */
  answerApproval(id: number, answer: ApprovalAnswer, feedback?: string): boolean {
    const pending = this.approvals.get(id);
    if (!pending?.prompt.choices.includes(answer)) return false;
    this.approvals.delete(id);
    this.emit({ type: 'approval-resolved', id, answer });
    const text = feedback?.trim() ?? '';
    pending.resolve(answer === 'deny' && text !== '' ? { answer: 'deny', feedback: text } : answer);
    return true;
  }

  private askQuestion(questions: readonly Question[], context: ToolContext): Promise<QuestionAnswers | 'dismissed'> {
    const id = this.promptIds++;
    const prompt: QuestionPrompt = { id, questions };
    return new Promise((resolve) => {
      const onAbort = (): void => {
        if (!this.questions.delete(id)) return;
        this.emit({ type: 'question-resolved', id });
        resolve('dismissed');
      };
      this.questions.set(id, {
        prompt,
        resolve: (answers) => {
          context.signal.removeEventListener('abort', onAbort);
          resolve(answers);
        },
      });
      context.signal.addEventListener('abort', onAbort, { once: true });
      this.emit({ type: 'question-requested', prompt });
    });
  }

  /** Answers a question prompt: one list of chosen labels (or typed text) per question, or 'dismissed'. */
  answerQuestion(id: number, answers: QuestionAnswers | 'dismissed'): boolean {
    const pending = this.questions.get(id);
    if (!pending) return false;
    this.questions.delete(id);
    this.emit({ type: 'question-resolved', id });
    pending.resolve(answers);
    return true;
  }

  get session(): Session {
    return this.active;
  }

  /** The attachment seam of the current session (paste, Web batches: WEB-10). */
  get attachments(): import('./images/index.js').AttachmentService {
    return this.active.attachments;
  }

  get activity(): Activity {
    return this.current;
  }

  get queue(): readonly QueueItem[] {
    return this.queueItems;
  }

  private heldNotes: string[] = [];

  on(listener: ControllerListener): () => void {
    this.listeners.add(listener);
    for (const text of this.heldNotes.splice(0)) listener({ type: 'note', text });
    return () => this.listeners.delete(listener);
  }

  private note(text: string): void {
    if (this.listeners.size === 0) this.heldNotes.push(text);
    else this.emit({ type: 'note', text });
  }

  private emit(event: ControllerEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private turnRunning = false;

  private forward = (event: EngineEvent): void => {
    if (event.type === 'tool-calls') this.setActivity('tool_batch');
    else if (event.type === 'tool-results' || event.type === 'round-started') this.setActivity('turn');
    else if (event.type === 'compaction-started') this.setActivity('compacting');
    else if (event.type === 'compaction-finished') this.setActivity(this.turnRunning ? 'turn' : 'idle');
    // HOOK-1: after a compaction, SessionStart hooks run with source "compact", as in Claude Code.
    if (event.type === 'compaction-finished' && event.outcome === 'applied') this.startSession('compact');
    this.emit(event);
  };

  private setActivity(activity: Activity): void {
    if (this.current === activity) return;
    this.current = activity;
    this.emit({ type: 'activity', activity });
  }

  private readonly reports = new Set<Promise<void>>();

  /** Resolves once the session is idle with nothing left to send and no command still running. */
  async whenIdle(): Promise<void> {
    while (this.running || this.reports.size > 0) {
      if (this.running) await this.running;
      await Promise.all([...this.reports]);
    }
  }

  private track(work: Promise<void>): void {
    this.reports.add(work);
    void work.finally(() => this.reports.delete(work));
  }

  /**
   * Enter in the composer. Text starts a turn when idle and is queued while busy (QUEUE-1,
   * QUEUE-2); an empty Enter with queued follow-ups interrupts so the queue goes now (QUEUE-4),
   * and does nothing with an empty queue (QUEUE-5). Slash commands follow their phase.
   */
  submit(typed: string, spans?: readonly MarkerSpan[]): void {
    this.ctrlCArmed = false;
    // IMG-3/IMG-4: typed text and the spans the surface attached become transcript text here, for
    // every surface; a caller that passes no spans hands over text it already tagged itself with
    // the engine's `tagAttachedSpans` (the terminal, after expanding @ mentions).
    let text = spans === undefined ? typed : submittedText(typed, spans);
    const shell = shellEscapeCommand(text);
    if (shell !== undefined) {
      this.shell(shell);
      return;
    }
    if (this.shellContext.length > 0 && text.trim() !== '' && !isCommand(text)) {
      // TUIX-4: what `!cmd` printed goes to the model with the next message.
      text = `${this.shellContext.splice(0).join('\n\n')}\n\n${text}`;
    }
    if (text.trim() === '') {
      if (!this.queueItems.some((i) => i.kind === 'message')) return;
      if (this.current === 'idle') this.pump();
      else this.active.cancel();
      return;
    }
    if (isCommand(text)) {
      this.command(text);
      return;
    }
    this.enqueue({ id: this.nextId++, kind: 'message', text });
    if (this.current === 'idle') this.pump();
  }

  /** Ctrl+C: interrupts a busy turn without dropping queued text (QUEUE-12); when idle, clears, then exits on the second press (QUEUE-13). */
  ctrlC(composerEmpty: boolean): CtrlCOutcome {
    if (this.current !== 'idle') {
      this.shellAbort?.abort();
      this.hookAbort?.abort();
      this.active.cancel();
      return 'interrupted';
    }
    if (!composerEmpty) {
      this.ctrlCArmed = false;
      return 'clear-composer';
    }
    if (this.ctrlCArmed) {
      void this.quit();
      return 'exit';
    }
    this.ctrlCArmed = true;
    return 'exit-armed';
  }

  private shellContext: string[] = [];
  private shellAbort: AbortController | undefined;

  /** `!cmd` (TUIX-4): one bash call through the session's executor and policy, at an idle prompt. */
  private shell(command: string): void {
    const refuse = (text: string): void =>
      this.emit({ type: 'command-output', command: `!${command}`, output: { kind: 'error', text } });
    const tools = this.tools;
    const problem =
      this.current !== 'idle' || this.running
        ? '!commands run at an idle prompt; wait for the turn or press Esc.'
        : this.mode === 'plan'
          ? '!commands run bash, which Plan does not allow; press Shift+Tab for Work.'
          : !tools
            ? 'This session has no tools to run a command with.'
            : undefined;
    if (problem !== undefined || !tools) {
      refuse(problem ?? '');
      return;
    }
    const abort = new AbortController();
    this.shellAbort = abort;
    this.setActivity('tool_batch');
    this.running = (async () => {
      try {
        const result = await runShellEscape(
          { tools: tools.tools(), policy: tools.policy, mapException: tools.mapException, publish: (event) => this.emit(event) },
          command,
          abort.signal,
        );
        this.shellContext.push(shellContextBlock(command, result));
      } catch (error) {
        refuse(`The command could not run: ${(error as Error).message}`);
      } finally {
        this.shellAbort = undefined;
        this.running = undefined;
        this.setActivity('idle');
        if (this.queueItems.length > 0) this.pump();
      }
    })();
  }

  private command(text: string): void {
    const parsed = parseCommand(text);
    const prompt = parsed ? undefined : mcpPromptCommandOf(text);
    if (prompt) {
      this.track(this.runMcpPrompt(text.trim(), prompt.command, prompt.args));
      return;
    }
    // CMD-1: a custom command sends its expanded text like typed text.
    const custom = parsed ? null : matchCustomCommand(text, discoverCommands(this.places()));
    if (custom) {
      const message = expandCommand(custom.command, custom.argument);
      if (message.trim() === '') {
        this.emit({
          type: 'command-output',
          command: text.trim(),
          output: { kind: 'error', text: `/${custom.command.name} is empty: ${custom.command.path} has no text to send.` },
        });
        return;
      }
      // Queued as a message (never parsed again), so a command whose text starts with / cannot loop;
      // pending `!cmd` output goes with it as with typed text (TUIX-4).
      const shellContext = this.shellContext.splice(0);
      const sent = shellContext.length > 0 ? `${shellContext.join('\n\n')}\n\n${message}` : message;
      const allowedTools = { source: `the /${custom.command.name} command`, patterns: custom.command.allowedTools };
      this.enqueue({ id: this.nextId++, kind: 'message', text: sent, allowedTools });
      if (this.current === 'idle') this.pump();
      return;
    }
    if (!parsed) {
      this.emit({
        type: 'command-output',
        command: text.trim(),
        output: { kind: 'error', text: `unknown command ${text.trim().split(/\s/)[0]}` },
      });
      return;
    }
    const busy = this.current !== 'idle';
    switch (parsed.spec.phase) {
      case 'report':
        // Outputs in the order typed, though one may wait (`/status` detects the sandbox first).
        this.reportChain = this.reportChain.then(() => this.runCommand(parsed));
        this.track(this.reportChain);
        return;
      case 'side':
        if (parsed.argument === '') this.emit({ type: 'side-open', thread: [...this.sideThread] });
        else this.track(this.askSide(parsed.argument));
        return;
      case 'quit':
        void this.quit();
        return;
      case 'idle-only':
        if (busy) {
          const what = this.current === 'compacting' ? 'compaction' : 'a turn';
          this.emit({
            type: 'command-output',
            command: parsed.raw,
            output: { kind: 'error', text: `/${parsed.spec.name} cannot run during ${what}; wait for it or press Ctrl+C.` },
          });
          return;
        }
        // Runs in order with anything submitted after it.
        this.enqueue({ id: this.nextId++, kind: 'command', text: parsed.raw });
        this.pump();
        return;
      case 'stop-and-run':
        if (this.current === 'compacting') {
          this.emit({
            type: 'command-output',
            command: parsed.raw,
            output: { kind: 'error', text: `/${parsed.spec.name} cannot run during compaction; wait for it or press Ctrl+C.` },
          });
          return;
        }
        // QUEUE-7/8: it waits in the queue in typed order; follow-up text queued before it is dropped.
        this.queueItems = this.queueItems.filter((i) => i.kind === 'command');
        this.enqueue({ id: this.nextId++, kind: 'command', text: parsed.raw });
        if (busy) this.active.cancel();
        else this.pump();
        return;
    }
  }

  /** Takes a waiting item out of the queue (the Web page's queue panel); false when it is no longer there. */
  removeQueued(id: number): boolean {
    const before = this.queueItems.length;
    this.queueItems = this.queueItems.filter((i) => i.id !== id);
    if (this.queueItems.length === before) return false;
    this.queueChanged();
    return true;
  }

  /** Replaces the text of a waiting follow-up message; false when it is gone or is a command. */
  editQueued(id: number, text: string): boolean {
    const at = this.queueItems.findIndex((i) => i.id === id && i.kind === 'message');
    if (at < 0 || text.trim() === '') return false;
    this.queueItems[at] = { id, kind: 'message', text };
    this.queueChanged();
    return true;
  }

  private enqueue(item: QueueItem): void {
    this.queueItems.push(item);
    this.queueChanged();
  }

  private queueChanged(): void {
    this.emit({ type: 'queue', items: [...this.queueItems] });
    const texts = this.queueItems.filter((i) => i.kind === 'message').map((i) => i.text);
    void this.active.setQueued(texts).catch((error: unknown) => {
      this.emit({ type: 'error', message: `Could not save the queue: ${(error as Error).message}` });
    });
  }

  /** Takes queued follow-ups up to the first queued command (commands keep their place). */
  private takeMessages(): string[] {
    const taken: string[] = [];
    while (this.queueItems[0]?.kind === 'message') {
      const item = this.queueItems.shift() as Extract<QueueItem, { kind: 'message' }>;
      taken.push(item.text);
      // CMD-1: a command's allowed-tools hold for the turn its text joins.
      this.tools?.scope.add(item.allowedTools);
    }
    if (taken.length > 0) this.queueChanged();
    return taken;
  }

  private pump(): void {
    if (this.running || this.quitting) return;
    this.running = (async () => {
      try {
        if (this.resumePending) {
          this.resumePending = false;
          this.setActivity('turn');
          this.turnRunning = true;
          try {
            await this.active.resumeInterrupted(this.turnHooks());
          } catch (error) {
            this.emit({ type: 'error', message: (error as Error).message });
          } finally {
            this.turnRunning = false;
            this.setActivity('idle');
          }
        }
        while (this.queueItems.length > 0 && !this.quitting) {
          const head = this.queueItems[0] as QueueItem;
          if (head.kind === 'command') {
            this.queueItems.shift();
            this.queueChanged();
            const parsed = parseCommand(head.text);
            if (parsed) await this.runCommand(parsed);
            continue;
          }
          const text = this.takeMessages().join('\n\n');
          await this.runTurn(text);
        }
      } finally {
        this.running = undefined;
        this.setActivity('idle');
      }
    })();
  }

  /** MCP-6: a server prompt's text is sent as the next message, in order with the queue. */
  private async runMcpPrompt(raw: string, command: string, args: string): Promise<void> {
    const manager = this.tools?.mcp.manager;
    try {
      if (!manager) throw new Error(`unknown command /${command}: no MCP server is configured`);
      const text = await manager.runPrompt(command, args);
      this.enqueue({ id: this.nextId++, kind: 'message', text });
      if (this.current === 'idle') this.pump();
    } catch (error) {
      this.emit({ type: 'command-output', command: raw, output: { kind: 'error', text: (error as Error).message } });
    }
  }

  /**
   * IMG-7: the image numbers the surface's composer holds now. When idle, the unsent images
   * that neither the composer nor a queued message holds are discarded at once; during a turn
   * they are discarded when the next message is admitted, unless the composer got them back.
   */
  composerImages(numbers: readonly number[]): void {
    this.composerHeld = [...numbers];
    if (this.current !== 'idle' || this.running) return;
    const held = [...this.heldImages()].map(taggedMarker).join(' ');
    void this.active.attachments.registry.discardDeleted(held).catch(() => undefined);
  }

  private composerHeld: number[] = [];

  /** Images still held by the composer or a queued message (never discarded by admission). */
  private heldImages(): Set<number> {
    const held = new Set(this.composerHeld);
    for (const item of this.queueItems) if (item.kind === 'message') for (const n of taggedMarkerNumbers(item.text)) held.add(n);
    return held;
  }

  private turnHooks(): TurnHooks {
    return { takeFollowUps: () => this.takeMessages(), stillHeld: () => this.heldImages() };
  }

  /**
   * One message, one turn, its result (the face `crystal run` drives): the same admission,
   * saving and follow-up rules as `submit`; a refusal before any request (MODEL-1) is thrown.
   */
  async sendOnce(typed: string, spans: readonly MarkerSpan[] = [], allowedTools?: ToolRestriction): Promise<TurnResult> {
    await this.whenIdle();
    if (this.quitting) throw new UsageError('The session is closing; nothing more is sent.');
    this.tools?.scope.add(allowedTools);
    const text = submittedText(typed, spans);
    type Outcome = { readonly result: TurnResult } | { readonly error: unknown };
    let outcome = { error: new Error('The turn did not run.') } as Outcome;
    const work = (async () => {
      this.setActivity('turn');
      this.turnRunning = true;
      try {
        // MCP-6: `@server:uri` mentions attach the resource's text, as in `submit`.
        const attached = await attachMcpResources(text, this.tools?.mcp.manager);
        const result = await this.deliver(attached);
        // HOOK-1: a prompt a UserPromptSubmit hook refused never ran; `run` reports it (exit 1).
        if ('blocked' in result) throw new UsageError(result.blocked);
        outcome = { result };
      } catch (error) {
        outcome = { error };
      } finally {
        this.tools?.scope.clear();
        this.turnRunning = false;
        this.setActivity('idle');
      }
    })();
    this.running = work;
    try {
      await work;
    } finally {
      this.running = undefined;
    }
    const settled = outcome as Outcome;
    if ('error' in settled) throw settled.error;
    return settled.result;
  }

  private async runTurn(text: string): Promise<TurnResult | undefined> {
    this.setActivity('turn');
    this.turnRunning = true;
    try {
      // MCP-6: `@server:uri` mentions attach the resource's text.
      const attached = await attachMcpResources(text, this.tools?.mcp.manager);
      const result = await this.deliver(attached);
      if ('blocked' in result) {
        this.emit({ type: 'error', message: result.blocked });
        return undefined;
      }
      return result;
    } catch (error) {
      // A refusal before the request (an image for a text-only model, …) is reported, not thrown.
      this.emit({ type: 'error', message: (error as Error).message });
      return undefined;
    } finally {
      this.turnRunning = false;
      this.setActivity('idle');
    }
  }

  private hookAbort: AbortController | undefined;
  /** Ends SessionStart hooks still running when the session closes. */
  private readonly sessionAbort = new AbortController();
  /** Context the SessionStart hooks gave, added to the next prompt (HOOK-1). */
  private sessionStartContext: Promise<readonly string[]> | undefined;

  /** HOOK-1: SessionStart hooks run in the background; their context waits for the next prompt. */
  private startSession(source: SessionStartSource): void {
    const hooks = this.tools?.lifecycle;
    if (!hooks) return;
    const previous = this.sessionStartContext;
    const signal = this.sessionAbort.signal;
    this.sessionStartContext = (async () => [...((await previous) ?? []), ...(await hooks.sessionStart(source, signal))])();
  }

  /**
   * One prompt through the lifecycle hooks (HOOK-1): UserPromptSubmit may refuse it or add
   * context (with any SessionStart context); after a completed turn, a Stop hook may keep the
   * agent going with its reason as the next message, at most MAX_STOP_CONTINUATIONS times.
   */
  private async deliver(text: string): Promise<TurnResult | { readonly blocked: string }> {
    try {
      return await this.deliverThroughHooks(text);
    } finally {
      // CMD-1, SKILL-1: allowed-tools hold until the turn ends.
      this.tools?.scope.clear();
    }
  }

  private async deliverThroughHooks(text: string): Promise<TurnResult | { readonly blocked: string }> {
    const hooks = this.tools?.lifecycle;
    if (!hooks) return this.active.send(text, this.turnHooks());
    const abort = new AbortController();
    this.hookAbort = abort;
    try {
      const started = (await this.sessionStartContext) ?? [];
      this.sessionStartContext = undefined;
      return await deliverPrompt({
        hooks,
        text,
        started,
        send: (message) => this.active.send(message, this.turnHooks()),
        note: (message) => this.note(message),
        signal: abort.signal,
      });
    } finally {
      if (this.hookAbort === abort) this.hookAbort = undefined;
    }
  }

  /** Where this session's extensions are looked for (CMD-1, SKILL-1). */
  private places(): ExtensionPlaces {
    return {
      home: this.active.home,
      workspace: this.active.workspace,
      ...(this.userHome === undefined ? {} : { userHome: this.userHome }),
    };
  }

  /** Built-in and custom commands, for the slash picker and `/help` (CMD-1). */
  commands(): CommandSpec[] {
    return withCustomCommands(customCommandSpecs(discoverCommands(this.places())));
  }

  private async runCommand(command: ParsedCommand): Promise<void> {
    let output: CommandOutput;
    try {
      output = await this.execute(command);
    } catch (error) {
      output = { kind: 'error', text: fsOperatorMessage(error) };
    }
    this.emit({ type: 'command-output', command: command.raw, output });
  }

  private async execute(command: ParsedCommand): Promise<CommandOutput> {
    const arg = command.argument;
    switch (command.spec.name) {
      case 'help':
        return { kind: 'text', title: 'Help', text: helpText(customCommandSpecs(discoverCommands(this.places()))) };
      case 'status':
        // SBX-3: the sandbox state is detected when first shown (issue 22 item 4).
        await this.tools?.containment.resolve();
        return { kind: 'text', title: 'Status', text: this.statusText() };
      case 'stats':
        return { kind: 'text', title: 'Stats', text: this.statsText() };
      case 'sessions': {
        const all = arg === 'all';
        const sessions = await listSessions(this.active.home, all ? undefined : this.active.workspace);
        if (sessions.length === 0)
          return { kind: 'text', text: all ? 'No saved sessions.' : 'No saved sessions in this workspace.' };
        const lines = sessions.map(
          (s) =>
            `${s.id === this.active.id ? '*' : ' '} ${s.id}  ${s.updatedUtc.slice(0, 19).replace('T', ' ')}  ${s.messageCount} message${s.messageCount === 1 ? '' : 's'}  ${s.title}${all ? `  (${s.workspace})` : ''}${s.note ? `  [damaged: ${s.note}]` : ''}`,
        );
        return { kind: 'text', title: 'Sessions', text: lines.join('\n') };
      }
      case 'export': {
        const [format = 'json', path] = arg.split(/\s+/).filter(Boolean);
        if (format !== 'json' && format !== 'markdown')
          return { kind: 'error', text: 'Export supports: /export json|markdown [path].' };
        const extension = format === 'json' ? 'json' : 'md';
        const target = path ?? join(this.active.home, 'exports', `${this.active.id}.${extension}`);
        // IMG-15: the JSON export inlines the image bytes; Markdown is the readable transcript.
        const body = format === 'json' ? await this.active.exportJsonWithImages() : this.active.exportMarkdown();
        await writeFileAtomic(target, body);
        return { kind: 'text', text: `Exported to ${target}` };
      }
      case 'clear':
        await this.replace({ resume: undefined, continueLatest: false }, false);
        this.startSession('clear');
        return { kind: 'text', text: `New conversation ${this.active.id}.` };
      case 'resume': {
        if (arg === '') return this.execute({ ...command, spec: { ...command.spec, name: 'sessions' }, argument: '' });
        await this.replace({ resume: arg, continueLatest: false }, true);
        this.startSession('resume');
        return { kind: 'text', text: `Resumed ${this.active.id}.` };
      }
      case 'model': {
        const catalog = catalogOf(this.active.openOptions.config);
        if (arg === '') {
          const lines: string[] = [];
          for (const [name, provider] of Object.entries(catalog)) {
            lines.push(`${name} (${provider.protocol})`);
            for (const id of Object.keys(provider.models)) {
              const mark = name === this.active.provider && id === this.active.model ? '*' : ' ';
              lines.push(`  ${mark} ${id}`);
            }
          }
          return { kind: 'text', title: 'Models', text: lines.join('\n') };
        }
        const { provider, model } = resolveModelArgument(arg, catalog, this.active.provider);
        await this.active.switchModel(provider, model);
        await persistPreferences(this.active.home, { provider: this.active.provider, model: this.active.model });
        return { kind: 'text', text: `Model: ${this.active.provider}/${this.active.model}.` };
      }
      case 'thinking': {
        const gears: readonly ThinkingEffort[] = ['default', 'off', 'minimal', 'low', 'medium', 'high', 'maximum'];
        const aliases: Record<string, ThinkingEffort> = { none: 'off', max: 'maximum' };
        const current = this.active.thinking ?? 'default';
        const next =
          arg === ''
            ? (gears[(gears.indexOf(current) + 1) % gears.length] as ThinkingEffort)
            : (aliases[arg] ?? (arg as ThinkingEffort));
        if (!gears.includes(next)) return { kind: 'error', text: `Thinking gears: ${gears.join(', ')}.` };
        this.active.setThinking(next);
        await persistPreferences(this.active.home, { thinkingEffort: next });
        const note = this.active.modelInfo.thinking
          ? ''
          : ' (this model takes no thinking hint; the gear applies when you switch to one that does)';
        return { kind: 'text', text: `Thinking: ${next}${note}.` };
      }
      case 'mcp':
        return this.tools
          ? { kind: 'text', title: 'MCP servers', text: mcpStatusText(this.tools.mcp) }
          : { kind: 'text', text: 'No MCP servers.' };
      case 'todos': {
        const items = this.todos;
        if (items.length === 0) return { kind: 'text', text: 'No todos.' };
        const mark = { pending: '[ ]', in_progress: '[~]', completed: '[x]', cancelled: '[-]' } as const;
        return { kind: 'text', title: 'Todos', text: items.map((t) => `- ${mark[t.status]} ${t.content}`).join('\n') };
      }
      case 'approval': {
        const modes: readonly ApprovalMode[] = APPROVAL_MODES;
        const policy = this.tools?.policy;
        if (!policy) return { kind: 'error', text: 'No approval policy in this session.' };
        // REV-2: `/approval model …` and `/approval thinking …` set the reviewer's model and gear.
        const [sub, ...rest] = arg.split(/\s+/);
        if ((sub === 'model' || sub === 'thinking') && this.approvalModel) {
          try {
            const text =
              sub === 'model'
                ? await this.approvalModel.command(rest.join(' '))
                : await this.approvalModel.thinkingCommand(rest.join(' '), THINKING_EFFORTS);
            return { kind: 'text', text };
          } catch (error) {
            return { kind: 'error', text: (error as Error).message };
          }
        }
        const next =
          arg === '' ? (modes[(modes.indexOf(policy.mode) + 1) % modes.length] as ApprovalMode) : parseApprovalMode(arg);
        if (next === undefined || !modes.includes(next))
          return { kind: 'error', text: `Approval modes: ${modes.join(', ')}; also /approval model and /approval thinking.` };
        policy.setMode(next);
        await persistPreferences(this.active.home, { approval: next });
        return { kind: 'text', text: `Approval mode: ${next}.` };
      }
      case 'compact': {
        // COMPACT-4 / COMPACT-5: the call is awaited here while the surface keeps painting.
        const result = await this.active.compactNow();
        if (!result)
          return {
            kind: 'error',
            text: 'The model has no contextWindow in the catalog, so there is nothing to compact against.',
          };
        if (result.skipped === 'nothing_earlier' || (result.outcome === 'unchanged' && !result.summary)) {
          return { kind: 'text', text: 'Nothing earlier to compact' };
        }
        if (result.outcome === 'exhausted')
          return { kind: 'error', text: `Compaction failed: ${result.error?.message ?? result.skipped ?? 'no summary'}` };
        return { kind: 'text', title: 'Earlier context', text: result.summary ?? 'Old tool results were cleared.' };
      }
      case 'fork': {
        // The source of `/fork ID` is only read (no lock), so a session open elsewhere can be forked (REL-2).
        const source =
          arg === ''
            ? this.active
            : await Session.open({ ...this.active.openOptions, resume: arg, continueLatest: false, readOnly: true });
        const id = await source.forkTo();
        await this.replace({ resume: id, continueLatest: false }, true);
        return { kind: 'text', text: `Forked to ${id}; the source session is unchanged.` };
      }
      case 'rewind':
      case 'undo':
      case 'redo':
        return checkpointCommand(this.active, command.spec.name, arg);
      case 'login':
        // The terminal asks for the key itself, off the composer; other surfaces cannot hide it.
        return {
          kind: 'error',
          text: `/login needs the terminal, where the key is asked for without echo. In a shell run: crystal login ${arg || this.active.provider}`,
        };
      default:
        return { kind: 'error', text: `/${command.spec.name} is not available yet in this version.` };
    }
  }

  private sideThread: SideExchange[] = [];
  private sideController: AbortController | undefined;

  /** The side thread of this process (BTW-1), oldest first. */
  get sideExchanges(): readonly SideExchange[] {
    return this.sideThread;
  }

  /** BTW-2: its own request and cancellation; the main turn keeps running. */
  private async askSide(question: string): Promise<void> {
    this.sideController?.abort();
    const controller = new AbortController();
    this.sideController = controller;
    try {
      const answer = await this.active.askSide(question, this.sideThread, controller.signal, (event) => this.emit(event));
      this.sideThread = [...this.sideThread, { question, answer }].slice(-SIDE_THREAD_LIMIT);
    } catch {
      // side-failed was published; the question stays in the panel to ask again (BTW-5).
    } finally {
      if (this.sideController === controller) this.sideController = undefined;
    }
  }

  /** BTW-10: cancels the side question in flight only. */
  cancelSide(): boolean {
    if (!this.sideController) return false;
    this.sideController.abort();
    return true;
  }

  /** BTW-9: `x` in the panel clears the in-memory thread. */
  clearSideThread(): void {
    this.sideThread = [];
    this.emit({ type: 'side-cleared' });
  }

  /** Saves the current session, then opens another in its place (clear, resume, fork). */
  private async replace(overrides: Partial<SessionOptions>, replayed: boolean): Promise<void> {
    // REL-3: a conversation that cannot be saved is not dropped by switching away from it.
    if (this.active.historyLength > 0) {
      try {
        await this.active.save();
      } catch (error) {
        throw new UsageError(
          `${(error as Error).message} Not switching sessions, so this conversation is not lost; /fork keeps a copy of it.`,
        );
      }
    }
    const next = await Session.open({ ...this.active.openOptions, ...overrides, readOnly: false });
    const previous = this.active;
    this.unsubscribe();
    previous.release();
    this.active = next;
    this.unsubscribe = next.on(this.forward);
    // BTW-11: /clear, /resume and /fork drop the side thread (and unsent `!cmd` output).
    this.shellContext = [];
    this.cancelSide();
    this.clearSideThread();
    this.emit({ type: 'session-changed', sessionId: next.id, replayed });
  }

  private statusText(): string {
    const s = this.active.snapshot();
    return [
      `Workspace  ${s.workspace}`,
      `Model      ${s.provider}/${s.model}`,
      `Session    ${s.id}`,
      `Tokens     in ${s.cumulativeUsage.inputTokens}, out ${s.cumulativeUsage.outputTokens} (last request in ${s.lastUsage.inputTokens})`,
      `Activity   ${this.current}; ${this.queueItems.length} queued`,
      // SBX-3: whether bash and exec tools run in the OS sandbox.
      `Sandbox    ${this.tools ? `${this.tools.containment.sandboxed ? 'on' : 'off'}: ${this.tools.containment.description}` : 'off'}`,
    ].join('\n');
  }

  private statsText(): string {
    const s = this.active.snapshot();
    const total = s.toolShare.reduce((sum, t) => sum + t.count, 0);
    const tools = s.toolShare
      .slice(0, 10)
      .map(
        (t) =>
          `  ${t.name.padEnd(16)} ${String(t.count).padStart(5)} call${t.count === 1 ? ' ' : 's'}  ${((100 * t.count) / Math.max(1, total)).toFixed(0)}% of tool calls`,
      );
    return [
      'Overview',
      `  turns ${s.userTurns}, model calls ${s.modelCalls}, tool calls ${s.toolCalls}`,
      'Tokens',
      `  input ${s.cumulativeUsage.inputTokens}, output ${s.cumulativeUsage.outputTokens}`,
      `Tools (${total} call${total === 1 ? '' : 's'}; the share of each)`,
      ...(tools.length > 0 ? tools : ['  (none)']),
    ].join('\n');
  }

  /** /quit: stops a busy turn or compaction, saves, and tells the surface to exit (QUEUE-6, QUEUE-11). */
  async quit(): Promise<void> {
    if (this.quitting) return;
    this.quitting = true;
    this.shellAbort?.abort();
    this.hookAbort?.abort();
    this.sessionAbort.abort();
    this.active.cancel();
    await this.whenIdle();
    if (this.active.historyLength > 0) await this.active.save().catch(() => undefined);
    await this.tools?.close();
    this.emit({ type: 'quit', sessionId: this.active.id });
  }

  /** Orderly exit: saves when the transcript holds anything. */
  /** Waits until the MCP servers are up or `limitMs` passed (`crystal run`'s head start, MCP-5). */
  settleMcp(limitMs: number): Promise<void> {
    return this.tools?.mcp.settle(limitMs) ?? Promise.resolve();
  }

  /**
   * Ends this process's hold on the session without another save (`crystal run`: the turn saved
   * itself, REL-1/REL-3): MCP servers stop, the lock is released, the sandbox proxy closes.
   */
  async release(): Promise<void> {
    this.sessionAbort.abort();
    try {
      await this.tools?.close();
    } finally {
      this.unsubscribe();
      this.active.release();
      this.tools?.containment.close();
    }
  }

  async close(): Promise<void> {
    this.quitting = true;
    this.hookAbort?.abort();
    this.active.cancel();
    await this.whenIdle();
    try {
      if (this.active.historyLength > 0) await this.active.save();
    } finally {
      await this.release();
    }
  }
}
