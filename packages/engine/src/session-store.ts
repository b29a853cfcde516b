/** Session files `sessions/<id>.json` in the reference's shape, written atomically. */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, Usage } from '@crystal/core';
import { writeFileAtomic } from './atomic-write.js';
import { UsageError } from './errors.js';
import { homePaths } from './home.js';
import { fromItems, type SessionItem, toItems } from './transcript-items.js';

export interface SessionState {
  id: string;
  workspace: string;
  createdUtc: string;
  updatedUtc: string;
  provider: string;
  model: string;
  /** The model context (HIST-3). */
  context: ChatMessage[];
  /** The archive (HIST-2). */
  archive: ChatMessage[];
  userTurns: number;
  modelCalls: number;
  toolCalls: number;
  /** The last round's reported usage. */
  usage: Usage;
  cumulativeUsage: Usage;
}

interface UsageShape {
  inputTokenCount: number;
  outputTokenCount: number;
  reasoningTokenCount: number | null;
}

export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

export function sessionPath(home: string, id: string): string {
  return join(homePaths(home).sessions, `${id}.json`);
}

const usageShape = (u: Usage): UsageShape => ({
  inputTokenCount: u.inputTokens,
  outputTokenCount: u.outputTokens,
  reasoningTokenCount: u.reasoningTokens ?? null,
});

const usageOf = (raw: unknown): Usage => {
  const u = (raw ?? {}) as Partial<UsageShape>;
  return {
    inputTokens: typeof u.inputTokenCount === 'number' ? u.inputTokenCount : 0,
    outputTokens: typeof u.outputTokenCount === 'number' ? u.outputTokenCount : 0,
    ...(typeof u.reasoningTokenCount === 'number' ? { reasoningTokens: u.reasoningTokenCount } : {}),
  };
};

export function serialiseSession(state: SessionState): string {
  const file = {
    id: state.id,
    workspace: state.workspace,
    planMode: false,
    createdUtc: state.createdUtc,
    updatedUtc: state.updatedUtc,
    provider: state.provider,
    model: state.model,
    items: toItems(state.context),
    archive: toItems(state.archive),
    images: [],
    imageMarkersTagged: true,
    todos: [],
    userTurns: state.userTurns,
    modelCalls: state.modelCalls,
    toolCalls: state.toolCalls,
    usage: usageShape(state.usage),
    cumulativeUsage: usageShape(state.cumulativeUsage),
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

export async function saveSession(home: string, state: SessionState): Promise<string> {
  const path = sessionPath(home, state.id);
  await writeFileAtomic(path, serialiseSession(state));
  return path;
}

/** Loads a session; a missing, empty or unreadable file is a clear error (CLI-1). */
export function loadSession(home: string, id: string): SessionState {
  const path = sessionPath(home, id);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`No saved session '${id}' (looked for ${path}). List sessions with 'crystal sessions'.`);
  }
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`Session file ${path} is not valid JSON (${(error as Error).message}); it was left unchanged.`);
  }
  const items = Array.isArray(raw.items) ? (raw.items as SessionItem[]) : [];
  // HIST-7: a file written before the archive existed loads its items as the archive.
  const archiveItems = Array.isArray(raw.archive) ? (raw.archive as SessionItem[]) : items;
  const context = fromItems(items);
  const archive = fromItems(archiveItems);
  if (archive.length === 0 && context.length === 0) {
    throw new UsageError(`Session '${id}' (${path}) is empty; there is nothing to resume.`);
  }
  const str = (key: string, fallback: string): string => (typeof raw[key] === 'string' ? (raw[key] as string) : fallback);
  const num = (key: string): number => (typeof raw[key] === 'number' ? (raw[key] as number) : 0);
  return {
    id: str('id', id),
    workspace: str('workspace', ''),
    createdUtc: str('createdUtc', new Date().toISOString()),
    updatedUtc: str('updatedUtc', new Date().toISOString()),
    provider: str('provider', ''),
    model: str('model', ''),
    context,
    archive,
    userTurns: num('userTurns'),
    modelCalls: num('modelCalls'),
    toolCalls: num('toolCalls'),
    usage: usageOf(raw.usage),
    cumulativeUsage: usageOf(raw.cumulativeUsage),
  };
}
