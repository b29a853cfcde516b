/**
 * Child agents (AGENT-1..4, CORE-6). The `task` tool hands a self-contained job to a child: a
 * fresh context (the profile's system prompt and the task), the profile's subset of the
 * session's tools, and the same turn loop as the session (`runTurn`, not a copy). The host
 * keeps what CORE-6 says it keeps: it supplies the prompt's environment, the tools, the
 * approval policy (every call the child makes is asked of the same operator, labelled with
 * the child's path), persistence (a linked session per child) and the display (the child's
 * events reach the surfaces wrapped with its path). What the child gets from its parent:
 *
 * - the parent turn's `RunBudget` object itself, so the child's model calls, tool calls and
 *   time count against `executionBudget` and stop it with the same stop reasons;
 * - the parent turn's abort signal (through the tool call), so cancelling the parent cancels it;
 * - a result: the child's final answer as the `task` call's result, or an error result that
 *   says why it stopped. Nothing else of the child enters the parent's model context.
 */
import {
  type ChatMessage,
  emptyUsage,
  addUsage,
  type RunBudget,
  type StreamingChatClient,
  systemMessage,
  type ThinkingEffort,
  type ToolContext,
  type ToolDefinition,
  type ToolExceptionMapper,
  ToolExecutor,
  type ToolInvocationPolicy,
  type ToolOutput,
  type ToolResultContent,
  type ToolResultPart,
  type Usage,
  userMessage,
  isoTime,
} from '@crystal/core';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { EngineEvent, StopReason } from '../events.js';
import type { RetryPolicy } from '../retry-policy.js';
import { newSessionId } from '../session-store.js';
import { ToolFailure } from '../tools/builtin/failure.js';
import { runTurn } from '../turn.js';
import { taggedMarkerNumbers } from '../images/markers.js';
import { type ChildLink, listChildren, saveChild } from './child-store.js';
import { childPath, currentAgentPath, runAsAgent } from './lineage.js';
import { type AgentProfile, discoverProfiles, GENERAL_PROMPT, READ_ONLY_AGENT_TOOLS } from './profiles.js';

export const TASK_TOOL = 'task';
export const DEFAULT_MAX_PARALLEL_AGENTS = 3;

/** Tools a child never gets: no nesting, no questions to the operator, no writes to the parent's todo list. */
const NOT_FOR_CHILDREN = new Set([TASK_TOOL, 'question', 'todowrite', 'todoread']);
/** AGENT-1: in Plan a child is read-only, whatever its profile names. */
const PLAN_REFUSED = new Set(['edit', 'write', 'bash']);

/** What the session lends its children (CORE-6: the host owns prompts, tools, approval, persistence, display). */
export interface AgentHost {
  readonly home: string;
  readonly workspace: string;
  readonly userHome?: string | undefined;
  readonly config: Config;
  readonly retry: RetryPolicy;
  readonly clock: Clock;
  parentSessionId(): string;
  mode(): 'plan' | 'work';
  /** The session's client now (a profile without a model uses it). */
  parentClient(): StreamingChatClient;
  /** A client for a profile's model (`provider/model`, or a model of the session's provider). */
  clientFor(model: string): Promise<StreamingChatClient>;
  thinking(): ThinkingEffort | undefined;
  /** The `<env>` block of the session's system prompt (workspace, platform, date, mode). */
  envBlock(): string;
  /** IMG-1 / IMG-18 for the child's rounds, as for the parent's. */
  prepareMessages?(messages: ChatMessage[]): Promise<ChatMessage[]>;
  adoptToolResults?(results: ToolResultPart[]): Promise<ToolResultPart[]>;
  /** The image parts of session images by number (unavailable ones left out). */
  imageParts?(numbers: readonly number[]): Promise<ToolResultContent[]>;
}

/** The parent turn a `task` call runs in. */
export interface TurnScope {
  readonly budget: RunBudget;
  readonly publish: (event: EngineEvent) => void;
  /** The parent's catalog this round (already the Plan catalog in Plan). */
  readonly tools: readonly ToolDefinition[];
  /** The session's approval policy (the same operator for every agent). */
  readonly policy: ToolInvocationPolicy;
  readonly mapException?: ToolExceptionMapper | undefined;
}

interface TaskInput {
  readonly description: string;
  readonly prompt: string;
  readonly subagent_type: string;
}

export class AgentRuntime {
  /** Per parent session: the last `#n` used per profile (seeded from the saved children). */
  private readonly counters = new Map<string, Map<string, number>>();
  private readonly clients = new Map<string, StreamingChatClient>();
  private readonly noted = new Set<string>();
  /** Child transcript saves still being written. */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly host: AgentHost) {}

  /** Resolves when every child transcript started so far is on disk (the session awaits it before a turn ends). */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** How many children of one batch run at once (`agents.maxParallel`). */
  get maxParallel(): number {
    return this.host.config.agents?.maxParallel ?? DEFAULT_MAX_PARALLEL_AGENTS;
  }

  profiles(): ReturnType<typeof discoverProfiles> {
    return discoverProfiles(
      { home: this.host.home, workspace: this.host.workspace, userHome: this.host.userHome },
      this.host.config.agents?.explore?.model,
    );
  }

  /** The `task` tool of one parent turn. */
  taskTool(scope: TurnScope): ToolDefinition {
    const catalog = this.profiles();
    // A skipped profile file is named once per session, not every round.
    for (const note of catalog.notes) {
      if (this.noted.has(note)) continue;
      this.noted.add(note);
      scope.publish({ type: 'note', text: note });
    }
    const names = [...catalog.profiles.keys()];
    const list = [...catalog.profiles.values()].map((p) => `- ${p.name}: ${p.description}`).join('\n');
    return {
      name: TASK_TOOL,
      description: [
        'Hand a self-contained task to a sub-agent that works on its own fresh context and returns only its final answer.',
        'Use it for searches across many files, investigations and independent pieces of work, so your own context stays small.',
        'Several task calls in one reply run in parallel. The sub-agent sees nothing of this conversation: put everything it needs in the prompt.',
        'Agents:',
        list,
      ].join('\n'),
      parameters: {
        type: 'object',
        properties: {
          description: { type: 'string', description: 'A short (3 to 5 words) label for the task.' },
          prompt: { type: 'string', description: 'The whole task for the agent, with every detail it needs.' },
          subagent_type: { type: 'string', enum: names, description: 'Which agent runs the task (default general).' },
        },
        required: ['description', 'prompt'],
        additionalProperties: false,
      },
      parallel: true,
      execute: (input, context) => this.run(parseTaskInput(input), catalog.profiles, scope, context),
    };
  }

  private async run(
    input: TaskInput,
    profiles: ReadonlyMap<string, AgentProfile>,
    scope: TurnScope,
    context: ToolContext,
  ): Promise<ToolOutput> {
    const profile = profiles.get(input.subagent_type);
    if (!profile) {
      throw new ToolFailure(
        `Unknown agent '${input.subagent_type}'. Agents: ${[...profiles.keys()].join(', ')}. Custom agents are Markdown files in .crystal/agents/.`,
      );
    }
    const parentId = this.host.parentSessionId();
    const path = childPath(currentAgentPath(), profile.name, this.nextNumber(parentId, profile.name));
    const client = await this.clientOf(profile);
    const { tools, missing } = childTools(profile, scope.tools, this.host.mode());
    const childId = newSessionId();
    const system = systemMessage(`${profile.prompt ?? GENERAL_PROMPT}\n\n${this.host.envBlock()}`);
    const task = userMessage(input.prompt);
    const childContext: ChatMessage[] = [system, task];
    const archive: ChatMessage[] = [task];
    const createdUtc = isoTime();
    let modelCalls = 0;
    let usage: Usage = emptyUsage;
    const link = (state: ChildLink['state']): ChildLink => ({
      path,
      profile: profile.name,
      parentSessionId: parentId,
      callId: context.callId,
      description: input.description,
      state,
    });
    let saveFailed = false;
    // Saves of one child run one after another (the last written state wins); the last one
    // overlaps the parent's next steps and is awaited by `settle()` before the parent turn ends.
    let saving: Promise<void> = Promise.resolve();
    const save = (state: ChildLink['state'], toolCalls: number): Promise<void> => {
      const archiveNow = [...archive];
      saving = saving.then(() => write(state, toolCalls, archiveNow));
      return saving;
    };
    const write = async (state: ChildLink['state'], toolCalls: number, archive: ChatMessage[]): Promise<void> => {
      try {
        await saveChild(this.host.home, {
          id: childId,
          workspace: this.host.workspace,
          provider: client.provider,
          model: client.model,
          createdUtc,
          agent: link(state),
          archive,
          modelCalls,
          toolCalls,
          usage,
        });
      } catch (error) {
        // The child goes on: its transcript is lost, not its work; the operator hears of it once.
        if (!saveFailed)
          scope.publish({ type: 'note', text: `The transcript of ${path} was not saved: ${(error as Error).message}` });
        saveFailed = true;
      }
    };
    let toolCallsSoFar = 0;
    const publish = (event: EngineEvent): void => {
      if (event.type === 'round-started') modelCalls++;
      if (event.type === 'round-closed' && event.usage) usage = addUsage(usage, event.usage);
      if (event.type === 'tool-calls') toolCallsSoFar += event.calls.length;
      scope.publish({ type: 'agent-event', agent: path, event });
    };
    scope.publish({
      type: 'agent-started',
      agent: path,
      profile: profile.name,
      description: input.description,
      callId: context.callId,
      childSessionId: childId,
      provider: client.provider,
      model: client.model,
    });
    if (missing.length > 0)
      publish({
        type: 'note',
        text: `${path}: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not available here; left out.`,
      });
    // On disk before the child's first request: a crash from here on leaves a linked transcript.
    await save('running', 0);
    const prepare = this.host.prepareMessages?.bind(this.host);
    const adopt = this.host.adoptToolResults?.bind(this.host);
    const ran = await runAsAgent(path, () =>
      runTurn({
        client,
        executorForRound: () =>
          tools.length === 0
            ? undefined
            : new ToolExecutor({
                tools,
                policy: scope.policy,
                ...(scope.mapException ? { mapException: scope.mapException } : {}),
              }),
        context: childContext,
        commit: (message) => archive.push(message),
        budget: scope.budget,
        retry: this.host.retry,
        clock: this.host.clock,
        ...(this.host.thinking() ? { thinking: this.host.thinking() as ThinkingEffort } : {}),
        signal: context.signal,
        publish,
        checkpoint: () => save('running', toolCallsSoFar),
        ...(prepare ? { prepareMessages: prepare } : {}),
        ...(adopt ? { adoptToolResults: adopt } : {}),
      }),
    );
    // The parent's deadline may fire first and abort the child through the call's signal: the
    // child then stopped on the shared time budget, not on a cancel.
    const outcome =
      ran.stopReason === 'interrupted' && scope.budget.durationExceeded()
        ? { ...ran, stopReason: 'duration_limit_reached' as const }
        : ran;
    const answer = outcome.stopReason === 'completed' ? finalAnswer(childContext) : '';
    const last = save(outcome.stopReason, outcome.toolCalls.length);
    this.pending.add(last);
    void last.finally(() => this.pending.delete(last));
    scope.publish({
      type: 'agent-finished',
      agent: path,
      callId: context.callId,
      childSessionId: childId,
      stopReason: outcome.stopReason,
      answer,
      modelCalls,
      toolCalls: outcome.toolCalls.length,
    });
    if (outcome.stopReason === 'completed') {
      if (answer === '') return `Agent ${path} finished without an answer.`;
      // Images the child chose: ones it saw in its own tool results and names in its answer.
      const chosen = chosenImages(answer, childContext);
      const images = chosen.length > 0 && this.host.imageParts ? await this.host.imageParts(chosen) : [];
      return images.length === 0 ? answer : [{ type: 'text', text: answer }, ...images];
    }
    throw new ToolFailure(stopText(path, outcome.stopReason, outcome.error?.message, outcome.text));
  }

  private nextNumber(parentId: string, profile: string): number {
    let counts = this.counters.get(parentId);
    if (!counts) {
      counts = new Map();
      for (const child of listChildren(this.host.home, parentId)) {
        const n = Number(child.path.slice(child.path.lastIndexOf('#') + 1));
        if (Number.isInteger(n)) counts.set(child.profile, Math.max(counts.get(child.profile) ?? 0, n));
      }
      this.counters.set(parentId, counts);
    }
    const n = (counts.get(profile) ?? 0) + 1;
    counts.set(profile, n);
    return n;
  }

  private async clientOf(profile: AgentProfile): Promise<StreamingChatClient> {
    if (profile.model === undefined) return this.host.parentClient();
    const cached = this.clients.get(profile.model);
    if (cached) return cached;
    try {
      const client = await this.host.clientFor(profile.model);
      this.clients.set(profile.model, client);
      return client;
    } catch (error) {
      const where = profile.source === 'built-in' ? 'config.json agents.explore.model' : `"model" in ${profile.source}`;
      throw new ToolFailure(
        `Agent '${profile.name}' cannot use model '${profile.model}': ${(error as Error).message} Fix ${where}, or remove it to use the session's model.`,
      );
    }
  }
}

function parseTaskInput(input: unknown): TaskInput {
  const value = (input && typeof input === 'object' ? input : {}) as Record<string, unknown>;
  const prompt = typeof value.prompt === 'string' ? value.prompt.trim() : '';
  if (prompt === '') throw new ToolFailure('task needs a "prompt": the whole task for the agent.');
  const type = value.subagent_type;
  if (type !== undefined && typeof type !== 'string') throw new ToolFailure('task "subagent_type" must be an agent name.');
  return {
    prompt,
    description: typeof value.description === 'string' && value.description.trim() !== '' ? value.description.trim() : 'task',
    subagent_type: typeof type === 'string' && type.trim() !== '' ? type.trim() : 'general',
  };
}

/**
 * The child's tools: the parent's catalog this round (in Plan that is the Plan catalog, and the
 * child is read-only with it), minus what children never get, narrowed by the profile.
 */
export function childTools(
  profile: AgentProfile,
  parent: readonly ToolDefinition[],
  mode: 'plan' | 'work',
): { tools: ToolDefinition[]; missing: string[] } {
  let tools = parent.filter((t) => !NOT_FOR_CHILDREN.has(t.name));
  if (mode === 'plan') tools = tools.filter((t) => !PLAN_REFUSED.has(t.name));
  if (profile.readOnly) tools = tools.filter((t) => READ_ONLY_AGENT_TOOLS.includes(t.name));
  if (profile.tools === undefined) return { tools, missing: [] };
  const wanted = new Set(profile.tools);
  const available = new Set(tools.map((t) => t.name));
  return {
    tools: tools.filter((t) => wanted.has(t.name)),
    missing: [...wanted].filter((name) => !available.has(name) && !NOT_FOR_CHILDREN.has(name) && !profile.readOnly),
  };
}

/** `[Image #N]` in the answer for images that reached the child through its own tool results. */
function chosenImages(answer: string, context: readonly ChatMessage[]): number[] {
  const seen = new Set<number>();
  for (const message of context) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      for (const c of part.content) if (c.type === 'text') for (const n of taggedMarkerNumbers(c.text)) seen.add(n);
    }
  }
  const named = [...answer.matchAll(/\[Image #([1-9][0-9]*)\]/g)].map((m) => Number(m[1]));
  return [...new Set(named)].filter((n) => seen.has(n));
}

/** The child's last assistant text (the answer of its final round). */
function finalAnswer(context: readonly ChatMessage[]): string {
  const last = context.at(-1);
  if (last?.role !== 'assistant') return '';
  return last.content
    .map((p) => (p.type === 'text' ? p.text : ''))
    .join('')
    .trim();
}

const STOP_WHY: Partial<Record<StopReason, string>> = {
  interrupted: 'it was cancelled',
  model_call_limit_reached:
    "the turn's shared model-call budget is spent (executionBudget.maximumModelCalls counts the main agent and its sub-agents together)",
  tool_call_limit_reached:
    "the turn's shared tool-call budget is spent (executionBudget.maximumToolCalls counts the main agent and its sub-agents together)",
  duration_limit_reached: "the turn's shared time budget is spent (executionBudget.maximumDurationSeconds)",
  output_truncated: 'its answer was cut off at the output token limit',
  content_filtered: "the provider's content filter stopped its answer",
  context_overflow: 'its context no longer fits the model window',
};

function stopText(path: string, stop: StopReason, error: string | undefined, partial: string): string {
  const why = stop === 'failed' ? `it failed${error ? `: ${error}` : ''}` : (STOP_WHY[stop] ?? stop);
  const text = partial.trim();
  return `Agent ${path} stopped before it finished (${stop}): ${why}.${text === '' ? '' : `\nWhat it had written so far:\n${text}`}`;
}
