/**
 * Child transcripts (AGENT-4): each child agent's conversation is kept as a linked session,
 * `sessions/children/<parent id>/<child id>.json`, in the reference's single-file session shape
 * (what `crystal export` writes) plus an `agent` block naming the parent, the call and the
 * path. It is written with the atomic writer at every commit point of the child, so a kill -9
 * leaves the last committed state. Children live apart from the sessions list: `crystal
 * sessions` and `--continue` never pick one, and the parent's model context holds only the
 * child's final answer (the task call's result), never this transcript.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ChatMessage, emptyUsage, type Usage, isoTime } from '@crystal/core';
import { writeFileAtomic } from '../atomic-write.js';
import { UsageError } from '../errors.js';
import type { StopReason } from '../events.js';
import { sessionsDir, serialiseSession } from '../session-store.js';
import { isSessionId, requireSessionId } from '../session-names.js';
import { fromItems, type SessionItem } from '../transcript-items.js';
import { stripMarkerPrefix } from '../images/index.js';

export interface ChildLink {
  readonly path: string;
  readonly profile: string;
  readonly parentSessionId: string;
  readonly callId: string;
  readonly description: string;
  /** `running` until the child stops; a child a crash cut off stays `running` until resume closes its call. */
  readonly state: 'running' | StopReason;
}

export interface ChildRecord {
  readonly id: string;
  readonly workspace: string;
  readonly provider: string;
  readonly model: string;
  readonly createdUtc: string;
  readonly agent: ChildLink;
  /** The child's archive: its task prompt, rounds, tool calls and results (no system prompt). */
  readonly archive: readonly ChatMessage[];
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly usage: Usage;
}

export function childrenDir(home: string, parentSessionId: string): string {
  return join(sessionsDir(home), 'children', requireSessionId(parentSessionId));
}

export function childPathOnDisk(home: string, parentSessionId: string, childId: string): string {
  return join(childrenDir(home, parentSessionId), `${requireSessionId(childId)}.json`);
}

export async function saveChild(home: string, record: ChildRecord): Promise<string> {
  const now = isoTime();
  const head = JSON.parse(
    serialiseSession({
      id: record.id,
      workspace: record.workspace,
      createdUtc: record.createdUtc,
      updatedUtc: now,
      provider: record.provider,
      model: record.model,
      context: [...record.archive],
      archive: [...record.archive],
      userTurns: 1,
      modelCalls: record.modelCalls,
      toolCalls: record.toolCalls,
      usage: record.usage,
      cumulativeUsage: record.usage,
      queued: [],
      images: [],
      imageMarkersTagged: true,
      pendingApprovals: [],
    }),
  ) as Record<string, unknown>;
  const path = childPathOnDisk(home, record.agent.parentSessionId, record.id);
  await writeFileAtomic(path, `${JSON.stringify({ ...head, agent: record.agent }, null, 2)}\n`);
  return path;
}

export interface ChildSummary extends ChildLink {
  readonly id: string;
  readonly updatedUtc: string;
  readonly messageCount: number;
}

/** The children of a parent session, oldest first; unreadable files are left out. */
export function listChildren(home: string, parentSessionId: string): ChildSummary[] {
  const dir = childrenDir(home, parentSessionId);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: ChildSummary[] = [];
  for (const name of names.sort()) {
    const id = name.endsWith('.json') ? name.slice(0, -5) : '';
    if (!isSessionId(id)) continue;
    const raw = readRaw(join(dir, name));
    const agent = raw ? linkOf(raw.agent) : undefined;
    if (!raw || !agent) continue;
    out.push({
      ...agent,
      id,
      updatedUtc: typeof raw.updatedUtc === 'string' ? raw.updatedUtc : '',
      messageCount: Array.isArray(raw.archive) ? raw.archive.length : 0,
    });
  }
  return out.sort((a, b) => (a.updatedUtc < b.updatedUtc ? -1 : a.updatedUtc > b.updatedUtc ? 1 : 0));
}

/** One child by id or agent path (`main/explore#1`); a clear error names the parent and the choices. */
export function loadChild(
  home: string,
  parentSessionId: string,
  which: string,
): { record: ChildRecord; file: string; text: string } {
  const children = listChildren(home, parentSessionId);
  const found = children.find((c) => c.id === which || c.path === which);
  if (!found) {
    const known = children.map((c) => `${c.path} (${c.id})`).join(', ');
    throw new UsageError(
      `Session ${parentSessionId} has no child agent ${which}. ${known === '' ? 'It started no child agents.' : `Its children: ${known}.`}`,
    );
  }
  const file = childPathOnDisk(home, parentSessionId, found.id);
  const text = readFileSync(file, 'utf8');
  const raw = JSON.parse(text) as Record<string, unknown>;
  const archive = Array.isArray(raw.archive) ? fromItems(raw.archive as SessionItem[]) : [];
  return {
    file,
    text,
    record: {
      id: found.id,
      workspace: typeof raw.workspace === 'string' ? raw.workspace : '',
      provider: typeof raw.provider === 'string' ? raw.provider : '',
      model: typeof raw.model === 'string' ? raw.model : '',
      createdUtc: typeof raw.createdUtc === 'string' ? raw.createdUtc : '',
      agent: found,
      archive,
      modelCalls: typeof raw.modelCalls === 'number' ? raw.modelCalls : 0,
      toolCalls: typeof raw.toolCalls === 'number' ? raw.toolCalls : 0,
      usage: emptyUsage,
    },
  };
}

/** A child's transcript as readable Markdown (the same layout as a session's export). */
export function childMarkdown(record: ChildRecord): string {
  const lines = [
    `# Agent ${record.agent.path}`,
    '',
    `Profile: ${record.agent.profile}`,
    `Session: ${record.id} (child of ${record.agent.parentSessionId}, call ${record.agent.callId})`,
    `Model: ${record.provider}/${record.model}`,
    `State: ${record.agent.state}`,
    '',
  ];
  for (const message of record.archive) {
    for (const part of message.content) {
      if (part.type === 'text' && message.role !== 'system') {
        lines.push(`## ${message.role === 'user' ? 'Task' : 'Agent'}`, '', stripMarkerPrefix(part.text), '');
      } else if (part.type === 'tool-call') lines.push(`**Tool call** \`${part.name}\` ${part.arguments}`, '');
      else if (part.type === 'tool-result') {
        const text = part.content.map((c) => (c.type === 'text' ? stripMarkerPrefix(c.text) : '')).join('');
        lines.push(`**Tool result** (${part.isError ? 'failure' : 'success'})`, '', '```', text, '```', '');
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Resume closed a dangling `task` call as interrupted (never run twice): the child's file says
 * so too, so browsing it never shows a child that looks as if it were still running.
 */
export async function markChildrenInterrupted(
  home: string,
  parentSessionId: string,
  callIds: ReadonlySet<string>,
): Promise<void> {
  for (const child of listChildren(home, parentSessionId)) {
    if (child.state !== 'running' || !callIds.has(child.callId)) continue;
    const file = childPathOnDisk(home, parentSessionId, child.id);
    const raw = readRaw(file);
    if (!raw) continue;
    await writeFileAtomic(file, `${JSON.stringify({ ...raw, agent: { ...child, state: 'interrupted' } }, null, 2)}\n`).catch(
      () => undefined,
    );
  }
}

function readRaw(file: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function linkOf(value: unknown): ChildLink | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  const str = (key: string): string | undefined => (typeof v[key] === 'string' ? (v[key] as string) : undefined);
  const path = str('path');
  const profile = str('profile');
  const parentSessionId = str('parentSessionId');
  const callId = str('callId');
  if (!path || !profile || !parentSessionId || !callId) return undefined;
  return {
    path,
    profile,
    parentSessionId,
    callId,
    description: str('description') ?? '',
    state: (str('state') ?? 'running') as ChildLink['state'],
  };
}
