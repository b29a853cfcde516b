/**
 * Classifies every tool call before it runs (APPR-3): a risk (read, write, privileged,
 * forbidden), an authority (workspace, outside workspace, network, privileged escalation) and a
 * one-line summary for the approval card. Paths go through the workspace fence, so `..`, `~` and
 * symlinks are judged by their final target; shell commands through ordered regex lists.
 */
import type { ParsedToolCall } from '@crystal/core';
import { resolvePath } from '../tools/fence.js';

export type Risk = 'read' | 'write' | 'privileged' | 'forbidden';
export type Authority = 'workspace' | 'outside_workspace' | 'network' | 'privileged_escalation';

export interface Classification {
  readonly risk: Risk;
  readonly authority: Authority;
  readonly summary: string;
}

/** What the classifier needs to know about an external (tool set) tool. */
export interface ExternalToolFacts {
  /** Input properties that hold paths; each goes through the fence. */
  readonly pathArguments: readonly string[];
  /** The author declared `approval: "always"` and that source's policy is `author`. */
  readonly automatic: boolean;
  /** The card's summary instead of `External tool <name>` (an MCP tool names its server and hints). */
  readonly summary?: string;
}

/** A classifier for tools the host does not know (plugins); `undefined` passes the call on. */
export type ToolClassifier = (call: ParsedToolCall, context: ClassifyContext) => Classification | undefined;

export interface ClassifyContext {
  readonly workspace: string;
  /** Facts of the external tool with this name, or undefined when it is not one. */
  readonly externalTool?: (name: string) => ExternalToolFacts | undefined;
  /** Skill search trees (when skills are on): reads inside them are workspace reads. */
  readonly skillRoots?: readonly string[];
  /** Plugin classifiers, asked in order for tools the host does not know. */
  readonly classifiers?: readonly ToolClassifier[];
}

/** Tools that read through a `path` argument, with the verb their summaries use. */
const PATH_READERS: Readonly<Record<string, { verb: string; fileTool: boolean }>> = {
  read: { verb: 'Read', fileTool: true },
  list: { verb: 'List', fileTool: false },
  glob: { verb: 'Glob', fileTool: false },
  grep: { verb: 'Grep', fileTool: false },
  view_image: { verb: 'View image', fileTool: true },
  describe_image: { verb: 'Describe image', fileTool: true },
};
const PATH_WRITERS: Readonly<Record<string, string>> = { write: 'Write', edit: 'Edit' };
const READ_ONLY_TOOLS = new Set(['todowrite', 'todoread', 'question', 'skill']);

/** The names the built-in classifier knows; every other name is an external or unknown tool. */
export const CLASSIFIED_BUILT_INS: readonly string[] = [
  ...Object.keys(PATH_READERS),
  ...Object.keys(PATH_WRITERS),
  ...READ_ONLY_TOOLS,
  'bash',
];

export function classify(call: ParsedToolCall, context: ClassifyContext): Classification {
  const input = asRecord(call.input);
  // External tools first: a tool set can never borrow a built-in name's lighter classification.
  const external = context.externalTool?.(call.name);
  if (external) return classifyExternal(call.name, external, input, context);
  const reader = PATH_READERS[call.name];
  if (reader) return classifyRead(call.name, reader, input, context);
  const writer = PATH_WRITERS[call.name];
  if (writer) return classifyWrite(writer, input, context);
  if (READ_ONLY_TOOLS.has(call.name)) return { risk: 'read', authority: 'workspace', summary: 'Read-only tool' };
  if (call.name === 'bash') return classifyCommand(typeof input.command === 'string' ? input.command : '');
  for (const classifier of context.classifiers ?? []) {
    const verdict = classifier(call, context);
    if (verdict) return verdict;
  }
  return { risk: 'privileged', authority: 'privileged_escalation', summary: 'Unknown tool' };
}

function classifyRead(
  tool: string,
  reader: { verb: string; fileTool: boolean },
  input: Record<string, unknown>,
  context: ClassifyContext,
): Classification {
  const path = typeof input.path === 'string' ? input.path : '.';
  const verdict = resolvePath(context.workspace, path);
  if (verdict.credential)
    return { risk: 'forbidden', authority: 'privileged_escalation', summary: `${reader.verb} credential path` };
  const noun = reader.fileTool ? ' file' : '';
  if (!verdict.inside && insideAny(verdict.real, context.skillRoots ?? [], context.workspace)) {
    return { risk: 'read', authority: 'workspace', summary: `${reader.verb} skill${noun}` };
  }
  if (!verdict.inside || (tool === 'glob' && patternLeavesRoot(input.pattern))) {
    return { risk: 'read', authority: 'outside_workspace', summary: `${reader.verb} outside workspace` };
  }
  return { risk: 'read', authority: 'workspace', summary: `${reader.verb} workspace${noun}` };
}

function classifyWrite(verb: string, input: Record<string, unknown>, context: ClassifyContext): Classification {
  const path = typeof input.path === 'string' ? input.path : '';
  const verdict = resolvePath(context.workspace, path);
  if (verdict.credential) return { risk: 'forbidden', authority: 'privileged_escalation', summary: `${verb} credential path` };
  if (!verdict.inside) return { risk: 'write', authority: 'outside_workspace', summary: `${verb} outside workspace` };
  return { risk: 'write', authority: 'workspace', summary: `${verb} workspace file` };
}

/** A glob pattern that climbs out of its root (`..`) or is absolute reaches outside paths. */
function patternLeavesRoot(pattern: unknown): boolean {
  if (typeof pattern !== 'string') return false;
  return pattern.startsWith('/') || pattern.startsWith('~') || /(^|[\\/])\.\.([\\/]|$)/.test(pattern);
}

function insideAny(real: string, roots: readonly string[], workspace: string): boolean {
  return roots.some((root) => {
    const base = resolvePath(workspace, root).real;
    return real === base || real.startsWith(base.endsWith('/') ? base : `${base}/`);
  });
}

/**
 * Shell patterns in the order they are checked (§6.1): forbidden, then privileged, then network.
 * The first list that matches decides.
 */
export const FORBIDDEN_COMMANDS: readonly RegExp[] = [
  /(^|[^\w-])sudo\b/,
  // rm with a recursive and a force flag, aimed at /, ~ or $HOME (optionally with / or /*).
  /\brm\b(?=[^;&|\n]*\s(?:-[a-zA-Z]*[rR]|--recursive\b))(?=[^;&|\n]*\s(?:-[a-zA-Z]*f|--force\b))[^;&|\n]*\s["']?(?:\/|~|\$HOME|\$\{HOME\})\/?\*?["']?(?=\s|$|[;&|)])/,
  /\b(?:curl|wget)\b.*\|\s*(?:sudo\s+)?(?:\S*\/)?(?:ba|da|z|k|fi)?sh\b/,
  /\bgit\s+push\b.*\s(?:-f|--force|--force-with-lease)(?=\s|$|=|[;&|])/,
  /(^|[^\w.-])\.(?:ssh|gnupg)(?![\w.-])/,
];
export const PRIVILEGED_COMMANDS: readonly RegExp[] = [
  /\bchmod\s+(?:-\S+\s+)*0?777\b/,
  /\bchown\b/,
  /\bmkfs\b/,
  /\bdd\s/,
  /\bkill\s+(?:-9|-KILL|-SIGKILL|-s\s+(?:9|KILL|SIGKILL))\b/,
  /\bshutdown\b/,
  /\breboot\b/,
];
export const NETWORK_COMMANDS: readonly RegExp[] = [/\b(?:curl|wget|ssh|scp|nc|nmap)\b/];

/**
 * Commands longer than this are not scanned: JavaScript regexes cannot time out, and the reference
 * counts a timed-out scan as a match. A command this long counts as a forbidden match.
 */
export const MAX_SCANNED_COMMAND = 32 * 1024;

export function classifyCommand(command: string): Classification {
  const forbidden: Classification = { risk: 'forbidden', authority: 'privileged_escalation', summary: 'Forbidden shell command' };
  if (command.length > MAX_SCANNED_COMMAND) return forbidden;
  if (FORBIDDEN_COMMANDS.some((pattern) => pattern.test(command))) return forbidden;
  if (PRIVILEGED_COMMANDS.some((pattern) => pattern.test(command))) {
    return { risk: 'privileged', authority: 'privileged_escalation', summary: 'Privileged shell command' };
  }
  if (NETWORK_COMMANDS.some((pattern) => pattern.test(command))) {
    return { risk: 'write', authority: 'network', summary: 'Network shell command' };
  }
  return { risk: 'write', authority: 'workspace', summary: 'Workspace shell command' };
}

/** External tools are at least Write + Workspace; their path arguments can only raise that. */
function classifyExternal(
  name: string,
  facts: ExternalToolFacts,
  input: Record<string, unknown>,
  context: ClassifyContext,
): Classification {
  let outside = false;
  for (const key of facts.pathArguments) {
    const value = input[key];
    const paths = typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v) => typeof v === 'string') : [];
    for (const path of paths) {
      const verdict = resolvePath(context.workspace, path);
      if (verdict.credential) {
        return { risk: 'forbidden', authority: 'privileged_escalation', summary: `External tool ${name} on a credential path` };
      }
      if (!verdict.inside) outside = true;
    }
  }
  const summary = facts.summary ?? `External tool ${name}`;
  if (outside) return { risk: 'write', authority: 'outside_workspace', summary: `${summary} outside workspace` };
  return { risk: 'write', authority: 'workspace', summary };
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
