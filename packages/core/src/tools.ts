/** Tool definitions, the invocation policy, the exception mapper and the tool executor (CORE-1, CORE-5). */
import type { ToolCallPart, ToolResultContent, ToolResultPart } from './content.js';
import type { ToolSpec } from './client.js';

export interface ToolContext {
  readonly signal: AbortSignal;
  readonly callId: string;
}

/** What a tool returns: plain text, or text and image parts. */
export type ToolOutput = string | readonly ToolResultContent[];

export interface ToolDefinition extends ToolSpec {
  execute(input: unknown, context: ToolContext): Promise<ToolOutput>;
  /**
   * Calls of this tool that stand next to each other in one batch may run at the same time,
   * up to the executor's `parallelLimit` (the `task` tool's child agents). Others run in order.
   */
  readonly parallel?: boolean;
}

/**
 * `by` names who refused when it was not the operator: a hook's, the approval reviewer's or an
 * `allowed-tools` list's
 * reason is the whole model-visible text (not framed as an operator denial), and it does not
 * count as a denied operator prompt.
 */
export type PolicyDecision =
  | { readonly allow: true }
  | { readonly allow: false; readonly reason: string; readonly by?: 'hook' | 'reviewer' | 'allowed-tools' };

/** Decides before a call runs (approval). A denial becomes a framework-written result. */
export interface ToolInvocationPolicy {
  decide(call: ParsedToolCall, signal: AbortSignal): Promise<PolicyDecision>;
}

/** Turns a tool's exception into the only text the model sees about it. */
export type ToolExceptionMapper = (error: unknown, call: ParsedToolCall) => string;

export interface ParsedToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
  readonly input: unknown;
  /** Opaque provider replay data kept with the call in the transcript. */
  readonly state?: import('./content.js').ProviderState;
}

export const allowAllPolicy: ToolInvocationPolicy = {
  decide: async () => ({ allow: true }),
};

export const defaultExceptionMapper: ToolExceptionMapper = (error, call) => {
  const message = error instanceof Error ? error.message : String(error);
  return `Tool '${call.name}' failed: ${message}`;
};

/** The framework's own text for a call the policy rejected (not written by the tool). */
export function rejectionText(call: ParsedToolCall, reason: string, by?: 'hook' | 'reviewer' | 'allowed-tools'): string {
  if (by !== undefined) return reason;
  return `The operator denied the '${call.name}' call: ${reason}`;
}

export function parseToolCall(call: ToolCallPart): ParsedToolCall {
  return {
    id: call.id,
    name: call.name,
    arguments: call.arguments,
    input: parseArguments(call.arguments),
    ...(call.state ? { state: call.state } : {}),
  };
}

/** Parses a raw argument string; an empty string is `{}`; invalid JSON yields `undefined`. */
export function parseArguments(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

export interface ToolExecutorOptions {
  readonly tools: readonly ToolDefinition[];
  readonly policy?: ToolInvocationPolicy;
  readonly mapException?: ToolExceptionMapper;
  /** How many neighbouring calls of a `parallel` tool run at once (default 1: strictly in order). */
  readonly parallelLimit?: number;
}

/**
 * Runs a batch of calls in call order: policy first, then the tool; every call gets exactly
 * one result, so the transcript never holds a call without its result.
 */
export class ToolExecutor {
  private readonly tools: ReadonlyMap<string, ToolDefinition>;
  private readonly policy: ToolInvocationPolicy;
  private readonly mapException: ToolExceptionMapper;
  private readonly parallelLimit: number;

  constructor(options: ToolExecutorOptions) {
    this.tools = new Map(options.tools.map((tool) => [tool.name, tool]));
    this.policy = options.policy ?? allowAllPolicy;
    this.mapException = options.mapException ?? defaultExceptionMapper;
    this.parallelLimit = Math.max(1, Math.floor(options.parallelLimit ?? 1));
  }

  get specs(): ToolSpec[] {
    return [...this.tools.values()].map(({ name, description, parameters }) => ({ name, description, parameters }));
  }

  async runBatch(calls: readonly ParsedToolCall[], signal: AbortSignal): Promise<ToolResultPart[]> {
    const results: ToolResultPart[] = [];
    for (let i = 0; i < calls.length; ) {
      // A run of neighbouring calls of a `parallel` tool starts together (at most `parallelLimit`
      // at a time); results keep call order either way.
      let end = i;
      while (end < calls.length && this.tools.get((calls[end] as ParsedToolCall).name)?.parallel === true) end++;
      if (end - i < 2 || this.parallelLimit < 2) {
        results.push(await this.runOne(calls[i] as ParsedToolCall, signal));
        i++;
        continue;
      }
      results.push(...(await this.runPool(calls.slice(i, end), signal)));
      i = end;
    }
    return results;
  }

  private async runPool(calls: readonly ParsedToolCall[], signal: AbortSignal): Promise<ToolResultPart[]> {
    const results: ToolResultPart[] = new Array(calls.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < calls.length) {
        const index = next++;
        results[index] = await this.runOne(calls[index] as ParsedToolCall, signal);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.parallelLimit, calls.length) }, worker));
    return results;
  }

  private async runOne(call: ParsedToolCall, signal: AbortSignal): Promise<ToolResultPart> {
    const fail = (text: string): ToolResultPart => ({
      type: 'tool-result',
      callId: call.id,
      name: call.name,
      content: [{ type: 'text', text }],
      isError: true,
    });
    const tool = this.tools.get(call.name);
    if (!tool) return fail(`Unknown tool '${call.name}'. Available tools: ${[...this.tools.keys()].join(', ') || 'none'}.`);
    if (call.input === undefined) {
      return fail(`The arguments of '${call.name}' are not valid JSON: ${truncate(call.arguments, 200)}`);
    }
    const decision = await this.policy.decide(call, signal);
    if (!decision.allow) return fail(rejectionText(call, decision.reason, decision.by));
    try {
      const output = await tool.execute(call.input, { signal, callId: call.id });
      const content: ToolResultContent[] = typeof output === 'string' ? [{ type: 'text', text: output }] : [...output];
      return { type: 'tool-result', callId: call.id, name: call.name, content, isError: false };
    } catch (error) {
      return fail(this.mapException(error, call));
    }
  }
}

function truncate(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}
