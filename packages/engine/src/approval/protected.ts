/**
 * Protected paths (SEC-2): files whose change runs code or steers the agent later, so a write
 * there asks in every approval mode (`edit` and `full` too) and no Session or Always grant
 * covers it. Each rule says why, and the approval card shows that reason.
 *   - `.git/**` (any depth, so submodules too): hooks, `config` (`core.fsmonitor`, `core.pager`,
 *     aliases) run on the next git command;
 *   - `.crystal/**`, `.claude/**`, `.mcp.json`: agent config, tool sets, MCP servers;
 *   - `.vscode/**`: tasks and settings an editor runs;
 *   - instruction files (`AGENTS.md`, `CLAUDE.md`, `CONTEXT.md`, `GEMINI.md`, `.crystal.md`):
 *     they become part of the next session's system prompt.
 * Names compare case-insensitively: on a case-insensitive file system `.GIT/hooks` is `.git/hooks`.
 */
import { relative, sep } from 'node:path';

const PROTECTED_DIRS: Readonly<Record<string, string>> = {
  '.git': 'git runs its hooks and config from here',
  '.crystal': 'Crystal Code loads its project config and tools from here',
  '.claude': 'agent config and commands are loaded from here',
  '.vscode': 'the editor runs tasks and settings from here',
};
const PROTECTED_FILES: Readonly<Record<string, string>> = {
  '.mcp.json': 'it starts MCP servers',
  'agents.md': 'it is an instruction file read into the next session',
  'claude.md': 'it is an instruction file read into the next session',
  'context.md': 'it is an instruction file read into the next session',
  'gemini.md': 'it is an instruction file read into the next session',
  '.crystal.md': 'it is an instruction file read into the next session',
};

/** Why `path` (relative to the workspace, or absolute) is protected, or undefined. */
export function protectedPathReason(path: string): string | undefined {
  const segments = path.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  for (const [index, segment] of segments.entries()) {
    const lower = segment.toLowerCase();
    const dir = PROTECTED_DIRS[lower];
    if (dir) return `protected path: ${segments.slice(0, index + 1).join('/')} (${dir})`;
  }
  const name = (segments.at(-1) ?? '').toLowerCase();
  const file = PROTECTED_FILES[name];
  return file ? `protected path: ${segments.join('/')} (${file})` : undefined;
}

/**
 * The reason for a write to `absolute`/`real` under `workspace`: the path as given and its final
 * target are both checked, relative to the workspace when inside it.
 */
export function protectedWriteReason(workspaceReal: string, absolute: string, real: string): string | undefined {
  for (const candidate of [real, absolute]) {
    const rel = relative(workspaceReal, candidate);
    const inside = rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..';
    const reason = protectedPathReason(inside ? rel : candidate);
    if (reason) return reason;
  }
  return undefined;
}

/** Words in a shell command that name a protected path (`.git/hooks`, `./.vscode`, `AGENTS.md`). */
const PROTECTED_IN_COMMAND =
  /(^|[\s'"=:/<>|;&(`])\.(?:git|crystal|claude|vscode)(?=[/\s'"`;&|)<>]|$)|(^|[\s'"=:/<>|;&(`])(?:\.mcp\.json|AGENTS\.md|CLAUDE\.md|CONTEXT\.md|GEMINI\.md|\.crystal\.md)(?=[\s'"`;&|)<>]|$)/i;

/** Commands that only read, so naming a protected path with them is no write. */
const READ_ONLY_COMMANDS = new Set([
  'cat',
  'less',
  'more',
  'head',
  'tail',
  'ls',
  'grep',
  'egrep',
  'fgrep',
  'rg',
  'wc',
  'stat',
  'file',
  'diff',
  'cmp',
  'echo',
  'printf',
  'test',
  '[',
  'true',
  'false',
  'pwd',
  'cd',
  'du',
  'realpath',
  'readlink',
  'basename',
  'dirname',
  'sort',
  'uniq',
]);
const READ_ONLY_GIT = new Set(['status', 'log', 'diff', 'show', 'rev-parse', 'ls-files', 'blame', 'branch', 'describe']);

/**
 * Why a shell command may write a protected path: it names one and is not made of read-only
 * commands only (any redirection into a file, `tee`, `cp`, `sed -i`, an interpreter, …), or it
 * changes git config. Conservative: a command it cannot read as harmless asks.
 */
export function protectedCommandReason(command: string): string | undefined {
  if (/\bgit\b(?:\s+-[Cc]\s+\S+)*\s+config\b(?![^;&|\n]*\s(?:--get|--get-all|--get-regexp|--list|-l)\b)/.test(command)) {
    return 'protected path: .git/config (git config changes what git runs)';
  }
  const match = PROTECTED_IN_COMMAND.exec(command);
  if (!match) return undefined;
  const named = match[0].replace(/^[\s'"=:/<>|;&(`]/, '');
  if (writesAnything(command)) return `protected path: ${named} (the command may write there)`;
  return undefined;
}

function writesAnything(command: string): boolean {
  // Redirections other than to /dev/null or another descriptor.
  if (/(^|[^<>&0-9])>{1,2}(?!\s*(?:&\d|\/dev\/null\b))/.test(command.replace(/\d?>&\d/g, ''))) return true;
  if (/[`$]\(|`/.test(command)) return true;
  for (const segment of command.split(/&&|\|\||[;|\n&]/)) {
    const words = segment.trim().split(/\s+/).filter(Boolean);
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] as string)) words.shift();
    const head = words[0];
    if (head === undefined) continue;
    const name = head.replace(/^.*\//, '');
    if (name === 'git') {
      const sub = words.slice(1).find((w) => !w.startsWith('-'));
      if (sub !== undefined && READ_ONLY_GIT.has(sub)) continue;
      return true;
    }
    if (name === 'find' && !words.some((w) => /^-(?:delete|exec|execdir|ok|okdir|fprint\w*|fls)$/.test(w))) continue;
    if (!READ_ONLY_COMMANDS.has(name)) return true;
  }
  return false;
}
