/**
 * `allowed-tools` in the front matter of a custom command or a skill (CMD-1, SKILL-1), enforced:
 * while a command's turn runs, or from the moment the `skill` tool loads a skill to the end of
 * that turn, a call to any other tool is refused with a text naming the command or skill. It
 * only narrows: a listed tool still goes through the hooks, the approval policy and the sandbox
 * as always (a repository's files never weaken approval, reference §2.2).
 *
 * Patterns, in Claude Code's spelling: a tool name (`Bash`, `Read`, `Edit`, `mcp__server__tool`,
 * `mcp__server` for all of a server's tools, ours or Claude's names, any case); `Bash(git status)`
 * for that exact command, `Bash(git add:*)` for commands starting with `git add`; `Read(src/**)`,
 * `Edit(docs/*.md)` for paths. A Bash command joined with `&&`, `||`, `;`, `|` or newlines passes
 * only when every part does; substitutions (`` ` ``, `$(`) and redirections never pass a
 * specifier. A specifier on another tool is not understood and allows nothing.
 */
import type { ParsedToolCall, PolicyDecision, ToolInvocationPolicy } from '@crystal/core';

export interface ToolRestriction {
  /** What set it, as the model should read it: `the /deploy command`, `the skill "release"`. */
  readonly source: string;
  readonly patterns: readonly string[];
}

const CLAUDE_TO_OURS: Readonly<Record<string, string>> = {
  bash: 'bash',
  read: 'read',
  write: 'write',
  edit: 'edit',
  multiedit: 'edit',
  glob: 'glob',
  grep: 'grep',
  ls: 'list',
  todowrite: 'todowrite',
  todoread: 'todoread',
  skill: 'skill',
};

const PATH_TOOLS = new Set(['read', 'write', 'edit', 'list', 'glob', 'grep', 'view_image', 'describe_image']);

interface Pattern {
  readonly tool: string;
  readonly specifier?: string;
}

function parsePattern(raw: string): Pattern | undefined {
  const match = /^([A-Za-z0-9_.-]+)\s*(?:\((.*)\))?$/s.exec(raw.trim());
  if (!match) return undefined;
  const name = (match[1] as string).toLowerCase();
  const tool = CLAUDE_TO_OURS[name] ?? name;
  return match[2] === undefined ? { tool } : { tool, specifier: match[2].trim() };
}

function globToRegex(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      out += '.*';
      i++;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

function commandParts(command: string): string[] | undefined {
  if (/`|\$\(|[<>]/.test(command)) return undefined;
  return command
    .split(/&&|\|\||;|\||\n/)
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

function bashAllows(specifier: string, part: string): boolean {
  if (specifier === '*' || specifier === '') return true;
  if (specifier.endsWith(':*')) {
    const prefix = specifier.slice(0, -2).trim();
    return part === prefix || part.startsWith(`${prefix} `);
  }
  return part === specifier;
}

function inputOf(call: ParsedToolCall): Record<string, unknown> {
  return call.input !== null && typeof call.input === 'object' ? (call.input as Record<string, unknown>) : {};
}

function nameMatches(pattern: Pattern, tool: string): boolean {
  if (pattern.tool === tool) return true;
  return pattern.tool.startsWith('mcp__') && tool.startsWith(`${pattern.tool}__`);
}

/** Whether one restriction lets this call through. */
export function restrictionAllows(restriction: ToolRestriction, call: ParsedToolCall): boolean {
  const patterns = restriction.patterns.map(parsePattern).filter((p): p is Pattern => p !== undefined);
  const tool = call.name.toLowerCase();
  const named = patterns.filter((p) => nameMatches(p, tool));
  if (named.some((p) => p.specifier === undefined)) return true;
  if (tool === 'bash') {
    const command = inputOf(call).command;
    if (typeof command !== 'string') return false;
    const specifiers = named.map((p) => p.specifier as string);
    // An exact pattern may name the whole command, operators included.
    if (specifiers.some((s) => s === command.trim())) return true;
    const parts = commandParts(command);
    if (!parts || parts.length === 0) return false;
    return parts.every((part) => specifiers.some((s) => bashAllows(s, part)));
  }
  if (PATH_TOOLS.has(tool)) {
    const raw = inputOf(call).path;
    const path = (typeof raw === 'string' ? raw : '.').replace(/\\/g, '/').replace(/^\.\//, '');
    return named.some((p) => globToRegex(p.specifier as string).test(path));
  }
  return false;
}

export function restrictionText(restriction: ToolRestriction, call: ParsedToolCall): string {
  return `${restriction.source[0]?.toUpperCase() ?? ''}${restriction.source.slice(1)} allows only these tools (its allowed-tools): ${restriction.patterns.join(', ')}. This '${call.name}' call is not among them; use an allowed tool, or tell the user what else is needed.`;
}

/** The restrictions of the running turn; the controller clears them when the turn ends. */
export class ToolScope {
  private active: ToolRestriction[] = [];

  add(restriction: ToolRestriction | undefined): void {
    if (restriction && restriction.patterns.length > 0) this.active.push(restriction);
  }

  clear(): void {
    this.active = [];
  }

  get restrictions(): readonly ToolRestriction[] {
    return this.active;
  }

  /** The refusal text for a call some restriction does not allow, or undefined. */
  refusal(call: ParsedToolCall): string | undefined {
    const failing = this.active.find((r) => !restrictionAllows(r, call));
    return failing ? restrictionText(failing, call) : undefined;
  }
}

/** The policy with the turn's `allowed-tools` in front: a refused call reaches neither hooks nor approval. */
export function withToolScope<P extends ToolInvocationPolicy>(policy: P, scope: ToolScope): P {
  const wrapped = Object.create(policy) as P;
  Object.defineProperty(wrapped, 'decide', {
    value: async (call: ParsedToolCall, signal: AbortSignal): Promise<PolicyDecision> => {
      const refusal = scope.refusal(call);
      if (refusal !== undefined) return { allow: false, reason: refusal, by: 'allowed-tools' };
      return policy.decide(call, signal);
    },
  });
  return wrapped;
}
