/**
 * The engine face of one session, used alike by the terminal, `crystal run` and the Web host:
 * send, cancel, history, and a typed event stream (events.ts).
 */
import {
  addUsage,
  type ChatMessage,
  emptyUsage,
  RunBudget,
  type RunLimits,
  type StreamingChatClient,
  type ThinkingEffort,
  type ToolDefinition,
  ToolExecutor,
  type ParsedToolCall,
  parseToolCall,
  type ProviderError,
  type ToolExceptionMapper,
  type ToolResultContent,
  type ToolResultPart,
  type ToolInvocationPolicy,
  systemMessage,
  userMessage,
  isoTime,
} from '@crystal/core';
import { type ClientOptions, createChatClient } from '@crystal/providers';
import { selectModel } from './catalog.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config/schema.js';
import { resolveApiKey } from './credentials.js';
import type { EngineEvent, EngineListener, TurnResult } from './events.js';
import { retryPolicyOf } from './retry-policy.js';
import { clientOptionsOf } from './transport-options.js';
import { listSessions, newSessionId, SessionFiles, type SessionState, serialiseSession, sessionPath } from './session-store.js';
import { SessionLock } from './session-lock.js';
import { appendToArchive, archiveInMemory, archiveLength, pendingArchive } from './session-archive.js';
import { requireSessionId } from './session-names.js';
import { buildSystemPrompt } from './prompts/system-prompt.js';
import {
  type CompactionResult,
  ContextMeter,
  compact,
  compactionLimit,
  estimateTokens,
  reservedTokens,
  shouldCompact,
  tokensOfChars,
} from './compaction/index.js';
import type { ModelSettings } from '@crystal/providers';
import { askSideQuestion, type SideEvent, type SideExchange } from './side-question.js';
import {
  AttachmentService,
  exportSessionImages,
  imageLimitsFrom,
  MediaStore,
  parseSessionImageRecords,
  projectMessages,
  referencedImageNumbers,
  restoreSessionImages,
  stripMarkerPrefix,
  tagLegacyMessage,
  taggedMarker,
} from './images/index.js';
import { interruptedResult, runTurn } from './turn.js';
import { UsageError } from './errors.js';
import { budgetLimitsOf } from './budget.js';
import { Checkpoints, checkpointLimitsOf } from './checkpoints/index.js';
import { admitUserText } from './message-admission.js';
import { type AgentHost, AgentRuntime, envBlockOf, imagePartsOf, markChildrenInterrupted, TASK_TOOL } from './agents/index.js';

export interface SessionOptions {
  /** HOOK-1: runs before each compaction (PreCompact hooks); `manual` for /compact. */
  readonly beforeCompaction?: (trigger: 'manual' | 'auto', signal: AbortSignal) => Promise<void>;
  readonly home: string;
  readonly workspace: string;
  readonly config: Config;
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly thinking?: ThinkingEffort | undefined;
  /** Plan or Work: picks the system prompt body (the catalog is the tools' business). */
  readonly mode?: 'plan' | 'work' | undefined;
  /** Overrides of the configured budget for this process only. */
  readonly limits?: Partial<RunLimits> | undefined;
  readonly resume?: string | undefined;
  /** Resume the newest session of this workspace. */
  readonly continueLatest?: boolean | undefined;
  /** The tool catalog; a function is asked each round (the mode may change between rounds). */
  readonly tools?: readonly ToolDefinition[] | (() => readonly ToolDefinition[]);
  readonly policy?: ToolInvocationPolicy;
  readonly mapException?: ToolExceptionMapper;
  readonly clock?: Clock;
  readonly env?: NodeJS.ProcessEnv;
  readonly clientOptions?: ClientOptions;
  /** Open without a model client (export, listing): any request fails with a clear error. */
  readonly offline?: boolean;
  /** CKPT-1: checkpoints before turns and tool batches (default: on unless `checkpoints.enabled` is false). */
  readonly checkpoints?: boolean;
  /** Which surface opens it, named in the lock a second opener is shown (REL-2). */
  readonly surface?: string;
  /** Read the session without taking its lock (the source of a `/fork`); it is never saved. */
  readonly readOnly?: boolean;
  /** CKPT-5: offline (no model client) but saved and locked, for `crystal rewind`. */
  readonly offlineWriter?: boolean;
  /** `--skills on|off` for this process; over `config.json` `skills` (SKILL-1). */
  readonly skills?: boolean | undefined;
  /** The user's home folder for the Claude, agents and OpenCode folders; defaults to `os.homedir()`. */
  readonly userHome?: string | undefined;
  /**
   * A resume that only appends to the archive (`crystal run`): its committed messages stay on disk
   * until something reads them (session-archive.ts, issue 22 item 5).
   */
  readonly deferArchive?: boolean | undefined;
  /** AGENT-1: offer the `task` tool (the controller's surfaces do; `agents.enabled: false` turns it off). */
  readonly agents?: boolean | undefined;
}

/** Skills on or off (flag over config, default on) and the user home, for the system prompt. */
function extensionOptions(options: SessionOptions): { skills: boolean; userHome?: string } {
  return {
    skills: options.skills ?? options.config.skills ?? true,
    ...(options.userHome === undefined ? {} : { userHome: options.userHome }),
  };
}

export interface TurnHooks {
  readonly takeFollowUps?: () => readonly string[];
  /** IMG-7: image numbers the composer and the queue still hold; their drafts are kept. */
  readonly stillHeld?: () => Iterable<number>;
}

export interface SessionSnapshot {
  readonly id: string;
  readonly workspace: string;
  readonly provider: string;
  readonly model: string;
  readonly createdUtc: string;
  readonly userTurns: number;
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly lastUsage: import('@crystal/core').Usage;
  readonly cumulativeUsage: import('@crystal/core').Usage;
  readonly archiveMessages: number;
  readonly contextMessages: number;
  /** HIST-6: tool share read from the archive. */
  readonly toolShare: readonly { readonly name: string; readonly count: number }[];
}

export class Session {
  private readonly listeners = new Set<EngineListener>();
  private controller: AbortController | undefined;
  private busy = false;

  private constructor(
    private readonly options: SessionOptions,
    private readonly state: SessionState,
    private readonly files: SessionFiles,
    private client: StreamingChatClient,
    private modelSettings: ModelSettings,
    private readonly limits: RunLimits,
    /** Operator notes from loading (a damaged transcript file, …), published on the first send. */
    private pendingNotes: string[],
    private readonly lock: SessionLock | undefined,
  ) {}

  /** Releases the session's lock (REL-2); the session is not saved again after this. */
  release(): void {
    this.lock?.release();
    // CKPT-1: a first capture still reading in the background stops and keeps what it read.
    void this.checkpoints?.stop();
  }

  private lastSaveError: { readonly path: string; readonly message: string } | undefined;

  /** Set while the latest save failed and no later one landed (REL-3): the turn lives only in memory. */
  get saveError(): { readonly path: string; readonly message: string } | undefined {
    return this.lastSaveError;
  }

  /** Resolves the model, the key and the client; loads a saved session when resuming. */
  static async open(options: SessionOptions): Promise<Session> {
    const env = options.env ?? process.env;
    let resumeId = options.resume;
    if (options.continueLatest) {
      // A damaged session whose workspace is unknown is listed, but never continued by guess.
      const latest = (await listSessions(options.home, options.workspace)).find((s) => s.workspace === options.workspace);
      if (!latest)
        throw new UsageError(`No saved session in workspace ${options.workspace} to continue; start one without --continue.`);
      resumeId = latest.id;
    }
    // SEC-8: an id from the command line is checked before any path is built from it.
    if (resumeId !== undefined) requireSessionId(resumeId);
    const writer = (!options.offline || options.offlineWriter === true) && !options.readOnly;
    const newId = resumeId ?? newSessionId();
    // REL-2: one writer per session across processes; a read-only Home fails here, before any request.
    const lock = writer ? SessionLock.acquire(options.home, newId, options.surface ?? 'crystal') : undefined;
    try {
      return await Session.openLocked(options, env, resumeId, newId, lock);
    } catch (error) {
      lock?.release();
      throw error;
    }
  }

  private static async openLocked(
    options: SessionOptions,
    env: NodeJS.ProcessEnv,
    resumeId: string | undefined,
    newId: string,
    lock: SessionLock | undefined,
  ): Promise<Session> {
    const resumed = resumeId
      ? SessionFiles.load(options.home, resumeId, { deferArchive: options.deferArchive === true })
      : undefined;
    const { client, model } = options.offline
      ? offlineClient(resumed?.state.provider ?? options.provider ?? '', resumed?.state.model ?? options.model ?? '')
      : await buildClient(options, options.provider, options.model, env);
    const limits = { ...budgetLimitsOf(options.config), ...(options.limits ?? {}) };
    const now = isoTime();
    const state: SessionState = resumed?.state ?? {
      id: newId,
      workspace: options.workspace,
      createdUtc: now,
      updatedUtc: now,
      provider: client.provider,
      model: client.model,
      context: [],
      archive: [],
      userTurns: 0,
      modelCalls: 0,
      toolCalls: 0,
      usage: emptyUsage,
      cumulativeUsage: emptyUsage,
      queued: [],
      images: [],
      imageMarkersTagged: true,
      pendingApprovals: [],
    };
    state.provider = client.provider;
    state.model = client.model;
    // Resume refreshes only the live system prompt.
    const system = systemMessage(
      buildSystemPrompt({
        mode: options.mode ?? 'work',
        workspace: options.workspace,
        home: options.home,
        provider: state.provider,
        model: state.model,
        ...extensionOptions(options),
      }),
    );
    // Saved contexts never hold the live system prompt (a leading system message there is a
    // summary), so it is always put in front afresh.
    state.context.unshift(system);
    const files = resumed?.files ?? SessionFiles.create(options.home, state.id);
    // IMG-12: the images an archive left on disk mentions are among those its head recorded.
    const archived = pendingArchive(state) ? parseSessionImageRecords(state.images).records.map((r) => r.number) : [];
    const { attachments, notes, unavailable } = await openImages(options, state);
    const session = new Session(options, state, files, client, model, limits, [...(resumed?.notes ?? []), ...notes], lock);
    session.attachments = attachments;
    session.archivedImages = archived;
    if (options.checkpoints !== false && options.config.checkpoints?.enabled !== false) {
      session.checkpoints = new Checkpoints({
        home: options.home,
        workspace: options.workspace,
        sessionId: state.id,
        limits: checkpointLimitsOf(options.config),
        publish: (event) => session.publish(event),
      });
    }
    // The resume note already named these (IMG-13: one note); requests do not repeat it.
    for (const number of unavailable) session.reportedUnavailable.add(number);
    // AGENT-1: the task tool joins a session that has tools (not an offline or read-only one).
    if (options.agents && options.tools && !options.offline && !options.readOnly && options.config.agents?.enabled !== false)
      session.agents = new AgentRuntime(session.agentHost());
    return session;
  }

  /**
   * Replaces the session's client (CORE-3): the next round uses the new model. Refused while a
   * turn runs; a missing key or unknown model leaves the current client unchanged.
   */
  async switchModel(provider: string | undefined, model: string | undefined): Promise<void> {
    if (this.busy) throw new UsageError('The model cannot change while a turn is running; wait for it or cancel it first.');
    const { client, model: settings } = await buildClient(this.options, provider, model, this.options.env ?? process.env);
    this.client = client;
    this.modelSettings = settings;
    this.state.provider = client.provider;
    this.state.model = client.model;
  }

  private thinkingGear: ThinkingEffort | undefined;

  /** The thinking gear of the next request (`/thinking`); adapters omit it for models without thinking. */
  get thinking(): ThinkingEffort | undefined {
    return this.thinkingGear ?? this.options.thinking ?? this.options.config.thinkingEffort;
  }

  setThinking(gear: ThinkingEffort | undefined): void {
    this.thinkingGear = gear;
  }

  /** Model facts for the surfaces: the window drives the CTX percent. */
  get modelInfo(): { readonly contextWindow?: number; readonly thinking: boolean; readonly efforts: readonly ThinkingEffort[] } {
    return {
      ...(this.modelSettings.contextWindow !== undefined ? { contextWindow: this.modelSettings.contextWindow } : {}),
      thinking: this.modelSettings.thinking === true,
      efforts: this.modelSettings.thinkingEfforts ?? [],
    };
  }

  /**
   * Context use in percent of the window (CTX): the last round's reported input + output while
   * known, else the local estimate of the model context.
   */
  contextPercent(): number | undefined {
    const window = this.modelSettings.contextWindow;
    if (!window) return undefined;
    const reported = this.state.usage.inputTokens + this.state.usage.outputTokens;
    const tokens = reported > 0 ? reported : estimateTokens(this.state.context);
    return Math.min(100, Math.round((100 * tokens) / window));
  }

  /** CKPT-1..6: this session's checkpoints (undefined when turned off). */
  checkpoints: Checkpoints | undefined;

  /**
   * CKPT-3: a conversation rewind: the model context goes back to `context` (saved before turn
   * `turn`), the next message is turn `turn` again; the archive keeps everything.
   */
  /** The model context (after the live system prompt) and the turn count: what `/redo` puts back (CKPT-3). */
  conversationNow(): { context: ChatMessage[]; userTurns: number } {
    const start = this.state.context[0]?.role === 'system' ? 1 : 0;
    return { context: this.state.context.slice(start), userTurns: this.state.userTurns };
  }

  async rewindConversation(context: readonly ChatMessage[], turn: number): Promise<void> {
    if (this.busy)
      throw new UsageError('The conversation cannot be rewound while a turn is running; wait for it or cancel it first.');
    const system = this.state.context[0]?.role === 'system' ? [this.state.context[0]] : [];
    this.state.context = [...system, ...context];
    this.state.userTurns = turn - 1;
    this.state.pendingApprovals = [];
    this.meter.reset();
    await this.save();
  }

  /** The attachment seam of this session (terminal, run and Web alike: WEB-10). */
  attachments!: AttachmentService;

  get id(): string {
    return this.state.id;
  }

  get provider(): string {
    return this.state.provider;
  }

  get model(): string {
    return this.state.model;
  }

  /** Whether the selected model takes image input (CORE-2). */
  get imageInput(): boolean {
    return this.client.capabilities.imageInput;
  }

  get isBusy(): boolean {
    return this.busy;
  }

  /** The archive (HIST-5): what resume replays and export reads. */
  history(): readonly ChatMessage[] {
    return this.state.archive;
  }

  /**
   * The archive's last `limit` messages and how many come before them: what a resume shows
   * (HIST-5). An archive left on disk is read from its end only (issue 22 item 5).
   */
  recentHistory(limit: number): { readonly messages: readonly ChatMessage[]; readonly earlier: number } {
    const pending = pendingArchive(this.state);
    let messages: readonly ChatMessage[];
    if (!pending) messages = this.state.archive.slice(-limit);
    else {
      const appended = pending.tail.slice(-limit);
      messages = [...pending.last(limit - appended.length), ...appended];
    }
    return { messages, earlier: Math.max(0, archiveLength(this.state) - messages.length) };
  }

  /** How many messages the archive holds, without reading one left on disk (session-archive.ts). */
  get historyLength(): number {
    return archiveLength(this.state);
  }

  /** Images the archive's committed part may mention while it stays on disk (its head recorded them). */
  private archivedImages: readonly number[] = [];

  /** IMG-12: the images the archive or the model context still mention. */
  private referencedImages(): Set<number> {
    const numbers = referencedImageNumbers(archiveInMemory(this.state), this.state.context);
    if (pendingArchive(this.state)) for (const n of this.archivedImages) numbers.add(n);
    return numbers;
  }

  /** The model context (HIST-4): what the approval reviewer reads. */
  modelContext(): readonly ChatMessage[] {
    return this.state.context;
  }

  /** The working model's client (the reviewer's when no approval model is on, REV-2). */
  get chatClient(): StreamingChatClient {
    return this.client;
  }

  on(listener: EngineListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private publish = (event: EngineEvent): void => {
    for (const listener of this.listeners) listener(event);
  };

  /** Cancels the running turn at once, also during a retry wait (RETRY-8). */
  cancel(): void {
    this.controller?.abort();
  }

  /** Runs one turn for a user message. Slash commands are not handled here. */
  async send(text: string, hooks: TurnHooks = {}): Promise<TurnResult> {
    return this.turn(text, undefined, hooks);
  }

  /**
   * Tool calls the last assistant message made that have no results: a crash left them (the
   * turn saves while an approval is pending, so a kill there leaves exactly this).
   */
  danglingCalls(): ParsedToolCall[] {
    const last = this.state.context.at(-1);
    if (last?.role !== 'assistant') return [];
    return last.content.filter((p) => p.type === 'tool-call').map((p) => parseToolCall(p));
  }

  /**
   * Continues a turn a crash interrupted: calls that were waiting for approval are asked again,
   * the rest get an "interrupted" result (never run twice), then the model goes on.
   */
  async resumeInterrupted(hooks: TurnHooks = {}): Promise<TurnResult | undefined> {
    const calls = this.danglingCalls();
    if (calls.length === 0) return undefined;
    const rerun = new Set(this.state.pendingApprovals.filter((id) => calls.some((c) => c.id === id)));
    return this.turn(undefined, { calls, rerun }, hooks);
  }

  /** Records that a call waits for the operator, saved at once so a crash can ask again. */
  async markApprovalPending(callId: string, pending: boolean): Promise<void> {
    const others = this.state.pendingApprovals.filter((id) => id !== callId);
    this.state.pendingApprovals = pending ? [...others, callId] : others;
    await this.save();
  }

  private async turn(
    text: string | undefined,
    resumeBatch: { calls: ParsedToolCall[]; rerun: ReadonlySet<string> } | undefined,
    hooks: TurnHooks,
  ): Promise<TurnResult> {
    if (this.busy) throw new UsageError('A turn is already running; wait for it or cancel it first.');
    // REL-9: a message that cannot fit the window is refused before it joins the session.
    if (text !== undefined) this.refuseOversized(text);
    this.busy = true;
    const controller = new AbortController();
    this.controller = controller;
    const clock = this.options.clock ?? systemClock;
    // CKPT-1: the turn's checkpoint record, started once the first request is on its way (below).
    let recordTurn: (() => void) | undefined;
    // REL-1: the save of the user message; the first request is written once it settles (runTurn).
    let saving: Promise<void> | undefined;
    try {
      // AGENT-4: a child a crash cut off is never run again: its call is closed below, its file says so.
      const danglingTasks = this.danglingCalls().filter((c) => c.name === TASK_TOOL && !resumeBatch?.rerun.has(c.id));
      if (danglingTasks.length > 0)
        await markChildrenInterrupted(this.options.home, this.state.id, new Set(danglingTasks.map((c) => c.id)));
      if (text !== undefined) {
        // MODEL-1, IMG-7, IMG-12: the one admission rule of every user message (message-admission.ts).
        await this.admit(text, hooks);
        // Calls a crash left without results are closed first: no request carries a dangling call.
        const dangling = this.danglingCalls();
        if (dangling.length > 0) {
          const closed: ChatMessage = { role: 'tool', content: dangling.map((c) => interruptedResult(c)) };
          this.state.context.push(closed);
          appendToArchive(this.state, closed);
          this.state.pendingApprovals = [];
        }
        // CKPT-1: recorded in the background; the turn's batches and its end wait for it. Issue 22:
        // it starts once the turn's first request has left (`afterRequest`), not before: its file
        // work on the same thread pool and main thread made the save before the request (REL-1)
        // and the request itself wait (8.6 ms vs 3.1 ms to save, 10.7 vs 5.0 ms to the request,
        // measured). What it records is taken here; anything that needs it (a tool call
        // streaming, a batch, the turn's end) starts it first if the request has not.
        const checkpoints = this.checkpoints;
        if (checkpoints) {
          const record = [this.state.userTurns + 1, text, this.state.context.slice(1), isoTime()] as const;
          recordTurn = () => {
            recordTurn = undefined;
            void checkpoints.beforeTurn(...record);
          };
        }
        const user = userMessage(text);
        this.state.context.push(user);
        appendToArchive(this.state, user);
        this.state.userTurns++;
        this.publish({ type: 'turn-started', text });
        // REL-1: the user message is on disk before the first request. The turn builds that
        // request and opens its connection while the save waits for the disk (issue 22).
        saving = this.checkpoint();
      } else {
        this.publish({ type: 'turn-started', text: '' });
      }
      const budget = new RunBudget(this.limits, () => clock.now());
      let denied = false;
      const policy = this.options.policy;
      const turnPolicy: ToolInvocationPolicy = {
        decide: async (call, signal) => {
          const decision = policy ? await policy.decide(call, signal) : ({ allow: true } as const);
          // A hook's block or a reviewer's deny is not a denied operator prompt (crystal run exits 0, §1.3).
          if (!decision.allow && decision.by === undefined) denied = true;
          return decision;
        },
      };
      const mapException = this.options.mapException;
      const executorForRound = (): ToolExecutor | undefined => {
        const base = typeof this.options.tools === 'function' ? this.options.tools() : this.options.tools;
        if (!base || base.length === 0) return undefined;
        // AGENT-1/3: the task tool shares this turn's budget, policy and catalog with its children.
        const task = this.agents?.taskTool({ budget, publish: this.publish, tools: base, policy: turnPolicy, mapException });
        return new ToolExecutor({
          tools: task ? [...base, task] : base,
          policy: turnPolicy,
          ...(mapException ? { mapException } : {}),
          ...(this.agents ? { parallelLimit: this.agents.maxParallel } : {}),
        });
      };
      for (const text of this.pendingNotes.splice(0)) this.publish({ type: 'note', text });
      let outcome: Awaited<ReturnType<typeof runTurn>>;
      try {
        outcome = await runTurn({
          client: this.client,
          executorForRound,
          context: this.state.context,
          commit: (message) => appendToArchive(this.state, message),
          budget,
          retry: retryPolicyOf(this.options.config),
          clock,
          ...(this.thinking ? { thinking: this.thinking } : {}),
          signal: controller.signal,
          publish: this.publish,
          ...(saving ? { saving } : {}),
          ...(hooks.takeFollowUps ? { takeFollowUps: () => this.admitFollowUps(hooks) } : {}),
          checkpoint: () => this.checkpoint(),
          prepareMessages: (messages) => this.prepareMessages(messages),
          ...(resumeBatch ? { resumeBatch } : {}),
          adoptToolResults: (results) => this.adoptToolResults(results),
          ...(this.checkpoints
            ? {
                afterRequest: () => recordTurn?.(),
                aroundBatch: (calls, run) => {
                  recordTurn?.();
                  return (this.checkpoints as Checkpoints).aroundBatch(this.state.userTurns, calls, run);
                },
                onToolCallStreaming: (name) => {
                  recordTurn?.();
                  this.checkpoints?.toolCallStreaming(name);
                },
              }
            : {}),
          onRoundRefused: async (error) => this.refuseImages(error),
          compactBeforeRound: async (lastReported, signal) => {
            const result = await this.runCompaction(false, lastReported, signal, saving);
            return result?.outcome === 'exhausted' ? 'overflow' : 'fits';
          },
        });
        // COMPACT-3: after a completed turn only; other stops do not compact (FIN-5).
        if (outcome.stopReason === 'completed' && !controller.signal.aborted) {
          await this.runCompaction(false, outcome.lastReportedTokens, controller.signal).catch(() => undefined);
        }
      } catch (error) {
        // A defect must not lose the user's message: report it, stop failed, save below.
        const message = `Internal error during the turn: ${error instanceof Error ? error.message : String(error)}`;
        this.publish({ type: 'error', message });
        outcome = {
          stopReason: 'failed',
          text: '',
          usage: emptyUsage,
          modelCalls: budget.modelCalls,
          toolCalls: [],
          retries: 0,
          error: { message },
        };
      }
      this.state.modelCalls += outcome.modelCalls;
      this.state.toolCalls += outcome.toolCalls.length;
      // The saved `usage` is the last request's (what the context meter shows after a resume).
      if (outcome.lastRoundUsage) this.state.usage = outcome.lastRoundUsage;
      else if (outcome.usage.inputTokens + outcome.usage.outputTokens > 0) this.state.usage = outcome.usage;
      this.state.cumulativeUsage = addUsage(this.state.cumulativeUsage, outcome.usage);
      this.publish({ type: 'usage', turn: outcome.usage, session: this.state.cumulativeUsage });
      // A turn that ended before its first request (refused, interrupted) is recorded too.
      recordTurn?.();
      await this.checkpoints?.flush();
      await this.agents?.settle();
      // FAIL-1: saved after every turn, a failed one included. REL-3: a save that fails is
      // reported (path and reason) and the turn stays in memory for the next save that can.
      await saving;
      await this.save().catch(() => undefined);
      const result: TurnResult = {
        sessionId: this.state.id,
        ...outcome,
        denied,
        ...(this.lastSaveError ? { saveError: this.lastSaveError } : {}),
      };
      this.publish({ type: 'turn-finished', result });
      return result;
    } finally {
      this.busy = false;
      this.controller = undefined;
    }
  }

  /** MODEL-1, IMG-7, IMG-12 for one user message; throws the MODEL-1 refusal before anything changes. */
  private admit(text: string, hooks: TurnHooks): Promise<void> {
    return admitUserText(text, {
      registry: this.attachments.registry,
      model: { provider: this.state.provider, model: this.state.model, imageInput: this.imageInput },
      ...(hooks.stillHeld ? { stillHeld: hooks.stillHeld() } : {}),
    });
  }

  /**
   * Follow-ups taken after a tool batch follow the same admission as the message that started
   * the turn: a refused one (MODEL-1) is reported and left out; the others join the turn.
   */
  private async admitFollowUps(hooks: TurnHooks): Promise<string[]> {
    const admitted: string[] = [];
    for (const text of hooks.takeFollowUps?.() ?? []) {
      try {
        await this.admit(text, hooks);
        admitted.push(text);
      } catch (error) {
        if (!(error instanceof UsageError)) throw error;
        this.publish({ type: 'error', message: error.message });
      }
    }
    return admitted;
  }

  /**
   * REL-1: saves at every commit point of a turn (the user message, each committed round and
   * tool batch), so a killed process loses at most the round in flight. A failed save does not
   * stop the turn: the state stays in memory and the next save writes it (REL-3).
   */
  private async checkpoint(): Promise<void> {
    try {
      await this.save();
    } catch (error) {
      this.publish({ type: 'error', message: `Could not save session ${this.state.id}: ${(error as Error).message}` });
    }
  }

  /**
   * REL-9: refuses a message that alone (with the system prompt and the reply's room) cannot fit
   * the model's window, before anything is stored or sent, so one oversized paste never poisons
   * the session with a turn that overflows for ever.
   */
  private refuseOversized(text: string): void {
    const window = this.modelSettings.contextWindow;
    if (window === undefined) return;
    const reserved = reservedTokens(this.modelSettings.maxTokens);
    const room = reserved < window ? window - reserved : window;
    const system = estimateTokens(this.state.context[0]?.role === 'system' ? [this.state.context[0]] : []);
    const tokens = tokensOfChars(text.length);
    if (system + tokens <= room) return;
    throw new UsageError(
      `This message is about ${tokens.toLocaleString('en-US')} tokens (${text.length.toLocaleString('en-US')} characters); ` +
        `${this.state.provider}/${this.state.model} has a ${window.toLocaleString('en-US')}-token window ` +
        `(${reserved < window ? `${reserved.toLocaleString('en-US')} kept for the reply, ` : ''}${system.toLocaleString('en-US')} for the system prompt), so it cannot fit and was not sent. ` +
        'Shorten it, or save it to a file in the workspace and ask for the parts that matter.',
    );
  }

  /**
   * Compacts the model context (COMPACT-1..4): forced for /compact, else only over the limit.
   * The result replaces the context in place; the archive is never touched (HIST-2). Returns
   * undefined when nothing ran (under the limit, or the model's window is unknown).
   */
  async runCompaction(
    forced: boolean,
    lastReportedTokens: number | undefined,
    signal: AbortSignal,
    /** A save of the user message still running (REL-1): a compaction sends a request and rewrites the context, so it waits. */
    saving?: Promise<void>,
  ): Promise<CompactionResult | undefined> {
    const window = this.modelSettings.contextWindow;
    if (window === undefined) return undefined;
    const threshold = this.options.config.compactionThreshold;
    const maxTokens = this.modelSettings.maxTokens;
    if (!forced) {
      const limit = compactionLimit({ contextWindow: window, maxTokens, threshold });
      if (!shouldCompact({ estimate: this.meter.estimate(this.state.context), lastReportedTokens, limit })) return undefined;
    }
    await saving;
    // HOOK-1: PreCompact hooks see the session before it is compacted.
    await this.options.beforeCompaction?.(forced ? 'manual' : 'auto', signal);
    const systemText = this.state.context[0]?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';
    this.publish({ type: 'compaction-started', forced });
    let result: CompactionResult;
    try {
      result = await compact({
        context: this.state.context,
        client: this.client,
        contextWindow: window,
        maxTokens,
        threshold,
        forced,
        lastReportedTokens,
        retry: retryPolicyOf(this.options.config),
        clock: this.options.clock ?? systemClock,
        signal,
        envBlock: /<env>[\s\S]*?<\/env>/.exec(systemText)?.[0] ?? '',
        onRetry: (retry) => this.publish({ type: 'retry-scheduled', ...retry }),
      });
    } catch (error) {
      this.publish({ type: 'compaction-finished', outcome: 'interrupted' });
      throw error;
    }
    if (result.outcome === 'applied') {
      this.state.context.splice(0, this.state.context.length, ...result.context);
      this.meter.reset();
    }
    if (result.usage) this.state.cumulativeUsage = addUsage(this.state.cumulativeUsage, result.usage);
    this.publish({
      type: 'compaction-finished',
      outcome: result.outcome,
      ...(result.summary ? { summary: result.summary } : {}),
      ...(result.skipped ? { skipped: result.skipped } : {}),
      ...(result.error ? { error: result.error.message } : {}),
    });
    return result;
  }

  /**
   * A side question over this session's archive (BTW-1..6). It reads the archive and the live
   * system message and writes nothing: no transcript, usage, queue or save.
   */
  askSide(
    question: string,
    thread: readonly SideExchange[],
    signal: AbortSignal,
    publish: (event: SideEvent) => void,
  ): Promise<string> {
    return askSideQuestion({
      question,
      system: this.state.context[0]?.role === 'system' ? this.state.context[0] : undefined,
      archive: [...this.state.archive],
      context: [...this.state.context],
      thread,
      client: this.client,
      contextWindow: this.modelSettings.contextWindow,
      maxTokens: this.modelSettings.maxTokens,
      retry: retryPolicyOf(this.options.config),
      clock: this.options.clock ?? systemClock,
      signal,
      publish,
    });
  }

  /** /compact: summarises older turns now (COMPACT-4); refused while a turn runs. */
  async compactNow(): Promise<CompactionResult | undefined> {
    if (this.busy) throw new UsageError('/compact cannot run during a turn; wait for it or press Ctrl+C.');
    this.busy = true;
    const controller = new AbortController();
    this.controller = controller;
    try {
      const result = await this.runCompaction(true, undefined, controller.signal);
      if (result?.outcome === 'applied') await this.save();
      return result;
    } finally {
      this.busy = false;
      this.controller = undefined;
    }
  }

  /** Switching Plan/Work replaces the first system message; the conversation is otherwise unchanged. */
  setMode(mode: 'plan' | 'work'): void {
    this.modeNow = mode;
    const system = systemMessage(
      buildSystemPrompt({
        mode,
        workspace: this.options.workspace,
        home: this.options.home,
        provider: this.state.provider,
        model: this.state.model,
        ...extensionOptions(this.options),
      }),
    );
    if (this.state.context[0]?.role === 'system') this.state.context[0] = system;
    else this.state.context.unshift(system);
  }

  /** Follow-ups saved with the session (restored at resume). */
  get queued(): readonly string[] {
    return this.state.queued;
  }

  /** Saves the queue with the session as it changes, so a crash does not lose queued text. */
  async setQueued(items: readonly string[]): Promise<void> {
    this.state.queued = [...items];
    if (archiveLength(this.state) > 0 || items.length > 0) await this.save();
  }

  get workspace(): string {
    return this.options.workspace;
  }

  get home(): string {
    return this.options.home;
  }

  get openOptions(): SessionOptions {
    return this.options;
  }

  /** Counters and usage for /status and /stats. */
  snapshot(): SessionSnapshot {
    const state = this.state;
    return {
      id: this.state.id,
      workspace: this.options.workspace,
      provider: this.state.provider,
      model: this.state.model,
      createdUtc: this.state.createdUtc,
      userTurns: this.state.userTurns,
      modelCalls: this.state.modelCalls,
      toolCalls: this.state.toolCalls,
      lastUsage: this.state.usage,
      cumulativeUsage: this.state.cumulativeUsage,
      archiveMessages: archiveLength(this.state),
      contextMessages: this.state.context.length,
      // Read from the archive only when asked (/stats): a resume leaves a long archive on disk.
      get toolShare() {
        const toolCounts = new Map<string, number>();
        for (const message of state.archive) {
          for (const part of message.content) {
            if (part.type === 'tool-call') toolCounts.set(part.name, (toolCounts.get(part.name) ?? 0) + 1);
          }
        }
        return [...toolCounts.entries()].sort((a, b) => b[1] - a[1]).map(([name, count]) => ({ name, count }));
      },
    };
  }

  /** The whole session in the reference's single-file shape (export, fork). */
  exportJson(): string {
    return serialiseSession(this.state);
  }

  /**
   * Copies transcripts, counters and usage baseline to a new id and saves it (reference §4.5);
   * the source stays untouched. Returns the new id.
   */
  async forkTo(): Promise<string> {
    // The copy is made from memory: a source that cannot be saved (disk full, changed by another
    // process) is exactly what a fork rescues, so its own save may fail.
    if (!this.options.readOnly) await this.save().catch(() => undefined);
    const now = isoTime();
    const copy: SessionState = {
      ...this.state,
      id: newSessionId(),
      createdUtc: now,
      updatedUtc: now,
      context: [...this.state.context],
      archive: [...this.state.archive],
      queued: [],
    };
    await SessionFiles.create(this.options.home, copy.id).save(copy);
    return copy.id;
  }

  /**
   * IMG-1/IMG-5: the request sees typed image content for prefixed markers when the model takes
   * images (each image fitted to the provider's limits, the original untouched), and plain
   * text without the prefix otherwise. An image that cannot be read is left as its marker,
   * with one note per image.
   */
  private async prepareMessages(messages: ChatMessage[]): Promise<ChatMessage[]> {
    // The images of the previous request were taken, since this round follows a successful one.
    for (const n of this.lastRequestImages) this.acceptedImages.add(n);
    this.lastRequestImages = new Set();
    if (!this.imageInput) return projectMessages(messages, undefined);
    const numbers = new Set([...referencedImageNumbers(messages)].filter((n) => !this.refusedImages.has(n)));
    if (numbers.size === 0) return projectMessages(messages, new Map());
    const { images, unavailable } = await this.attachments.imagesForRequest(numbers, this.protocol);
    for (const n of images.keys()) this.lastRequestImages.add(n);
    for (const missing of unavailable) {
      if (this.reportedUnavailable.has(missing.number)) continue;
      this.reportedUnavailable.add(missing.number);
      this.publish({ type: 'note', text: `[Image #${missing.number}] is not sent: ${missing.detail}` });
    }
    return projectMessages(messages, images);
  }

  readonly reportedUnavailable = new Set<number>();
  /** AGENT-1..4: the task tool and its children (undefined when off or without tools). */
  private agents: AgentRuntime | undefined;
  private modeNow: 'plan' | 'work' | undefined;

  /** What the session lends its children (CORE-6: prompts, tools, approval, persistence, display stay here). */
  private agentHost(): AgentHost {
    const env = this.options.env ?? process.env;
    return {
      home: this.options.home,
      workspace: this.options.workspace,
      userHome: this.options.userHome,
      config: this.options.config,
      retry: retryPolicyOf(this.options.config),
      clock: this.options.clock ?? systemClock,
      parentSessionId: () => this.state.id,
      mode: () => this.modeNow ?? this.options.mode ?? 'work',
      parentClient: () => this.client,
      clientFor: async (ref) => {
        const slash = ref.indexOf('/');
        const [provider, model] = slash > 0 ? [ref.slice(0, slash), ref.slice(slash + 1)] : [this.state.provider, ref];
        return (await buildClient(this.options, provider, model, env)).client;
      },
      thinking: () => this.thinking,
      envBlock: () => envBlockOf(this.state.context[0]),
      prepareMessages: (messages) => this.prepareMessages(messages),
      adoptToolResults: (results) => this.adoptToolResults(results),
      imageParts: (numbers) => imagePartsOf(this.attachments, numbers),
    };
  }

  /** Images in the last request, images a provider has taken, and images it refused. */
  private lastRequestImages = new Set<number>();
  private readonly acceptedImages = new Set<number>();
  private readonly refusedImages = new Set<number>();
  private readonly meter = new ContextMeter();

  private get protocol(): import('@crystal/providers').Protocol {
    return selectModel(this.options.config, { provider: this.state.provider, model: this.state.model }).provider.protocol;
  }

  /**
   * IMG-18: images in tool results are stored and replaced by tagged markers, so the model sees
   * them on the next round and the transcript keeps markers (WIRE-4). A text-only turn refuses
   * them with a clear tool error (IMG-19) instead of dropping them.
   */
  private async adoptToolResults(results: ToolResultPart[]): Promise<ToolResultPart[]> {
    const out: ToolResultPart[] = [];
    for (const result of results) {
      if (!result.content.some((c) => c.type === 'image')) {
        // IMG-3: text a tool produced never turns into an image, even if it holds the prefix.
        out.push({
          ...result,
          content: result.content.map((c) => (c.type === 'text' ? { type: 'text', text: stripMarkerPrefix(c.text) } : c)),
        });
        continue;
      }
      if (!this.imageInput) {
        out.push({ ...result, isError: true, content: [{ type: 'text', text: 'This model cannot accept tool images.' }] });
        continue;
      }
      const content: ToolResultContent[] = [];
      try {
        for (const part of result.content) {
          if (part.type === 'text') content.push({ type: 'text', text: stripMarkerPrefix(part.text) });
          else if (part.data !== undefined) {
            const attached = await this.attachments.attach(Buffer.from(part.data, 'base64'), {
              declaredMime: part.mime,
              name: part.name ?? result.name,
              draft: false,
            });
            content.push({ type: 'text', text: taggedMarker(attached.number) });
          } else if (part.uri !== undefined) {
            const attached = await this.attachments.attachUri(part.uri, { mime: part.mime, draft: false });
            content.push({ type: 'text', text: taggedMarker(attached.number) });
          }
        }
        out.push({ ...result, content });
      } catch (error) {
        out.push({
          ...result,
          isError: true,
          content: [{ type: 'text', text: `The tool returned an image that was refused: ${(error as Error).message}` }],
        });
      }
    }
    return out;
  }

  /**
   * Images never poison a session: when the provider refuses a request that carried images it
   * had not taken before, those images are left out from now on (their markers stay as text),
   * the operator gets a note, and the round runs once more.
   */
  private async refuseImages(error: ProviderError): Promise<boolean> {
    if (!/image/i.test(error.message) || !['bad_request', 'invalid_prompt', 'unsupported', 'unknown'].includes(error.kind))
      return false;
    const fresh = [...this.lastRequestImages].filter((n) => !this.acceptedImages.has(n));
    if (fresh.length === 0) return false;
    for (const n of fresh) this.refusedImages.add(n);
    this.lastRequestImages = new Set();
    const list = fresh.map((n) => `[Image #${n}]`).join(', ');
    this.publish({
      type: 'note',
      text: `${this.state.provider} refused ${list} (${error.message}); the request is sent again without ${fresh.length === 1 ? 'it' : 'them'}.`,
    });
    return true;
  }

  /** The archive as readable Markdown (HIST-5: exports read the archive); the system prompt is left out. */
  exportMarkdown(): string {
    const lines: string[] = [`# Session ${this.state.id}`, '', `Workspace: ${this.options.workspace}`, ''];
    for (const message of this.state.archive) {
      for (const part of message.content) {
        if (part.type === 'text' && message.role !== 'system') {
          lines.push(`## ${message.role === 'user' ? 'User' : 'Assistant'}`, '', stripMarkerPrefix(part.text), '');
        } else if (part.type === 'tool-call') lines.push(`**Tool call** \`${part.name}\` ${part.arguments}`, '');
        else if (part.type === 'tool-result') {
          const text = part.content.map((c) => (c.type === 'text' ? stripMarkerPrefix(c.text) : '')).join('');
          lines.push(`**Tool result** (${part.isError ? 'failure' : 'success'})`, '', '```', text, '```', '');
        }
      }
    }
    return `${lines.join('\n')}\n`;
  }

  /** IMG-15: the JSON export keeps marker provenance and inlines the available image bytes. */
  async exportJsonWithImages(): Promise<string> {
    const referenced = referencedImageNumbers(this.state.archive, this.state.context);
    const records = await this.attachments.registry.toRecords(referenced);
    const { records: inlined } = await exportSessionImages(records, this.attachments.store);
    return serialiseSession({ ...this.state, images: inlined });
  }

  async save(): Promise<string> {
    if (this.options.readOnly || (this.options.offline && !this.options.offlineWriter))
      throw new UsageError(`Session ${this.state.id} was opened read-only here and is not saved.`);
    this.state.updatedUtc = isoTime();
    let path: string;
    try {
      // IMG-12: only images the archive or the model context still mention are kept (HIST-8).
      this.state.images = await this.attachments.registry.toRecords(this.referencedImages());
      this.state.imageMarkersTagged = true;
      path = await this.files.save(this.state);
    } catch (error) {
      // REL-3: never swallowed. Reported once per failure (not on every later attempt), kept in
      // `saveError` so a surface never claims "saved", and retried by the next save.
      const message = error instanceof Error ? error.message : String(error);
      const target = sessionPath(this.options.home, this.state.id);
      if (this.lastSaveError?.message !== message) {
        this.publish({
          type: 'error',
          message: `Session ${this.state.id} was not saved: ${message} The conversation is kept in memory and saved at the next save that can.`,
        });
      }
      this.lastSaveError = { path: target, message };
      throw error;
    }
    if (this.lastSaveError) this.publish({ type: 'note', text: `Session ${this.state.id} is saved again (${path}).` });
    this.lastSaveError = undefined;
    this.publish({ type: 'session-saved', path });
    return path;
  }
}

async function buildClient(
  options: SessionOptions,
  provider: string | undefined,
  model: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<{ client: StreamingChatClient; model: ModelSettings }> {
  const selection = selectModel(options.config, { provider, model });
  const apiKey = resolveApiKey(options.home, selection.providerName, selection.provider, env);
  const client = await createChatClient(
    {
      name: selection.providerName,
      protocol: selection.provider.protocol,
      baseUri: selection.provider.baseUri,
      ...(apiKey ? { apiKey } : {}),
    },
    selection.model,
    { ...clientOptionsOf(options.home, options.config, env), ...options.clientOptions },
  );
  return { client, model: selection.model };
}

/**
 * Resume of images (IMG-6, IMG-13, IMG-14): an older file's markers are tagged first, then each
 * saved image is checked in the media store; damaged or missing files give one note and keep
 * their reference, so restoring the file repairs the session.
 */
async function openImages(
  options: SessionOptions,
  state: SessionState,
): Promise<{ attachments: AttachmentService; notes: string[]; unavailable: readonly number[] }> {
  const store = MediaStore.forHome(options.home, imageLimitsFrom(options.config.images));
  if (!state.imageMarkersTagged) {
    const saved = new Set(parseSessionImageRecords(state.images).records.map((r) => r.number));
    state.archive = state.archive.map((m) => tagLegacyMessage(m, saved));
    state.context = state.context.map((m) => tagLegacyMessage(m, saved));
    state.imageMarkersTagged = true;
  }
  if (state.images.length === 0) return { attachments: new AttachmentService({ store }), notes: [], unavailable: [] };
  const restored = await restoreSessionImages(state.images, store, {
    // An archive left on disk is not read for this: its images are the head's records.
    alsoReferenced: referencedImageNumbers(archiveInMemory(state), state.context),
  });
  return {
    attachments: new AttachmentService({ store, registry: restored.registry }),
    notes: restored.notes,
    unavailable: restored.unavailable,
  };
}

function offlineClient(provider: string, model: string): { client: StreamingChatClient; model: ModelSettings } {
  const client: StreamingChatClient = {
    provider,
    model,
    capabilities: { imageInput: false },
    stream: () => {
      throw new UsageError('This session was opened without a model client; open it with crystal or crystal run to continue it.');
    },
  };
  return { client, model: { id: model } };
}
