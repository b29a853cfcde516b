/**
 * Instruction files (reference 9.3), in order:
 * 1. `<home>/instructions.md`, 2. `<ws>/.crystal/instructions.md`, 3. `<ws>/.crystal.md`,
 * 4. global rules: the first of `<home>/AGENTS.md`, `<home>/CLAUDE.md`,
 *    `~/.config/opencode/AGENTS.md`, `~/.claude/CLAUDE.md`,
 * 5. project rules: from the git root (or the workspace when there is none) down to the
 *    workspace, the first name found on that walk among `AGENTS.md`, `CLAUDE.md`, `CONTEXT.md`;
 *    every file of that name is appended, the nearest last.
 * They add to the Work and Plan text; they never replace it.
 */
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { findGitRoot } from '../tools/builtin/walker.js';
import { readTextIfPresent } from '../fs-errors.js';

export const INSTRUCTION_FILE_MAX_CHARS = 50_000;
const PROJECT_NAMES = ['AGENTS.md', 'CLAUDE.md', 'CONTEXT.md'] as const;

export interface InstructionFile {
  readonly path: string;
  readonly text: string;
}

export interface InstructionSources {
  readonly workspace: string;
  /** Crystal Home (`~/.crystal` or `CRYSTAL_HOME`). */
  readonly home: string;
  /** The user's home folder, for the OpenCode and Claude locations; defaults to `os.homedir()`. */
  readonly userHome?: string;
}

export function findInstructionFiles(sources: InstructionSources): InstructionFile[] {
  const workspace = resolve(sources.workspace);
  const userHome = sources.userHome ?? homedir();
  const candidates: string[] = [
    join(sources.home, 'instructions.md'),
    join(workspace, '.crystal', 'instructions.md'),
    join(workspace, '.crystal.md'),
  ];
  const global = [
    join(sources.home, 'AGENTS.md'),
    join(sources.home, 'CLAUDE.md'),
    join(userHome, '.config', 'opencode', 'AGENTS.md'),
    join(userHome, '.claude', 'CLAUDE.md'),
  ].find(isFile);
  if (global) candidates.push(global);
  candidates.push(...projectRules(workspace));
  const seen = new Set<string>();
  const files: InstructionFile[] = [];
  for (const path of candidates) {
    const file = readInstruction(path);
    if (!file) continue;
    const key = realpathSync(path);
    if (seen.has(key)) continue;
    seen.add(key);
    files.push(file);
  }
  return files;
}

/** The walk from the workspace up to the git root, returned root first (the nearest last). */
function projectRules(workspace: string): string[] {
  const top = findGitRoot(workspace) ?? workspace;
  const dirs: string[] = [];
  for (let dir = workspace; ; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dir === top || dirname(dir) === dir) break;
  }
  for (const name of PROJECT_NAMES) {
    const found = dirs.map((dir) => join(dir, name)).filter(isFile);
    if (found.length > 0) return found;
  }
  return [];
}

function isFile(path: string): boolean {
  try {
    // A missing file is the common case: no exception for it (each costs a stack trace; issue 22).
    return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

function readInstruction(path: string): InstructionFile | undefined {
  let text: string;
  try {
    const read = readTextIfPresent(path);
    if (read === undefined) return undefined;
    text = read.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  } catch {
    return undefined;
  }
  if (text.trim() === '') return undefined; // An empty file counts as missing.
  if (text.length > INSTRUCTION_FILE_MAX_CHARS) {
    text = `${text.slice(0, INSTRUCTION_FILE_MAX_CHARS)}\n[truncated to ${INSTRUCTION_FILE_MAX_CHARS} characters]`;
  }
  return { path, text: text.trimEnd() };
}
