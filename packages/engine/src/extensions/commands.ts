/**
 * Custom slash commands (CMD-1): Markdown files in `~/.claude/commands`, `<Home>/commands`,
 * and per project directory `.claude/commands` and `.crystal/commands` (later wins). The file
 * name is the command (`review.md` is `/review`; `git/pr.md` is `/git:pr`, as in Claude Code).
 * Front matter: `description`, `argument-hint`, `allowed-tools` (the command's turn may use only
 * those tools, allowed-tools.ts).
 * Running one sends its body, with `$ARGUMENTS` and `$1…$9` filled in, as a user message.
 * Commands are text, like `AGENTS.md`: they load in any workspace, trusted or not.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { type CommandSpec, withCustomCommands } from '../commands/registry.js';
import { listField, parseFrontMatter, textField } from './front-matter.js';
import { commandSearchRoots, type ExtensionPlaces } from './search-paths.js';

export interface CustomCommand {
  /** Lower-case name without the slash (`review`, `git:pr`). */
  readonly name: string;
  readonly description: string;
  readonly argumentHint: string;
  /** `allowed-tools` as written; enforced for the command's turn (allowed-tools.ts). */
  readonly allowedTools: readonly string[];
  readonly body: string;
  readonly path: string;
}

const NAME = /^[a-z0-9][a-z0-9_.-]*(:[a-z0-9][a-z0-9_.-]*)*$/;
const MAX_FILE_BYTES = 256 * 1024;
const MAX_DEPTH = 3;

/** Every custom command by name; a later folder replaces an earlier command of the same name. */
export function discoverCommands(places: ExtensionPlaces): Map<string, CustomCommand> {
  const commands = new Map<string, CustomCommand>();
  for (const root of commandSearchRoots(places)) {
    for (const path of markdownFiles(root, 0)) {
      const name = relative(root, path).replace(/\.md$/i, '').split(sep).join(':').toLowerCase();
      if (!NAME.test(name)) continue;
      let text: string;
      try {
        if (statSync(path).size > MAX_FILE_BYTES) continue;
        text = readFileSync(path, 'utf8');
      } catch {
        continue;
      }
      const { fields, body } = parseFrontMatter(text);
      const description = textField(fields, 'description') || firstLine(body);
      commands.set(name, {
        name,
        description,
        argumentHint: textField(fields, 'argument-hint'),
        allowedTools: listField(fields, 'allowed-tools'),
        body: body.replace(/^\n+/, ''),
        path,
      });
    }
  }
  return commands;
}

function markdownFiles(dir: string, depth: number): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    let isDir = entry.isDirectory();
    let isFile = entry.isFile();
    if (entry.isSymbolicLink()) {
      try {
        const target = statSync(path);
        isDir = target.isDirectory();
        isFile = target.isFile();
      } catch {
        continue;
      }
    }
    if (isFile && /\.md$/i.test(entry.name)) files.push(path);
    else if (isDir && depth < MAX_DEPTH && !entry.name.startsWith('.')) files.push(...markdownFiles(path, depth + 1));
  }
  return files;
}

function firstLine(body: string): string {
  const line = body.split('\n').find((l) => l.trim() !== '') ?? '';
  const text = line.replace(/^#+\s*/, '').trim();
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** Splits arguments on whitespace, keeping "double" or 'single' quoted words together. */
export function splitArguments(argument: string): string[] {
  const words: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const match of argument.matchAll(pattern))
    words.push(match[1]?.replace(/\\(.)/g, '$1') ?? match[2] ?? (match[3] as string));
  return words;
}

/**
 * The message a command sends: `$ARGUMENTS` is the whole argument text, `$1`…`$9` its words
 * (missing ones are empty). A body with no placeholder gets the arguments appended, so they are
 * never silently lost.
 */
export function expandCommand(command: CustomCommand, argument: string): string {
  const args = argument.trim();
  const words = splitArguments(args);
  const uses = /\$ARGUMENTS\b|\$[1-9]/.test(command.body);
  const expanded = command.body.replace(/\$ARGUMENTS\b|\$([1-9])/g, (_all, index: string | undefined) =>
    index === undefined ? args : (words[Number(index) - 1] ?? ''),
  );
  const text = expanded.replace(/\s+$/, '');
  return !uses && args !== '' ? `${text}\n\nARGUMENTS: ${args}` : text;
}

/** `/name args` when `name` is a custom command: the command and the argument text; otherwise null. */
export function matchCustomCommand(
  text: string,
  commands: ReadonlyMap<string, CustomCommand>,
): { command: CustomCommand; argument: string } | null {
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(text.trim());
  if (!match) return null;
  const command = commands.get((match[1] as string).toLowerCase());
  return command ? { command, argument: match[2] as string } : null;
}

/** The command as the registry lists it in `/help` and the slash picker. */
export function commandUsage(command: CustomCommand): string {
  return command.argumentHint ? `/${command.name} ${command.argumentHint}` : `/${command.name}`;
}

/** Registry entries for the custom commands (for `/help` and the slash picker). */
export function customCommandSpecs(commands: ReadonlyMap<string, CustomCommand>): CommandSpec[] {
  return [...commands.values()].map((command) => ({
    name: command.name,
    aliases: [],
    usage: commandUsage(command),
    summary: command.description || 'Custom command.',
    phase: 'message' as const,
  }));
}

/** The whole command list a surface shows: built-ins, then the custom commands of this workspace. */
export function listCommands(places: ExtensionPlaces): CommandSpec[] {
  return withCustomCommands(customCommandSpecs(discoverCommands(places)));
}
