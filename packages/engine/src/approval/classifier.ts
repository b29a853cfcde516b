/**
 * Classifies every tool call before it runs (APPR-3): a risk (read, write, privileged,
 * forbidden), an authority (workspace, outside workspace, network, privileged escalation) and a
 * one-line summary for the approval card. Paths go through the workspace fence, so `..`, `~` and
 * symlinks are judged by their final target; shell commands through ordered regex lists.
 */
import { homedir } from 'node:os';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { ParsedToolCall } from '@crystal/core';
import { type PathVerdict, realPath, resolvePath } from '../tools/fence.js';
import { protectedCommandReason, protectedWriteReason } from './protected.js';
import { globRegExp, parseShell, shellConcern } from './shell-analysis.js';

export type Risk = 'read' | 'write' | 'privileged' | 'forbidden';
export type Authority = 'workspace' | 'outside_workspace' | 'network' | 'privileged_escalation';

export interface Classification {
  readonly risk: Risk;
  readonly authority: Authority;
  readonly summary: string;
  /**
   * Why the call touches a protected path or Crystal Home (SEC-2, SEC-3): it then asks in every
   * mode, no grant covers it, and only Once or Deny are offered. The card's summary says it.
   */
  readonly protected?: string;
  /** The final path (links followed) the decision was made on, for path tools (SEC-4). */
  readonly target?: string;
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
  /** Crystal Home: out of the tools' reach without an ask, its secrets refused (SEC-3). */
  readonly home?: string;
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
// `task` starts a sub-agent; every call the sub-agent makes is classified and approved on its own.
const READ_ONLY_TOOLS = new Set(['todowrite', 'todoread', 'question', 'skill', 'task']);

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
  if (call.name === 'bash') return classifyShell(typeof input.command === 'string' ? input.command : '', context);
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
  // One resolution: the verdict judged is the path handed to the tool (SEC-4).
  const verdict = resolvePath(context.workspace, path, context.home);
  return { ...classifyReadOf(tool, reader, verdict, input, context), target: verdict.real };
}

function classifyReadOf(
  tool: string,
  reader: { verb: string; fileTool: boolean },
  verdict: PathVerdict,
  input: Record<string, unknown>,
  context: ClassifyContext,
): Classification {
  if (verdict.credential)
    return { risk: 'forbidden', authority: 'privileged_escalation', summary: `${reader.verb} credential path` };
  if (verdict.home) {
    const why = HOME_REASON;
    return { risk: 'read', authority: 'outside_workspace', summary: `${reader.verb} ${why}`, protected: why };
  }
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
  const verdict = resolvePath(context.workspace, path, context.home);
  return { ...classifyWriteOf(verb, verdict, context), target: verdict.real };
}

function classifyWriteOf(verb: string, verdict: PathVerdict, context: ClassifyContext): Classification {
  if (verdict.credential) return { risk: 'forbidden', authority: 'privileged_escalation', summary: `${verb} credential path` };
  const authority: Authority = verdict.inside ? 'workspace' : 'outside_workspace';
  const why = verdict.home
    ? HOME_REASON
    : protectedWriteReason(realPath(resolve(context.workspace)), verdict.absolute, verdict.real);
  if (why) return { risk: 'write', authority, summary: `${verb} ${why}`, protected: why };
  if (!verdict.inside) return { risk: 'write', authority: 'outside_workspace', summary: `${verb} outside workspace` };
  return { risk: 'write', authority: 'workspace', summary: `${verb} workspace file` };
}

const HOME_REASON = 'Crystal Home (config, keys, permissions and sessions live there)';

/** `classifyCommand`, then protected paths and Home named in the command (SEC-2, SEC-3). */
export function classifyShell(command: string, context: { readonly workspace: string; readonly home?: string }): Classification {
  const base = classifyCommand(command, context.workspace);
  if (base.risk === 'forbidden') return base;
  if (context.home !== undefined && namesHome(command, context.workspace, context.home)) {
    return {
      risk: base.risk,
      authority: 'outside_workspace',
      summary: `Shell command on ${HOME_REASON}`,
      protected: HOME_REASON,
    };
  }
  const why = protectedCommandReason(command);
  if (why) return { ...base, summary: `Shell command on a ${why}`, protected: why };
  return base;
}

/**
 * Whether a command names Crystal Home: its path, `$CRYSTAL_HOME`, `~/…` or its path from the
 * workspace, as written or with quotes removed (`"$HOME"/.crystal`), or a glob that could match
 * its path from the workspace (`.cr*`).
 */
function namesHome(command: string, workspace: string, home: string): boolean {
  if (namesHomeIn(command, workspace, home)) return true;
  const parsed = parseShell(command);
  const words = parsed.commands.flatMap((c) => [...c.words, ...c.outputs]);
  if (namesHomeIn(words.map((w) => w.text).join(' '), workspace, home)) return true;
  if (parsed.substitutions.some((inner) => namesHome(inner, workspace, home))) return true;
  const fromWs = relative(realPath(resolve(workspace)), realPath(resolve(home)));
  if (fromWs === '' || fromWs.startsWith('..')) return false;
  const first = fromWs.split(sep)[0] as string;
  return words.some((word) => {
    if (!word.glob || word.tilde || isAbsolute(word.text)) return false;
    const head = word.text.replace(/^(\.\/)+/, '').split('/')[0] ?? '';
    if (!/[*?[]/.test(head) || (first.startsWith('.') && !head.startsWith('.'))) return false;
    return globRegExp(head).test(first);
  });
}

function namesHomeIn(command: string, workspace: string, home: string): boolean {
  const homeReal = realPath(resolve(home));
  const spellings = new Set<string>([resolve(home), homeReal, '$CRYSTAL_HOME', '$' + '{CRYSTAL_HOME}']);
  for (const base of [homedir(), realPath(homedir())]) {
    const rel = relative(base, homeReal);
    if (rel !== '' && !rel.startsWith('..')) {
      spellings.add(`~/${rel}`);
      spellings.add(`$HOME/${rel}`);
      spellings.add(`$` + `{HOME}/${rel}`);
    }
  }
  const fromWs = relative(realPath(resolve(workspace)), homeReal);
  const homeInside = fromWs !== '' && !fromWs.startsWith('..');
  for (const spelling of spellings) {
    let at = command.indexOf(spelling);
    while (at !== -1) {
      const next = command[at + spelling.length];
      if (next === undefined || !/[\w.-]/.test(next)) return true;
      at = command.indexOf(spelling, at + 1);
    }
  }
  if (homeInside) {
    const pattern = new RegExp(`(^|[\\s'"=:<>|;&(\`]|\\./)${escapeRegExp(fromWs.split(sep).join('/'))}(?=[/\\s'"\`;&|)<>*?]|$)`);
    if (pattern.test(command)) return true;
  }
  return false;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
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

/**
 * The regex lists run on the command as written and as the shell reads it (quotes removed, so
 * `r""m -rf /` is `rm -rf /`); then, with a workspace, the structural reading of SEC-10
 * (shell-analysis.ts): outside or unknowable write targets, privileged programs, force pushes,
 * credential globs. Only what it can prove stays in the workspace is a Workspace command.
 */
export function classifyCommand(command: string, workspace?: string): Classification {
  const forbidden: Classification = { risk: 'forbidden', authority: 'privileged_escalation', summary: 'Forbidden shell command' };
  if (command.length > MAX_SCANNED_COMMAND) return forbidden;
  const parsed = parseShell(command);
  const read = parsed.commands.map((c) => [...c.words.map((w) => w.text)].join(' ')).join(' ; ');
  const spellings = read === command ? [command] : [command, read];
  const matches = (patterns: readonly RegExp[]): boolean => spellings.some((text) => patterns.some((p) => p.test(text)));
  if (matches(FORBIDDEN_COMMANDS)) return forbidden;
  const concern = workspace === undefined ? undefined : shellConcern(command, workspace);
  if (concern?.kind === 'forbidden') return { ...forbidden, summary: `Forbidden shell command: it ${concern.why}` };
  if (matches(PRIVILEGED_COMMANDS)) {
    return { risk: 'privileged', authority: 'privileged_escalation', summary: 'Privileged shell command' };
  }
  if (concern?.kind === 'privileged') {
    return { risk: 'privileged', authority: 'privileged_escalation', summary: `Privileged shell command: ${concern.why}` };
  }
  if (concern?.kind === 'outside') {
    return { risk: 'write', authority: 'outside_workspace', summary: `Shell command outside the workspace: ${concern.why}` };
  }
  if (matches(NETWORK_COMMANDS)) {
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
  let why: string | undefined;
  for (const key of facts.pathArguments) {
    const value = input[key];
    const paths = typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v) => typeof v === 'string') : [];
    for (const path of paths) {
      const verdict = resolvePath(context.workspace, path, context.home);
      if (verdict.credential) {
        return { risk: 'forbidden', authority: 'privileged_escalation', summary: `External tool ${name} on a credential path` };
      }
      if (!verdict.inside) outside = true;
      why ??= verdict.home
        ? HOME_REASON
        : protectedWriteReason(realPath(resolve(context.workspace)), verdict.absolute, verdict.real);
    }
  }
  const summary = facts.summary ?? `External tool ${name}`;
  if (why) {
    const authority: Authority = outside ? 'outside_workspace' : 'workspace';
    return { risk: 'write', authority, summary: `${summary} on a ${why}`, protected: why };
  }
  if (outside) return { risk: 'write', authority: 'outside_workspace', summary: `${summary} outside workspace` };
  return { risk: 'write', authority: 'workspace', summary };
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
