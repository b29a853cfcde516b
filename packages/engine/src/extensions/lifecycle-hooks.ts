/**
 * The session's lifecycle hooks (HOOK-1) in Claude Code's shape, beside the tool hooks of
 * `hooks.ts` (same loading, trust rule, timeout, process group and sandbox):
 *   - `SessionStart` (matcher: `startup`, `resume`, `clear`): stdout, or JSON
 *     `hookSpecificOutput.additionalContext`, is context for the model; exit 2 shows stderr to
 *     the operator only.
 *   - `UserPromptSubmit`: stdout or `additionalContext` is context; exit 2 (stderr) or JSON
 *     `{"decision":"block","reason"}` refuses the prompt before it joins the conversation, and
 *     the reason is shown to the operator.
 *   - `Stop` (`stop_hook_active` on stdin): exit 2 (stderr) or `{"decision":"block","reason"}`
 *     keeps the agent going with the reason as its next instruction.
 *   - `PreCompact` (matcher: `manual`, `auto`): runs before compaction; exit 2 shows stderr to the
 *     operator only (compaction goes on).
 * Any other exit code, a hook that cannot start or one killed at its timeout is a note; the
 * session goes on. JSON `systemMessage` is shown to the operator.
 */
import type { TurnResult } from '../events.js';
import type { ContainArgv } from '../tools/process-group.js';
import { type HookCommand, type HookEvent, type HookRun, runHook } from './hooks.js';

export type SessionStartSource = 'startup' | 'resume' | 'clear' | 'compact';
export type CompactTrigger = 'manual' | 'auto';

export interface LifecycleContext {
  readonly workspace: string;
  readonly sessionId: () => string;
  readonly transcriptPath?: () => string;
  readonly onNote?: ((text: string) => void) | undefined;
  readonly env?: NodeJS.ProcessEnv | undefined;
  readonly contain?: ContainArgv | undefined;
}

export interface LifecycleHookLists {
  readonly sessionStart: readonly HookCommand[];
  readonly userPromptSubmit: readonly HookCommand[];
  readonly stop: readonly HookCommand[];
  readonly preCompact: readonly HookCommand[];
}

export type PromptVerdict = { readonly block: string } | { readonly context: readonly string[] };

export interface LifecycleHooks {
  /** Context the SessionStart hooks gave (added to the next prompt). */
  sessionStart(source: SessionStartSource, signal: AbortSignal): Promise<readonly string[]>;
  /** A refusal with the operator-facing reason, or the context to add to the prompt. */
  userPromptSubmit(prompt: string, signal: AbortSignal): Promise<PromptVerdict>;
  /** The instruction to keep going with, when a Stop hook blocks the stop. */
  stop(stopHookActive: boolean, signal: AbortSignal): Promise<string | undefined>;
  preCompact(trigger: CompactTrigger, signal: AbortSignal): Promise<void>;
  readonly hasStop: boolean;
}

/** The longest run of Stop-hook continuations in one turn (a hook that never lets go). */
export const MAX_STOP_CONTINUATIONS = 8;

/** How hook context reaches the model: after the prompt, labelled with its event. */
export function withHookContext(prompt: string, context: readonly string[]): string {
  const blocks = context.map((c) => c.trim()).filter((c) => c !== '');
  if (blocks.length === 0) return prompt;
  return `${prompt}\n\n${blocks.join('\n\n')}`;
}

const CONTEXT_BLOCK = /\n\n<hook-context event="([A-Za-z]+)">\n[\s\S]*?\n<\/hook-context>(?=\n\n<hook-context |$)/g;

/** A sent prompt without the hook context blocks it carries, and the events that added them (for display). */
export function splitHookContext(sent: string): { text: string; events: string[] } {
  const events: string[] = [];
  const text = sent.replace(CONTEXT_BLOCK, (_all, event: string) => {
    events.push(event);
    return '';
  });
  return { text, events };
}

function label(event: HookEvent, text: string): string {
  return `<hook-context event="${event}">\n${text.trim()}\n</hook-context>`;
}

function shown(hook: HookCommand): string {
  return hook.command.length > 200 ? `${hook.command.slice(0, 200)}…` : hook.command;
}

interface Parsed {
  readonly json?: Record<string, unknown>;
}

function parseJson(stdout: string): Parsed {
  const text = stdout.trim();
  if (!text.startsWith('{')) return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? { json: value as Record<string, unknown> } : {};
  } catch {
    return {};
  }
}

function additionalContext(json: Record<string, unknown>): string | undefined {
  const specific = json.hookSpecificOutput as Record<string, unknown> | undefined;
  const value = specific?.additionalContext;
  return typeof value === 'string' ? value : undefined;
}

function blockReason(json: Record<string, unknown>): string | undefined {
  const decision = typeof json.decision === 'string' ? json.decision.toLowerCase() : '';
  if (decision !== 'block') return undefined;
  return typeof json.reason === 'string' ? json.reason : '';
}

/** SessionStart and PreCompact match on their source / trigger; the other two take no matcher. */
function selects(hook: HookCommand, value: string | undefined): boolean {
  if (value === undefined || hook.matcher === '' || hook.matcher === '*') return true;
  try {
    return new RegExp(`^(?:${hook.matcher})$`, 'i').test(value);
  } catch {
    return hook.matcher.toLowerCase() === value;
  }
}

export function createLifecycleHooks(lists: LifecycleHookLists, context: LifecycleContext): LifecycleHooks {
  const note = (text: string): void => context.onNote?.(text);
  const base = (event: HookEvent) => ({
    session_id: context.sessionId(),
    ...(context.transcriptPath ? { transcript_path: context.transcriptPath() } : {}),
    cwd: context.workspace,
    hook_event_name: event,
  });
  /** Runs one hook; undefined when it did not finish (a note says why) or the turn was cancelled. */
  const run = async (event: HookEvent, hook: HookCommand, input: object, signal: AbortSignal): Promise<HookRun | undefined> => {
    let result: HookRun;
    try {
      result = await runHook(
        hook,
        { ...base(event), ...input },
        {
          cwd: context.workspace,
          signal,
          env: context.env,
          contain: context.contain,
        },
      );
    } catch (error) {
      note(`${event} hook '${hook.command}' (${hook.source}) could not start: ${(error as Error).message}.`);
      return undefined;
    }
    if (result.cancelled) return undefined;
    if (result.timedOut) {
      note(
        `${event} hook '${hook.command}' (${hook.source}) timed out after ${hook.timeoutSeconds} seconds and was killed; the session went on.`,
      );
      return undefined;
    }
    const json = result.exitCode === 0 ? parseJson(result.stdout).json : undefined;
    if (json && typeof json.systemMessage === 'string' && json.systemMessage.trim() !== '') {
      note(`${event} hook '${shown(hook)}': ${json.systemMessage.trim().slice(0, 2000)}`);
    }
    if (result.exitCode !== 0 && result.exitCode !== 2) {
      const stderr = result.stderr.trim();
      note(
        `${event} hook '${hook.command}' (${hook.source}) failed with exit code ${result.exitCode}${stderr ? `: ${stderr.slice(0, 500)}` : ''}; the session went on.`,
      );
      return undefined;
    }
    return result;
  };
  /** Exit 2 of a hook whose stderr goes to the operator only. */
  const operatorOnly = (event: HookEvent, hook: HookCommand, result: HookRun): void => {
    const stderr = result.stderr.trim();
    note(`${event} hook '${shown(hook)}'${stderr ? `: ${stderr.slice(0, 2000)}` : ' exited with code 2.'}`);
  };
  /** Context from stdout or `additionalContext`. */
  const contextOf = (event: HookEvent, result: HookRun): string | undefined => {
    const json = parseJson(result.stdout).json;
    const text = json ? additionalContext(json) : result.stdout;
    return text && text.trim() !== '' ? label(event, text.slice(0, 16_000)) : undefined;
  };

  return {
    hasStop: lists.stop.length > 0,
    async sessionStart(source, signal) {
      const found: string[] = [];
      for (const hook of lists.sessionStart) {
        if (!selects(hook, source)) continue;
        const result = await run('SessionStart', hook, { source }, signal);
        if (!result) continue;
        if (result.exitCode === 2) operatorOnly('SessionStart', hook, result);
        else {
          const text = contextOf('SessionStart', result);
          if (text) found.push(text);
        }
      }
      return found;
    },
    async userPromptSubmit(prompt, signal) {
      const found: string[] = [];
      for (const hook of lists.userPromptSubmit) {
        const result = await run('UserPromptSubmit', hook, { prompt }, signal);
        if (!result) continue;
        const json = result.exitCode === 0 ? parseJson(result.stdout).json : undefined;
        const reason = result.exitCode === 2 ? result.stderr : json ? blockReason(json) : undefined;
        if (reason !== undefined) {
          const text = reason.trim().slice(0, 2000);
          return { block: `The UserPromptSubmit hook \`${shown(hook)}\` blocked this prompt${text ? `: ${text}` : '.'}` };
        }
        const text = contextOf('UserPromptSubmit', result);
        if (text) found.push(text);
      }
      return { context: found };
    },
    async stop(stopHookActive, signal) {
      for (const hook of lists.stop) {
        const result = await run('Stop', hook, { stop_hook_active: stopHookActive }, signal);
        if (!result) continue;
        const json = result.exitCode === 0 ? parseJson(result.stdout).json : undefined;
        const reason = result.exitCode === 2 ? result.stderr : json ? blockReason(json) : undefined;
        if (reason === undefined) continue;
        const text = reason.trim().slice(0, 4000);
        return `The Stop hook \`${shown(hook)}\` asked you to continue${text ? `: ${text}` : '.'}`;
      }
      return undefined;
    },
    async preCompact(trigger, signal) {
      for (const hook of lists.preCompact) {
        if (!selects(hook, trigger)) continue;
        const result = await run('PreCompact', hook, { trigger, custom_instructions: '' }, signal);
        if (result?.exitCode === 2) operatorOnly('PreCompact', hook, result);
      }
    },
  };
}

/**
 * One prompt through the lifecycle hooks: UserPromptSubmit may refuse it (nothing is sent) or add
 * context, with any SessionStart context; after a completed turn a Stop hook may keep the agent
 * going with its reason as the next message (shown to the operator as a note), at most
 * MAX_STOP_CONTINUATIONS times. The result is the last turn's, denied if any turn was.
 */
export async function deliverPrompt(input: {
  readonly hooks: LifecycleHooks;
  readonly text: string;
  /** SessionStart context waiting for this prompt. */
  readonly started: readonly string[];
  readonly send: (text: string) => Promise<TurnResult>;
  readonly note: (text: string) => void;
  readonly signal: AbortSignal;
}): Promise<TurnResult | { readonly blocked: string }> {
  const { hooks, signal } = input;
  const verdict = await hooks.userPromptSubmit(input.text, signal);
  if ('block' in verdict) return { blocked: verdict.block };
  let result = await input.send(withHookContext(input.text, [...input.started, ...verdict.context]));
  let denied = result.denied;
  for (let round = 0; hooks.hasStop && result.stopReason === 'completed' && !signal.aborted; round++) {
    if (round === MAX_STOP_CONTINUATIONS) {
      input.note(`Stop hooks kept the agent going ${MAX_STOP_CONTINUATIONS} times in a row; it stops here.`);
      break;
    }
    const reason = await hooks.stop(round > 0, signal);
    if (reason === undefined || signal.aborted) break;
    input.note(reason);
    result = await input.send(reason);
    denied ||= result.denied;
  }
  return { ...result, denied };
}
