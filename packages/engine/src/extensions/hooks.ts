/**
 * Hooks (HOOK-1): `PreToolUse` and `PostToolUse` here; `SessionStart`, `UserPromptSubmit`, `Stop`
 * and `PreCompact` in `lifecycle-hooks.ts`; all in Claude Code's shape:
 *   "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "…", "timeout": 60 } ] } ] }
 * from `config.json` (Home: always runs) and the project's `.crystal/settings.json` and
 * `.claude/settings.json` (project code: runs only when trust.ts `mayRunProjectCode` says so). The hook gets the call as JSON on stdin; exit code 2 (stderr is the
 * reason) or a JSON `{"decision":"block","reason":…}` on stdout blocks the call, and the model
 * sees the reason. A hook that outlives its timeout is killed with its process group and
 * reported; any other failure is reported and does not block. A project's hooks are project
 * code: with the OS sandbox on they run inside it, as bash does (SBX-1); Home's run as configured.
 */
import { spawn } from '../tools/lazy-child-process.js';
import { join } from 'node:path';
import type { ParsedToolCall, PolicyDecision, ToolDefinition, ToolInvocationPolicy } from '@crystal/core';
import { mayRunProjectCode, type ProjectCodeTrust, untrustedProjectCodeNote } from '../trust.js';
import { type ContainArgv, superviseGroup } from '../tools/process-group.js';
import { readTextIfPresent } from '../fs-errors.js';

export type ToolHookEvent = 'PreToolUse' | 'PostToolUse';
export type HookEvent = ToolHookEvent | 'SessionStart' | 'UserPromptSubmit' | 'Stop' | 'PreCompact';
export const HOOK_EVENTS: readonly HookEvent[] = [
  'PreToolUse',
  'PostToolUse',
  'SessionStart',
  'UserPromptSubmit',
  'Stop',
  'PreCompact',
];

export interface HookCommand {
  readonly matcher: string;
  readonly command: string;
  readonly timeoutSeconds: number;
  /** Where it was configured (named in notes). */
  readonly source: string;
  /** Configured by the project (`.claude/settings.json`, `.crystal/settings.json`): sandboxed when the sandbox is on. */
  readonly project?: boolean;
}

export interface HookSet {
  readonly preToolUse: readonly HookCommand[];
  readonly postToolUse: readonly HookCommand[];
  readonly sessionStart: readonly HookCommand[];
  readonly userPromptSubmit: readonly HookCommand[];
  readonly stop: readonly HookCommand[];
  readonly preCompact: readonly HookCommand[];
  readonly notes: readonly string[];
}

const DEFAULT_TIMEOUT_SECONDS = 60;
const MAX_OUTPUT = 64 * 1024;

/** Claude Code's tool names for the built-ins, so matchers and scripts written for it work unchanged. */
const CLAUDE_NAMES: Readonly<Record<string, string>> = {
  bash: 'Bash',
  read: 'Read',
  write: 'Write',
  edit: 'Edit',
  glob: 'Glob',
  grep: 'Grep',
  list: 'LS',
  todowrite: 'TodoWrite',
  todoread: 'TodoRead',
  skill: 'Skill',
};

export function loadHooks(options: {
  home: string;
  workspace: string;
  hooks?: unknown;
  /** Whether project code may run (trust.ts `mayRunProjectCode`); defaults to `trusted.json` alone. */
  projectCode?: ProjectCodeTrust;
}): HookSet {
  const notes: string[] = [];
  const found: Record<HookEvent, HookCommand[]> = {
    PreToolUse: [],
    PostToolUse: [],
    SessionStart: [],
    UserPromptSubmit: [],
    Stop: [],
    PreCompact: [],
  };
  const add = (value: unknown, source: string, project = false): void => {
    if (value === undefined) return;
    if (typeof value !== 'object' || value === null) {
      notes.push(`"hooks" in ${source} must be an object of event names; it was ignored.`);
      return;
    }
    for (const event of HOOK_EVENTS) {
      for (const hook of parseEvent(value, event, source, notes)) found[event].push(project ? { ...hook, project } : hook);
    }
  };
  add(options.hooks, join(options.home, 'config.json'));
  const projectFiles = [
    join(options.workspace, '.claude', 'settings.json'),
    join(options.workspace, '.crystal', 'settings.json'),
  ];
  const present: Array<{ file: string; hooks: unknown }> = [];
  for (const file of projectFiles) {
    let text: string | undefined;
    try {
      text = readTextIfPresent(file);
    } catch {
      continue;
    }
    if (text === undefined) continue;
    try {
      const hooks = (JSON.parse(text) as { hooks?: unknown }).hooks;
      if (hooks !== undefined) present.push({ file, hooks });
    } catch (error) {
      notes.push(`Hooks in ${file} were not loaded: it is not valid JSON (${(error as Error).message}).`);
    }
  }
  if (present.length > 0) {
    const trust = options.projectCode ?? { home: options.home, workspace: options.workspace };
    if (mayRunProjectCode(trust)) for (const { file, hooks } of present) add(hooks, file, true);
    else
      notes.push(
        untrustedProjectCodeNote(
          trust,
          present.map((p) => `hooks in ${p.file}`),
        ),
      );
  }
  return {
    preToolUse: found.PreToolUse,
    postToolUse: found.PostToolUse,
    sessionStart: found.SessionStart,
    userPromptSubmit: found.UserPromptSubmit,
    stop: found.Stop,
    preCompact: found.PreCompact,
    notes,
  };
}

function parseEvent(hooks: object, event: HookEvent, source: string, notes: string[]): HookCommand[] {
  const groups = (hooks as Record<string, unknown>)[event];
  if (groups === undefined) return [];
  if (!Array.isArray(groups)) {
    notes.push(`hooks.${event} in ${source} must be a list of {matcher, hooks}; it was ignored.`);
    return [];
  }
  const found: HookCommand[] = [];
  for (const [index, group] of groups.entries()) {
    const g = group as { matcher?: unknown; hooks?: unknown };
    const matcher = typeof g?.matcher === 'string' ? g.matcher : '';
    if (!Array.isArray(g?.hooks)) {
      notes.push(`hooks.${event}[${index}] in ${source} has no "hooks" list; it was ignored.`);
      continue;
    }
    for (const hook of g.hooks as unknown[]) {
      const h = hook as { type?: unknown; command?: unknown; timeout?: unknown };
      if ((h?.type !== undefined && h.type !== 'command') || typeof h?.command !== 'string' || h.command.trim() === '') {
        notes.push(`hooks.${event}[${index}] in ${source}: only {"type": "command", "command": "…"} hooks run; one was ignored.`);
        continue;
      }
      const timeout = typeof h.timeout === 'number' && h.timeout > 0 ? Math.min(h.timeout, 2147483) : DEFAULT_TIMEOUT_SECONDS;
      found.push({ matcher, command: h.command, timeoutSeconds: timeout, source });
    }
  }
  return found;
}

/** Claude Code matchers: empty or `*` matches every tool; otherwise a regex over the whole name (ours or Claude's), case-insensitive. */
export function matches(matcher: string, tool: string): boolean {
  if (matcher === '' || matcher === '*') return true;
  const names = [tool, CLAUDE_NAMES[tool] ?? tool];
  try {
    const pattern = new RegExp(`^(?:${matcher})$`, 'i');
    return names.some((name) => pattern.test(name));
  } catch {
    return names.some((name) => name.toLowerCase() === matcher.toLowerCase());
  }
}

export interface HookRun {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
}

/**
 * Runs one hook command with `input` as JSON on stdin, in its own process group, killed at its
 * timeout. A project hook goes through `contain` (the OS sandbox) when one is given.
 */
export function runHook(
  hook: HookCommand,
  input: unknown,
  options: { cwd: string; signal: AbortSignal; env?: NodeJS.ProcessEnv | undefined; contain?: ContainArgv | undefined },
): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const env = { ...(options.env ?? process.env), CLAUDE_PROJECT_DIR: options.cwd, CRYSTAL_PROJECT_DIR: options.cwd };
    const wrapped = hook.project ? options.contain?.(['/bin/sh', '-c', hook.command], env) : undefined;
    const child = spawn(wrapped?.file ?? '/bin/sh', wrapped ? [...wrapped.args] : ['-c', hook.command], {
      cwd: options.cwd,
      env: wrapped?.env ?? env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      if (stdout.length < MAX_OUTPUT) stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      if (stderr.length < MAX_OUTPUT) stderr += c;
    });
    // A hook that never reads stdin must not fail the write.
    child.stdin.on('error', () => undefined);
    child.stdin.end(`${JSON.stringify(input)}\n`);
    const group = superviseGroup(child, { timeoutMs: hook.timeoutSeconds * 1000, signal: options.signal, killGraceMs: 1000 });
    child.on('error', (error) => {
      group.release(false);
      wrapped?.cleanup();
      reject(error);
    });
    child.on('close', (exitCode) => {
      group.release(true);
      wrapped?.cleanup();
      resolve({ exitCode, stdout, stderr, timedOut: group.timedOut, cancelled: group.cancelled });
    });
  });
}

export interface PreToolUseContext {
  readonly workspace: string;
  readonly sessionId: () => string;
  readonly onNote?: ((text: string) => void) | undefined;
  readonly env?: NodeJS.ProcessEnv | undefined;
  /** The OS sandbox for project hooks (SBX-1), when it is on. */
  readonly contain?: ContainArgv | undefined;
}

/** What the matching PreToolUse hooks say about a call: a block with its reason, or nothing. */
export function preToolUse(
  hooks: readonly HookCommand[],
  call: ParsedToolCall,
  signal: AbortSignal,
  context: PreToolUseContext,
): Promise<{ block: string } | undefined> {
  return runToolHooks('PreToolUse', hooks, call.name, call.input, undefined, signal, context);
}

async function runToolHooks(
  event: ToolHookEvent,
  hooks: readonly HookCommand[],
  tool: string,
  toolInput: unknown,
  toolResponse: string | undefined,
  signal: AbortSignal,
  context: PreToolUseContext,
): Promise<{ block: string } | undefined> {
  for (const hook of hooks) {
    if (!matches(hook.matcher, tool)) continue;
    const input = {
      session_id: context.sessionId(),
      hook_event_name: event,
      cwd: context.workspace,
      tool_name: CLAUDE_NAMES[tool] ?? tool,
      crystal_tool_name: tool,
      tool_input: toolInput ?? {},
      ...(toolResponse === undefined ? {} : { tool_response: toolResponse }),
    };
    let run: HookRun;
    try {
      run = await runHook(hook, input, { cwd: context.workspace, signal, env: context.env, contain: context.contain });
    } catch (error) {
      context.onNote?.(`${event} hook '${hook.command}' (${hook.source}) could not start: ${(error as Error).message}.`);
      continue;
    }
    if (run.cancelled) return undefined;
    if (run.timedOut) {
      context.onNote?.(
        `${event} hook '${hook.command}' (${hook.source}) timed out after ${hook.timeoutSeconds} seconds and was killed; the call went on.`,
      );
      continue;
    }
    if (run.exitCode === 2) return { block: reasonText(event, run.stderr, hook) };
    const decision = parseDecision(run.stdout);
    if (decision !== undefined) return { block: reasonText(event, decision, hook) };
    if (run.exitCode !== 0) {
      context.onNote?.(
        `${event} hook '${hook.command}' (${hook.source}) failed with exit code ${run.exitCode}${run.stderr.trim() ? `: ${run.stderr.trim().slice(0, 500)}` : ''}; the call went on.`,
      );
    }
  }
  return undefined;
}

/** `{"decision":"block","reason":…}` (or Claude's `hookSpecificOutput.permissionDecision: "deny"`): the reason, or '' when none; undefined when it does not block. */
export function parseDecision(stdout: string): string | undefined {
  const text = stdout.trim();
  if (!text.startsWith('{')) return undefined;
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const decision = typeof value.decision === 'string' ? value.decision.toLowerCase() : '';
  if (decision === 'block' || decision === 'deny') return typeof value.reason === 'string' ? value.reason : '';
  const specific = value.hookSpecificOutput as Record<string, unknown> | undefined;
  if (specific && specific.permissionDecision === 'deny') {
    return typeof specific.permissionDecisionReason === 'string' ? specific.permissionDecisionReason : '';
  }
  return undefined;
}

/** The model-visible text of a block: it names the hook (never "The operator denied…", which is the operator's). */
function reasonText(event: ToolHookEvent, reason: string, hook: HookCommand): string {
  const text = reason.trim().slice(0, 4000);
  const command = hook.command.length > 200 ? `${hook.command.slice(0, 200)}…` : hook.command;
  const lead =
    event === 'PreToolUse' ? `Blocked by the PreToolUse hook \`${command}\`` : `The PostToolUse hook \`${command}\` objected`;
  return `${lead}${text ? `: ${text}` : '.'}`;
}

/**
 * PostToolUse: after a tool succeeds, the matching hooks get the call and its text result; a
 * block (exit 2 or a JSON decision) cannot undo the call, so its reason is appended to the
 * result for the model, as in Claude Code.
 */
export function withPostToolUseHooks(
  tools: readonly ToolDefinition[],
  hooks: readonly HookCommand[],
  context: PreToolUseContext,
): ToolDefinition[] {
  if (hooks.length === 0) return [...tools];
  return tools.map((tool) => {
    if (!hooks.some((hook) => matches(hook.matcher, tool.name))) return tool;
    return {
      ...tool,
      async execute(input, toolContext) {
        const output = await tool.execute(input, toolContext);
        const response = typeof output === 'string' ? output : output.map((p) => (p.type === 'text' ? p.text : '')).join('');
        const verdict = await runToolHooks(
          'PostToolUse',
          hooks,
          tool.name,
          input,
          response.slice(0, MAX_OUTPUT),
          toolContext.signal,
          context,
        );
        if (!verdict) return output;
        return typeof output === 'string'
          ? `${output}\n\n${verdict.block}`
          : [...output, { type: 'text' as const, text: verdict.block }];
      },
    };
  });
}

/** The policy with the PreToolUse hooks in front: a block never reaches the approval step. */
export function withPreToolUseHooks<P extends ToolInvocationPolicy>(
  policy: P,
  hooks: readonly HookCommand[],
  context: PreToolUseContext,
): P {
  if (hooks.length === 0) return policy;
  const wrapped = Object.create(policy) as P;
  Object.defineProperty(wrapped, 'decide', {
    value: async (call: ParsedToolCall, signal: AbortSignal): Promise<PolicyDecision> => {
      const verdict = await preToolUse(hooks, call, signal, context);
      if (verdict) return { allow: false, reason: verdict.block, by: 'hook' };
      return policy.decide(call, signal);
    },
  });
  return wrapped;
}
