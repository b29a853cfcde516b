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
  type ToolInvocationPolicy,
  systemMessage,
  userMessage,
} from '@crystal/core';
import { type ClientOptions, createChatClient } from '@crystal/providers';
import { selectModel } from './catalog.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config/schema.js';
import { resolveApiKey } from './credentials.js';
import type { EngineEvent, EngineListener, TurnResult } from './events.js';
import { retryPolicyOf } from './retry-policy.js';
import { loadSession, newSessionId, type SessionState, saveSession } from './session-store.js';
import { buildSystemPrompt } from './system-prompt.js';
import { runTurn } from './turn.js';
import { UsageError } from './errors.js';
import { budgetLimitsOf } from './budget.js';

export interface SessionOptions {
  readonly home: string;
  readonly workspace: string;
  readonly config: Config;
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  readonly thinking?: ThinkingEffort | undefined;
  /** Overrides of the configured budget for this process only. */
  readonly limits?: Partial<RunLimits> | undefined;
  readonly resume?: string | undefined;
  readonly tools?: readonly ToolDefinition[];
  readonly policy?: ToolInvocationPolicy;
  readonly clock?: Clock;
  readonly env?: NodeJS.ProcessEnv;
  readonly clientOptions?: ClientOptions;
}

export class Session {
  private readonly listeners = new Set<EngineListener>();
  private controller: AbortController | undefined;
  private busy = false;

  private constructor(
    private readonly options: SessionOptions,
    private readonly state: SessionState,
    private readonly client: StreamingChatClient,
    private readonly limits: RunLimits,
  ) {}

  /** Resolves the model, the key and the client; loads a saved session when resuming. */
  static async open(options: SessionOptions): Promise<Session> {
    const env = options.env ?? process.env;
    const resumed = options.resume ? loadSession(options.home, options.resume) : undefined;
    const selection = selectModel(options.config, { provider: options.provider, model: options.model });
    const apiKey = resolveApiKey(options.home, selection.providerName, selection.provider, env);
    const client = await createChatClient(
      {
        name: selection.providerName,
        protocol: selection.provider.protocol,
        baseUri: selection.provider.baseUri,
        ...(apiKey ? { apiKey } : {}),
      },
      selection.model,
      options.clientOptions,
    );
    const limits = { ...budgetLimitsOf(options.config), ...(options.limits ?? {}) };
    const now = new Date().toISOString();
    const state: SessionState = resumed ?? {
      id: newSessionId(),
      workspace: options.workspace,
      createdUtc: now,
      updatedUtc: now,
      provider: selection.providerName,
      model: selection.model.id,
      context: [],
      archive: [],
      userTurns: 0,
      modelCalls: 0,
      toolCalls: 0,
      usage: emptyUsage,
      cumulativeUsage: emptyUsage,
    };
    state.provider = selection.providerName;
    state.model = selection.model.id;
    // Resume refreshes only the live system prompt.
    const system = systemMessage(
      buildSystemPrompt({ workspace: options.workspace, provider: state.provider, model: state.model }),
    );
    if (state.context[0]?.role === 'system') state.context[0] = system;
    else state.context.unshift(system);
    return new Session(options, state, client, limits);
  }

  get id(): string {
    return this.state.id;
  }

  get provider(): string {
    return this.state.provider;
  }

  get model(): string {
    return this.state.model;
  }

  get isBusy(): boolean {
    return this.busy;
  }

  /** The archive (HIST-5): what resume replays and export reads. */
  history(): readonly ChatMessage[] {
    return this.state.archive;
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
  async send(text: string): Promise<TurnResult> {
    if (this.busy) throw new UsageError('A turn is already running; wait for it or cancel it first.');
    this.busy = true;
    const controller = new AbortController();
    this.controller = controller;
    const clock = this.options.clock ?? systemClock;
    try {
      const user = userMessage(text);
      this.state.context.push(user);
      this.state.archive.push(user);
      this.state.userTurns++;
      this.publish({ type: 'turn-started', text });
      const budget = new RunBudget(this.limits, () => clock.now());
      let denied = false;
      const policy = this.options.policy;
      const executor =
        this.options.tools && this.options.tools.length > 0
          ? new ToolExecutor({
              tools: this.options.tools,
              policy: {
                decide: async (call, signal) => {
                  const decision = policy ? await policy.decide(call, signal) : ({ allow: true } as const);
                  if (!decision.allow) denied = true;
                  return decision;
                },
              },
            })
          : undefined;
      const outcome = await runTurn({
        client: this.client,
        executor,
        context: this.state.context,
        commit: (message) => this.state.archive.push(message),
        budget,
        retry: retryPolicyOf(this.options.config),
        clock,
        ...(this.options.thinking ? { thinking: this.options.thinking } : {}),
        signal: controller.signal,
        publish: this.publish,
      });
      this.state.modelCalls += outcome.modelCalls;
      this.state.toolCalls += outcome.toolCalls.length;
      if (outcome.usage.inputTokens + outcome.usage.outputTokens > 0) this.state.usage = outcome.usage;
      this.state.cumulativeUsage = addUsage(this.state.cumulativeUsage, outcome.usage);
      this.publish({ type: 'usage', turn: outcome.usage, session: this.state.cumulativeUsage });
      const result: TurnResult = { sessionId: this.state.id, ...outcome, denied };
      // FAIL-1: saved after every turn, a failed one included.
      await this.save();
      this.publish({ type: 'turn-finished', result });
      return result;
    } finally {
      this.busy = false;
      this.controller = undefined;
    }
  }

  async save(): Promise<string> {
    this.state.updatedUtc = new Date().toISOString();
    const path = await saveSession(this.options.home, this.state);
    this.publish({ type: 'session-saved', path });
    return path;
  }
}
