/**
 * One turn: model rounds and tool batches until the candidate asks for no tools, a limit stops
 * the turn, or the user cancels (TURN-1..4, RETRY, FIN, TOOL, FAIL, BUDGET).
 */
import {
  addUsage,
  type ChatEvent,
  type ChatMessage,
  type ChatRequest,
  type ContentPart,
  emptyUsage,
  isProviderError,
  type ParsedToolCall,
  ProviderError,
  type RunBudget,
  type StreamingChatClient,
  type ThinkingEffort,
  type ToolExecutor,
  type ToolResultPart,
  type Usage,
} from '@crystal/core';
import type { Clock } from './clock.js';
import type { EngineEvent, StopReason, ToolCallRecord } from './events.js';
import { MARKER_PREFIX } from './images/markers.js';
import { operatorMessage, RetryCounter, type RetryPolicy, retryDelayMs } from './retry-policy.js';

export interface TurnInput {
  readonly client: StreamingChatClient;
  /** TURN-1: asked once per round, so a tool or mode change waits for the next round. */
  readonly executorForRound: () => ToolExecutor | undefined;
  /** The model context; the turn appends to it as rounds commit. */
  readonly context: ChatMessage[];
  /** Called for every message committed to the transcripts. */
  readonly commit: (message: ChatMessage) => void;
  readonly budget: RunBudget;
  readonly retry: RetryPolicy;
  readonly clock: Clock;
  readonly thinking?: ThinkingEffort;
  readonly signal: AbortSignal;
  readonly publish: (event: EngineEvent) => void;
  /** True when a tool call was denied by the operator policy during this turn. */
  readonly wasDenied?: () => boolean;
  /**
   * QUEUE-3: follow-ups queued while the batch ran; taken when a tool batch ends and sent
   * with the next round as user messages (TURN-1: never in the middle of a round).
   */
  readonly takeFollowUps?: () => readonly string[] | Promise<readonly string[]>;
  /**
   * REL-1: awaited at every commit point (an assistant round before its tools run, a tool
   * batch with the follow-ups it let in), so the caller saves what was committed.
   */
  readonly checkpoint?: () => Promise<void>;
  /**
   * REL-1: the save of the user message, still running (it never rejects: a failed save is
   * reported and kept for the next one, REL-3). The first round is built and its connection
   * opened meanwhile; its request is written once the save settles (ChatRequest.sendAfter), so
   * the save's disk waits overlap the request's preparation (issue 22). The turn does not end
   * before it settles.
   */
  readonly saving?: Promise<void>;
  /**
   * COMPACT-1/2: runs before every model round with the previous round's reported tokens;
   * resolves whether the context still fits. The session owns the compactor.
   */
  readonly compactBeforeRound?: (lastReportedTokens: number | undefined, signal: AbortSignal) => Promise<'fits' | 'overflow'>;
  /** IMG-1: turns the round's snapshot into request messages (markers → typed image content). */
  readonly prepareMessages?: (messages: ChatMessage[]) => Promise<ChatMessage[]>;
  /** IMG-18: tool images get markers and reach the next round; text-only turns refuse them. */
  readonly adoptToolResults?: (results: ToolResultPart[]) => Promise<ToolResultPart[]>;
  /**
   * A non-retryable refusal of the round's request (say, an image the provider will not take):
   * resolves true when the caller changed what the next request will carry and the round may
   * run once more.
   */
  readonly onRoundRefused?: (error: ProviderError) => Promise<boolean>;
  /**
   * A tool batch left without results by a crash: the calls in `rerun` (they were waiting for
   * approval) run again, so the operator is asked again; the others get an "interrupted" result
   * and never run twice. Then the turn goes on with the next model round.
   */
  readonly resumeBatch?: { readonly calls: readonly ParsedToolCall[]; readonly rerun: ReadonlySet<string> };
  /**
   * Issue 22: called once a round's request has been handed to the client (an immediate after
   * the step that opens it: written on a reused connection, else waiting for its connection;
   * for a first request that waits for the save of the user message, once that save settled):
   * work that need not come before the request, such as the turn's checkpoint record, starts
   * here instead of delaying it.
   */
  readonly afterRequest?: () => void;
  /** CKPT-1: a tool call began to stream (its name, once the wire gave it): checkpoints may start their first walk. */
  readonly onToolCallStreaming?: (name: string) => void;
  /** CKPT-1: wraps every tool batch (checkpoints scan the files before and after it). */
  readonly aroundBatch?: (calls: readonly ParsedToolCall[], run: () => Promise<ToolResultPart[]>) => Promise<ToolResultPart[]>;
}

export const INTERRUPTED_CALL_TEXT = 'The call was interrupted when the process stopped and was not run again.';

export function interruptedResult(call: ParsedToolCall): ToolResultPart {
  return {
    type: 'tool-result',
    callId: call.id,
    name: call.name,
    content: [{ type: 'text', text: INTERRUPTED_CALL_TEXT }],
    isError: true,
  };
}

/**
 * How an interrupted answer stays in the model context: the text streamed so far, then this
 * mark, as one assistant message, so the next request never holds two user messages in a row
 * and the model knows what it already said (as Codex and Claude Code keep it).
 */
export const INTERRUPTED_ANSWER_MARK = '[Answer interrupted]';

export interface TurnOutcome {
  readonly stopReason: StopReason;
  readonly text: string;
  readonly usage: Usage;
  readonly modelCalls: number;
  readonly toolCalls: ToolCallRecord[];
  readonly retries: number;
  readonly error?: { message: string; kind?: ProviderError['kind']; status?: number };
  /** The last round's reported input + output tokens (COMPACT-3 reads it after the turn). */
  readonly lastReportedTokens?: number;
  /** The last round's reported usage (the context meter: the last request, not the turn's sum). */
  readonly lastRoundUsage?: Usage;
}

interface ReasoningSegment {
  text: string;
  state?: { format: string; data: string };
}

interface RoundResult {
  readonly text: string;
  /** Reasoning blocks in order; a `reasoning-state` event closes the block it belongs to. */
  readonly reasoning: readonly ReasoningSegment[];
  readonly calls: ParsedToolCall[];
  readonly usage?: Usage;
  readonly finish: { reason: string; raw: string };
}

class Interrupted extends Error {
  constructor(readonly partialText: string) {
    super('interrupted');
  }
}

/**
 * The budget stop wins over a retryable failure: the next request (a new round, a retry after
 * a backoff, an immediate RETRY-7 retry, a resend without refused images) may not start.
 */
class BudgetStop extends Error {
  constructor(
    readonly stop: StopReason,
    readonly lastError: ProviderError | undefined,
  ) {
    super(stop);
  }
}

/**
 * Runs one turn. The duration budget is enforced by a deadline that aborts whatever is running
 * (a stream, a retry wait, a tool batch and its process group: BASH-2), like a user cancel.
 */
export async function runTurn(outer: TurnInput): Promise<TurnOutcome> {
  const controller = new AbortController();
  let deadlineHit = false;
  const onAbort = (): void => controller.abort();
  outer.signal.addEventListener('abort', onAbort, { once: true });
  if (outer.signal.aborted) controller.abort();
  const remaining = outer.budget.remainingMs();
  const cancelDeadline =
    remaining === null
      ? () => {}
      : outer.clock.schedule(remaining, () => {
          deadlineHit = true;
          controller.abort();
        });
  try {
    const outcome = await runRounds({ ...outer, signal: controller.signal });
    if (deadlineHit && outcome.stopReason === 'interrupted') return { ...outcome, stopReason: 'duration_limit_reached' };
    return outcome;
  } finally {
    cancelDeadline();
    outer.signal.removeEventListener('abort', onAbort);
    // A turn that ended before its first request was written (a refused connection, a cancel)
    // still ends after the save of its user message: the caller's next save comes after it.
    await outer.saving;
  }
}

async function runRounds(input: TurnInput): Promise<TurnOutcome> {
  let text = '';
  let usage: Usage = emptyUsage;
  let retries = 0;
  let lastReported: number | undefined;
  let lastRoundUsage: Usage | undefined;
  const toolCalls: ToolCallRecord[] = [];
  const outcome = (stopReason: StopReason, error?: TurnOutcome['error']): TurnOutcome => ({
    stopReason,
    text,
    usage,
    modelCalls: input.budget.modelCalls,
    toolCalls,
    retries,
    ...(error ? { error } : {}),
    ...(lastReported === undefined ? {} : { lastReportedTokens: lastReported }),
    ...(lastRoundUsage === undefined ? {} : { lastRoundUsage }),
  });

  const appendResults = async (calls: readonly ParsedToolCall[], raw: ToolResultPart[]): Promise<void> => {
    const results = input.adoptToolResults ? await input.adoptToolResults(raw) : raw;
    // TOOL-3: the exact results, in call order.
    const toolMessage: ChatMessage = { role: 'tool', content: results };
    input.context.push(toolMessage);
    input.commit(toolMessage);
    input.publish({ type: 'tool-results', results });
    for (const [i, res] of results.entries()) toolCalls.push(recordOf(calls[i] as ParsedToolCall, res));
  };
  const sendFollowUps = async (): Promise<void> => {
    for (const followUp of (await input.takeFollowUps?.()) ?? []) {
      const message: ChatMessage = { role: 'user', content: [{ type: 'text', text: followUp }] };
      input.context.push(message);
      input.commit(message);
      input.publish({ type: 'follow-up-sent', text: followUp });
    }
  };

  /** Item 5: the partial answer (or just the mark after a user message) stays in the context. */
  const interrupted = (partialText: string): TurnOutcome => {
    commitInterrupted(input, partialText);
    return outcome('interrupted');
  };

  if (input.resumeBatch) {
    const { calls, rerun } = input.resumeBatch;
    const executor = input.executorForRound();
    input.publish({ type: 'tool-calls', calls });
    const again = calls.filter((c) => rerun.has(c.id));
    const ran = again.length > 0 && executor ? await runBatch(input, again, () => executor.runBatch(again, input.signal)) : [];
    const byId = new Map(ran.map((r) => [r.callId, r]));
    await appendResults(
      calls,
      calls.map((c) => byId.get(c.id) ?? interruptedResult(c)),
    );
    if (input.signal.aborted) return interrupted('');
    await sendFollowUps();
    await input.checkpoint?.();
  }

  for (let round = 1; ; round++) {
    if (input.signal.aborted) return interrupted('');
    const limit = input.budget.beforeModelCall();
    if (limit) return outcome(limit);
    if (input.compactBeforeRound) {
      let fit: 'fits' | 'overflow';
      try {
        fit = await input.compactBeforeRound(lastReported, input.signal);
      } catch (error) {
        if (input.signal.aborted) return interrupted('');
        throw error;
      }
      if (fit === 'overflow') return outcome('context_overflow');
    }

    // TURN-1: snapshot the context and tools for this round.
    const executor = input.executorForRound();
    const snapshot = [...input.context];
    const requestOf = async () => ({
      messages: input.prepareMessages ? await input.prepareMessages(snapshot) : snapshot,
      ...(executor ? { tools: executor.specs } : {}),
      ...(input.thinking ? { thinking: input.thinking } : {}),
      // REL-1: the first round's request waits for the save of the user message.
      ...(round === 1 && input.saving ? { sendAfter: input.saving } : {}),
    });
    let result: RoundResult;
    try {
      try {
        result = await streamWithRetry(input, await requestOf(), round, () => retries++);
      } catch (error) {
        // A provider that refuses an image gets it replaced by a text note; the round runs once more.
        if (!isProviderError(error) || !(await input.onRoundRefused?.(error))) throw error;
        retries++;
        result = await streamWithRetry(input, await requestOf(), round, () => retries++);
      }
    } catch (error) {
      if (error instanceof Interrupted || input.signal.aborted)
        return interrupted(error instanceof Interrupted ? error.partialText : '');
      if (error instanceof DurationExceeded) return outcome('duration_limit_reached');
      if (error instanceof BudgetStop) {
        if (!error.lastError) return outcome(error.stop);
        const message = `${error.lastError.message} (not retried: the turn's model call budget is spent)`;
        input.publish({ type: 'note', text: message });
        return outcome(error.stop, {
          message,
          kind: error.lastError.kind,
          ...(error.lastError.status !== undefined ? { status: error.lastError.status } : {}),
        });
      }
      const provider = isProviderError(error) ? error : undefined;
      const message = provider ? provider.message : (error as Error).message;
      input.publish({ type: 'error', message, ...(provider ? { kind: provider.kind } : {}) });
      // FAIL-1: stop with `failed`; the caller saves the transcript with the user message.
      return outcome('failed', {
        message,
        ...(provider ? { kind: provider.kind } : {}),
        ...(provider?.status !== undefined ? { status: provider.status } : {}),
      });
    }
    if (result.usage) {
      usage = addUsage(usage, result.usage);
      lastReported = result.usage.inputTokens + result.usage.outputTokens;
      lastRoundUsage = result.usage;
    }
    // The turn's text keeps its rounds apart (a paragraph break), as the transcript shows them.
    text = text === '' || result.text === '' ? text + result.text : `${text}\n\n${result.text}`;
    input.publish({ type: 'round-closed', round, finish: result.finish.raw, ...(result.usage ? { usage: result.usage } : {}) });

    // FIN-1..4: the finish-reason gate runs before any tool.
    const reason = result.finish.reason;
    if (reason === 'length') {
      commitAssistant(input, result, []);
      return outcome('output_truncated');
    }
    if (reason === 'content_filter') {
      commitAssistant(input, result, []);
      return outcome('content_filtered');
    }
    if (reason !== 'stop' && reason !== 'tool_calls') {
      commitAssistant(input, result, []);
      const message = `Model stopped with finish reason '${result.finish.raw}'.`;
      input.publish({ type: 'error', message });
      return outcome('failed', { message });
    }

    if (result.calls.length === 0 || !executor) {
      commitAssistant(input, result, []);
      return outcome('completed');
    }
    // TOOL-2: the whole batch must fit the remaining tool-call budget.
    if (!input.budget.fitsToolBatch(result.calls.length)) {
      commitAssistant(input, result, []);
      return outcome('tool_call_limit_reached');
    }
    commitAssistant(input, result, result.calls);
    // REL-1: the round is on disk before its tools run (a crash there leaves calls that resume closes).
    await input.checkpoint?.();
    input.budget.toolCalls += result.calls.length;
    input.publish({ type: 'tool-calls', calls: result.calls });
    const calls = result.calls;
    await appendResults(calls, await runBatch(input, calls, () => executor.runBatch(calls, input.signal)));
    if (input.signal.aborted) return interrupted('');
    await sendFollowUps();
    await input.checkpoint?.();
  }
}

function runBatch(
  input: TurnInput,
  calls: readonly ParsedToolCall[],
  run: () => Promise<ToolResultPart[]>,
): Promise<ToolResultPart[]> {
  return input.aroundBatch ? input.aroundBatch(calls, run) : run();
}

function recordOf(call: ParsedToolCall, result: ToolResultPart): ToolCallRecord {
  return {
    callId: call.id,
    name: call.name,
    arguments: call.arguments,
    status: result.isError ? 'failure' : 'success',
    output: result.content.map((c) => (c.type === 'text' ? c.text : `[image ${c.mime}]`)).join(''),
  };
}

function commitAssistant(input: TurnInput, result: RoundResult, calls: readonly ParsedToolCall[]): void {
  const content: ContentPart[] = [];
  for (const segment of result.reasoning) {
    if (segment.text === '' && !segment.state) continue;
    content.push({ type: 'reasoning', text: segment.text, ...(segment.state ? { state: segment.state } : {}) });
  }
  // IMG-3: model output never carries the image provenance prefix into the transcript.
  if (result.text !== '') content.push({ type: 'text', text: result.text.replaceAll(MARKER_PREFIX, '') });
  for (const call of calls) {
    content.push({
      type: 'tool-call',
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      ...(call.state ? { state: call.state } : {}),
    });
  }
  if (content.length === 0) return;
  const message: ChatMessage = { role: 'assistant', content };
  input.context.push(message);
  input.commit(message);
}

function commitInterrupted(input: TurnInput, partialText: string): void {
  const text = partialText.replaceAll(MARKER_PREFIX, '');
  if (text === '' && input.context.at(-1)?.role !== 'user') return;
  const message: ChatMessage = {
    role: 'assistant',
    content: [{ type: 'text', text: text === '' ? INTERRUPTED_ANSWER_MARK : `${text}\n\n${INTERRUPTED_ANSWER_MARK}` }],
  };
  input.context.push(message);
  input.commit(message);
}

class DurationExceeded extends Error {}

async function streamWithRetry(input: TurnInput, request: ChatRequest, round: number, onRetry: () => void): Promise<RoundResult> {
  const retries = new RetryCounter(input.retry);
  let lastError: ProviderError | undefined;
  for (;;) {
    // Item 6: every request is one model call, retries included; the budget is asked before each.
    const limit = input.budget.beforeModelCall();
    if (limit) throw new BudgetStop(limit, lastError);
    input.budget.modelCalls++;
    input.publish({ type: 'round-started', round, attempt: retries.attempts });
    const live = { text: '' };
    try {
      return await streamOnce(input, request, live);
    } catch (error) {
      if (input.signal.aborted) throw new Interrupted(live.text);
      if (!isProviderError(error) || !error.retryable) throw error;
      input.publish({ type: 'attempt-discarded', round });
      lastError = error;
      const attempt = retries.next(error);
      if (attempt === 'give-up') throw error;
      if (attempt === 'now') {
        onRetry();
        continue;
      }
      const spent = input.budget.beforeModelCall();
      if (spent === 'model_call_limit_reached') throw new BudgetStop(spent, error);
      const delayMs = retryDelayMs(input.retry, attempt, error, input.clock.random);
      const remaining = input.budget.remainingMs();
      if (remaining !== null && delayMs >= remaining) throw new DurationExceeded();
      onRetry();
      input.publish({
        type: 'retry-scheduled',
        attempt,
        delayMs,
        dueAt: input.clock.now() + delayMs,
        reason: error.kind,
        message: operatorMessage(error),
      });
      try {
        await input.clock.sleep(delayMs, input.signal);
      } catch {
        throw new Interrupted('');
      }
    }
  }
}

async function streamOnce(input: TurnInput, request: ChatRequest, live: { text: string }): Promise<RoundResult> {
  let text = '';
  const reasoning: ReasoningSegment[] = [{ text: '' }];
  const calls: ParsedToolCall[] = [];
  let usage: Usage | undefined;
  let finish: { reason: string; raw: string } | undefined;
  const stream = input.client.stream(request, input.signal);
  // The wire opens the request in the for-await's first step below; the immediate runs once that
  // step is done, when the request is written (a reused connection) or waits for its connection.
  // A request waiting for the save of the user message is written when the save settles.
  const after = input.afterRequest;
  if (after) {
    // Either way it settles (ChatRequest.sendAfter): a rejection must not go unhandled here.
    const later = (): void => void setImmediate(after);
    if (request.sendAfter) request.sendAfter.then(later, later);
    else setImmediate(after);
  }
  for await (const event of stream as AsyncIterable<ChatEvent>) {
    switch (event.type) {
      case 'text-delta':
        text += event.text;
        live.text = text;
        input.publish({ type: 'text-delta', text: event.text });
        break;
      case 'reasoning-delta':
        (reasoning.at(-1) as ReasoningSegment).text += event.text;
        input.publish({ type: 'reasoning-delta', text: event.text });
        break;
      case 'reasoning-state':
        (reasoning.at(-1) as ReasoningSegment).state = { format: event.format, data: event.data };
        reasoning.push({ text: '' });
        break;
      case 'tool-call-delta':
        if (event.name) input.onToolCallStreaming?.(event.name);
        input.publish({
          type: 'tool-call-delta',
          index: event.index,
          ...(event.name ? { name: event.name } : {}),
          argumentsDelta: event.argumentsDelta,
        });
        break;
      case 'tool-call':
        input.onToolCallStreaming?.(event.name);
        calls.push({
          id: event.id,
          name: event.name,
          arguments: event.arguments,
          input: event.input,
          ...(event.state ? { state: event.state } : {}),
        });
        break;
      case 'usage':
        usage = event.usage;
        break;
      case 'finish':
        finish = { reason: event.reason, raw: event.raw };
        break;
    }
  }
  if (!finish) {
    throw new ProviderError({
      kind: 'incomplete_stream',
      provider: input.client.provider,
      message: `${input.client.provider} stream ended without a finish reason.`,
    });
  }
  return { text, reasoning, calls, ...(usage ? { usage } : {}), finish };
}
