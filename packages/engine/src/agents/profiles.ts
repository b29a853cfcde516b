/**
 * Agent profiles (AGENT-2): the built-in `general` and `explore`, and custom agents from
 * Markdown files in Claude Code's shape: front matter `name`, `description`, optional `tools`
 * and `model`; the body is the system prompt. Searched, lowest precedence first, in
 * `~/.claude/agents`, Home's `agents` (`~/.crystal/agents`), then for each project directory
 * from the git root down to the workspace `.claude/agents` and `.crystal/agents`; a later file
 * replaces an earlier profile of the same name (a project may redefine `general` or `explore`).
 * Profiles are text, like `AGENTS.md`: they load in any workspace, and the tools they name are
 * only a subset of the session's catalog, each call still approved as usual.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { listField, parseFrontMatter, textField } from '../extensions/front-matter.js';
import { type ExtensionPlaces, projectDirs, userHomeOf } from '../extensions/search-paths.js';

export interface AgentProfile {
  readonly name: string;
  readonly description: string;
  /** Tool names the child may use (a subset of the session's catalog); undefined: all of them. */
  readonly tools?: readonly string[];
  /** Only reading tools, whatever the catalog holds (`explore`). */
  readonly readOnly: boolean;
  /** `provider/model` or a model id of the session's provider; undefined: the session's model. */
  readonly model?: string;
  /** The system prompt body; undefined: the built-in prompt of `general`. */
  readonly prompt?: string;
  /** `built-in`, or the file the profile came from. */
  readonly source: string;
}

export interface ProfileCatalog {
  readonly profiles: ReadonlyMap<string, AgentProfile>;
  /** Files skipped and why, named by path. */
  readonly notes: readonly string[];
}

export const AGENT_NAME = /^[a-z0-9]+([-_][a-z0-9]+)*$/;
const MAX_PROFILE_BYTES = 256 * 1024;

/** The reading tools of `explore` (and of every child in Plan, with what the Plan catalog adds). */
export const READ_ONLY_AGENT_TOOLS: readonly string[] = ['read', 'list', 'glob', 'grep'];

export const GENERAL_PROMPT = [
  'You are a sub-agent of Crystal Code, a coding agent. The main agent gave you one self-contained task.',
  'Do it with the tools you have, then reply with your final answer: it is the only thing the main agent sees',
  'of your work, so make it complete and concrete (file paths, line numbers, what you changed or found).',
  'You cannot ask the user questions; when something is unclear, choose the most reasonable reading and say so.',
].join(' ');

export const EXPLORE_PROMPT = [
  'You are an exploring sub-agent of Crystal Code, a coding agent. You can only read: list, glob, grep and read files.',
  'Find what the task asks for quickly, reading only what you need, then reply with your final answer:',
  'the files, symbols and line numbers that matter and a short explanation. It is the only thing the main agent sees.',
].join(' ');

export function builtinProfiles(exploreModel?: string): AgentProfile[] {
  return [
    {
      name: 'general',
      description:
        'General-purpose agent for multi-step tasks: researching a question, searching code, making and checking a change. Has the tools of the session.',
      readOnly: false,
      prompt: GENERAL_PROMPT,
      source: 'built-in',
    },
    {
      name: 'explore',
      description:
        'Fast read-only agent for exploring a codebase: finds files, searches code and answers questions about it. Cannot change anything.',
      readOnly: true,
      tools: READ_ONLY_AGENT_TOOLS,
      ...(exploreModel ? { model: exploreModel } : {}),
      prompt: EXPLORE_PROMPT,
      source: 'built-in',
    },
  ];
}

/** Agent folders, lowest precedence first. */
export function agentSearchRoots(places: ExtensionPlaces): string[] {
  const roots = [join(userHomeOf(places), '.claude', 'agents'), join(places.home, 'agents')];
  for (const dir of projectDirs(places.workspace)) roots.push(join(dir, '.claude', 'agents'), join(dir, '.crystal', 'agents'));
  return [...new Set(roots)];
}

/** Claude Code's tool names mapped onto ours, so its agent files load unchanged. */
const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = {
  read: 'read',
  write: 'write',
  edit: 'edit',
  multiedit: 'edit',
  bash: 'bash',
  glob: 'glob',
  grep: 'grep',
  ls: 'list',
  todowrite: 'todowrite',
  todoread: 'todoread',
};

export function normaliseToolName(name: string): string {
  const bare = name.replace(/\(.*\)$/, '').trim();
  return CLAUDE_TOOL_NAMES[bare.toLowerCase()] ?? bare;
}

/** Claude Code's model aliases: they name no model of ours, so the profile keeps the session's. */
const CLAUDE_MODEL_ALIASES = new Set(['inherit', 'sonnet', 'opus', 'haiku']);

export function discoverProfiles(places: ExtensionPlaces, exploreModel?: string): ProfileCatalog {
  const profiles = new Map<string, AgentProfile>(builtinProfiles(exploreModel).map((p) => [p.name, p]));
  const notes: string[] = [];
  for (const root of agentSearchRoots(places)) {
    let entries: string[];
    try {
      // Most search roots do not exist: no exception for those (issue 22).
      if (!statSync(root, { throwIfNoEntry: false })) continue;
      entries = readdirSync(root)
        .filter((name) => name.endsWith('.md'))
        .sort();
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(root, entry);
      const profile = loadProfile(path, notes);
      if (profile) profiles.set(profile.name, profile);
    }
  }
  return { profiles, notes };
}

function loadProfile(path: string, notes: string[]): AgentProfile | undefined {
  let text: string;
  try {
    const info = statSync(path);
    if (!info.isFile()) return undefined;
    if (info.size > MAX_PROFILE_BYTES) {
      notes.push(`Agent profile ${path} skipped: larger than 256 KiB.`);
      return undefined;
    }
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const { fields, body, present } = parseFrontMatter(text);
  const name = textField(fields, 'name');
  const description = textField(fields, 'description').replace(/\s+/g, ' ');
  if (!present || name === '' || description === '') {
    notes.push(`Agent profile ${path} skipped: its front matter needs "name" and "description".`);
    return undefined;
  }
  if (!AGENT_NAME.test(name) || name.length > 64) {
    notes.push(
      `Agent profile ${path} skipped: "name" must be lower-case letters and digits joined by - or _ (at most 64 characters), not "${name}".`,
    );
    return undefined;
  }
  const listed = fields.tools === undefined ? undefined : listField(fields, 'tools').map(normaliseToolName);
  const model = textField(fields, 'model');
  const prompt = body.trim();
  return {
    name,
    description,
    ...(listed === undefined ? {} : { tools: [...new Set(listed)] }),
    readOnly: false,
    ...(model !== '' && !CLAUDE_MODEL_ALIASES.has(model.toLowerCase()) ? { model } : {}),
    ...(prompt === '' ? {} : { prompt }),
    source: path,
  };
}
