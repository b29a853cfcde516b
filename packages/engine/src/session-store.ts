/**
 * Session files. `sessions/<id>.json` is the head in the reference's shape (id, workspace,
 * times, counters, usage, todos, images); the two transcripts live beside it in append-only
 * companions, one message per line:
 *
 *   sessions/<id>.archive.jsonl           the archive (HIST-2)
 *   sessions/<id>.context.<gen>.jsonl     the model context after the live system prompt (HIST-3)
 *
 * A save appends only the messages added since the last save, then atomically replaces the
 * head, which records how many bytes of each companion are committed. The head's rename is
 * the commit point: a crash (kill -9) at any moment leaves either the old or the new head,
 * and bytes past the recorded length are ignored on load and cut off by the next save. So a
 * save costs the same at 10,000 items as at 100, and a session file is never half-written.
 * Compaction or /clear, which rewrite a transcript, start a new generation file instead.
 * A head that holds `items`/`archive` arrays (older files, exports) loads as before (HIST-7).
 */
import { randomBytes } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
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
  /** The model context (HIST-3); index 0 is the live system prompt. */
  context: ChatMessage[];
  /** The archive (HIST-2). */
  archive: ChatMessage[];
  userTurns: number;
  modelCalls: number;
  toolCalls: number;
  /** The last round's reported usage. */
  usage: Usage;
  cumulativeUsage: Usage;
  /** Follow-ups queued while a turn ran, saved as they change so a crash does not lose them. */
  queued: string[];
  /** The `images` records (hash + MIME, never bytes: IMG-10), as loaded or computed before a save. */
  images: unknown[];
  /** Whether the transcript's markers carry the provenance prefix (IMG-6); absent in older files. */
  imageMarkersTagged: boolean;
  /** Calls waiting for the operator's approval, saved so a crash asks again at resume. */
  pendingApprovals: string[];
}

interface UsageShape {
  inputTokenCount: number;
  outputTokenCount: number;
  reasoningTokenCount: number | null;
}

interface LogRef {
  file: string;
  bytes: number;
  messages: number;
}

interface LogHead {
  version: 1;
  generation: number;
  archive: LogRef;
  context: LogRef;
}

export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

export function sessionsDir(home: string): string {
  return homePaths(home).sessions;
}

export function sessionPath(home: string, id: string): string {
  return join(sessionsDir(home), `${id}.json`);
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

const messageLine = (message: ChatMessage): string => `${JSON.stringify(toItems([message]))}\n`;

/** The whole session in the reference's single-file shape (export, fork, tests). */
export function serialiseSession(state: SessionState): string {
  return `${JSON.stringify({ ...headFields(state), items: toItems(state.context), archive: toItems(state.archive) }, null, 2)}\n`;
}

function headFields(state: SessionState): Record<string, unknown> {
  return {
    id: state.id,
    workspace: state.workspace,
    planMode: false,
    createdUtc: state.createdUtc,
    updatedUtc: state.updatedUtc,
    provider: state.provider,
    model: state.model,
    title: titleOf(state.archive),
    messageCount: state.archive.length,
    images: state.images ?? [],
    imageMarkersTagged: true,
    todos: [],
    userTurns: state.userTurns,
    modelCalls: state.modelCalls,
    toolCalls: state.toolCalls,
    usage: usageShape(state.usage),
    cumulativeUsage: usageShape(state.cumulativeUsage),
    queued: state.queued,
    pendingApprovals: state.pendingApprovals ?? [],
  };
}

function titleOf(archive: readonly ChatMessage[]): string {
  const first = archive.find((m) => m.role === 'user');
  const text = first?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** One transcript's persisted part: the messages (by identity) already committed to its file. */
class PersistedLog {
  constructor(
    public ref: LogRef,
    public committed: ChatMessage[],
  ) {}

  /** Whether `messages` extends what is committed (same objects, in order). */
  extends(messages: readonly ChatMessage[]): boolean {
    if (messages.length < this.committed.length) return false;
    for (let i = 0; i < this.committed.length; i++) if (messages[i] !== this.committed[i]) return false;
    return true;
  }
}

/**
 * A session's files. One instance per open session; saves are serialised, so a save never
 * races another save of the same session in this process.
 */
export class SessionFiles {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly home: string,
    readonly id: string,
    private generation: number,
    private archive: PersistedLog | undefined,
    private context: PersistedLog | undefined,
  ) {}

  static create(home: string, id: string): SessionFiles {
    return new SessionFiles(home, id, 0, undefined, undefined);
  }

  /** Saves the state; resolves to the head path once committed. */
  save(state: SessionState): Promise<string> {
    const run = this.queue.then(() => this.saveNow(state));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async saveNow(state: SessionState): Promise<string> {
    const dir = sessionsDir(this.home);
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    // One consistent snapshot of both transcripts and the head, taken before any await.
    const contextBody = state.context[0]?.role === 'system' ? state.context.slice(1) : [...state.context];
    const archiveNow = [...state.archive];
    const fields = headFields(state);
    const old: string[] = [];
    let generation = this.generation;
    const nextFile = (kind: 'archive' | 'context'): string => {
      generation++;
      return `${this.id}.${kind}.${generation}.jsonl`;
    };
    const archive = await this.persist(dir, this.archive, archiveNow, () => nextFile('archive'), old);
    const context = await this.persist(dir, this.context, contextBody, () => nextFile('context'), old);
    const head: LogHead = { version: 1, generation, archive: archive.ref, context: context.ref };
    const path = sessionPath(this.home, this.id);
    await writeFileAtomic(path, `${JSON.stringify({ ...fields, items: null, archive: null, log: head }, null, 2)}\n`);
    this.generation = generation;
    this.archive = archive;
    this.context = context;
    for (const file of old) await fs.rm(join(dir, file), { force: true });
    return path;
  }

  /**
   * Appends what is new, or writes a new generation when the transcript was rewritten. `live`
   * is a snapshot taken before the first await: a turn may append while the write runs, and
   * those later messages belong to the next save, not to the bytes written now.
   */
  private async persist(
    dir: string,
    persisted: PersistedLog | undefined,
    live: readonly ChatMessage[],
    nextFile: () => string,
    old: string[],
  ): Promise<PersistedLog> {
    const messages = live as ChatMessage[];
    if (persisted?.extends(messages)) {
      const fresh = messages.slice(persisted.committed.length);
      if (fresh.length === 0) return persisted;
      const data = fresh.map(messageLine).join('');
      await writeAt(join(dir, persisted.ref.file), persisted.ref.bytes, data);
      return new PersistedLog(
        { file: persisted.ref.file, bytes: persisted.ref.bytes + Buffer.byteLength(data), messages: messages.length },
        messages,
      );
    }
    const file = nextFile();
    const data = messages.map(messageLine).join('');
    await writeAt(join(dir, file), 0, data);
    if (persisted) old.push(persisted.ref.file);
    return new PersistedLog({ file, bytes: Buffer.byteLength(data), messages: messages.length }, messages);
  }

  /** Loads a session; a missing, empty or unreadable head is a clear error (CLI-1). */
  static load(home: string, id: string): { state: SessionState; files: SessionFiles; notes: string[] } {
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
    if (!raw || typeof raw !== 'object') throw new UsageError(`Session file ${path} does not hold a session object.`);
    const notes: string[] = [];
    const dir = sessionsDir(home);
    const log = raw.log as LogHead | undefined;
    let archive: ChatMessage[];
    let context: ChatMessage[];
    let files: SessionFiles;
    if (log && log.version === 1) {
      archive = readLog(dir, log.archive, notes);
      context = readLog(dir, log.context, notes);
      files = new SessionFiles(
        home,
        id,
        log.generation,
        new PersistedLog({ ...log.archive, messages: archive.length }, [...archive]),
        new PersistedLog({ ...log.context, messages: context.length }, [...context]),
      );
    } else {
      const items = Array.isArray(raw.items) ? (raw.items as SessionItem[]) : [];
      // HIST-7: a file written before the archive existed loads its items as the archive.
      archive = fromItems(Array.isArray(raw.archive) ? (raw.archive as SessionItem[]) : items);
      context = fromItems(items);
      if (context[0]?.role === 'system' && !isSummary(context[0])) context = context.slice(1);
      files = SessionFiles.create(home, id);
    }
    if (archive.length === 0 && context.length === 0) {
      throw new UsageError(`Session '${id}' (${path}) is empty; there is nothing to resume.`);
    }
    const str = (key: string, fallback: string): string => (typeof raw[key] === 'string' ? (raw[key] as string) : fallback);
    const num = (key: string): number => (typeof raw[key] === 'number' ? (raw[key] as number) : 0);
    const state: SessionState = {
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
      queued: Array.isArray(raw.queued) ? raw.queued.filter((q): q is string => typeof q === 'string') : [],
      images: Array.isArray(raw.images) ? raw.images : [],
      imageMarkersTagged: raw.imageMarkersTagged === true,
      pendingApprovals: Array.isArray(raw.pendingApprovals)
        ? raw.pendingApprovals.filter((q): q is string => typeof q === 'string')
        : [],
    };
    return { state, files, notes };
  }
}

function isSummary(message: ChatMessage): boolean {
  return message.content.some((p) => p.type === 'text' && p.text.startsWith('## Earlier context'));
}

/** Writes `data` at byte `offset`, cutting anything past it first (a torn append of a crashed save). */
async function writeAt(path: string, offset: number, data: string): Promise<void> {
  const handle = await fs.open(path, offset === 0 ? 'w' : 'r+', 0o600);
  try {
    await handle.truncate(offset);
    await handle.write(data, offset, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Reads the committed bytes of a companion; lines that do not parse are skipped with a note. */
function readLog(dir: string, ref: LogRef, notes: string[]): ChatMessage[] {
  let buffer: Buffer;
  try {
    buffer = readFileSync(join(dir, ref.file));
  } catch {
    if (ref.bytes > 0) notes.push(`Transcript file ${ref.file} is missing; that part of the session is not restored.`);
    return [];
  }
  if (buffer.length < ref.bytes)
    notes.push(`Transcript file ${ref.file} is shorter than recorded; the readable part is restored.`);
  const text = buffer.subarray(0, Math.min(buffer.length, ref.bytes)).toString('utf8');
  const messages: ChatMessage[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const items = JSON.parse(line) as unknown;
      const [message] = fromItems(Array.isArray(items) ? items : []);
      if (message) messages.push(message);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  if (skipped > 0) notes.push(`${skipped} unreadable transcript line(s) in ${ref.file} were skipped.`);
  return messages;
}

export interface SessionSummary {
  readonly id: string;
  readonly workspace: string;
  readonly updatedUtc: string;
  readonly title: string;
  readonly messageCount: number;
}

/** Resumable sessions, newest first; heads that are empty or unreadable are left out (CLI-4). */
export async function listSessions(home: string, workspace?: string): Promise<SessionSummary[]> {
  const dir = sessionsDir(home);
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const out: SessionSummary[] = [];
  for (const name of names) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    try {
      const raw = JSON.parse(await fs.readFile(join(dir, name), 'utf8')) as Record<string, unknown>;
      if (typeof raw.id !== 'string') continue;
      if (workspace !== undefined && raw.workspace !== workspace) continue;
      const count = typeof raw.messageCount === 'number' ? raw.messageCount : Array.isArray(raw.archive) ? raw.archive.length : 0;
      if (count === 0 && !(raw.log as LogHead | undefined)?.archive?.bytes) continue;
      out.push({
        id: raw.id,
        workspace: typeof raw.workspace === 'string' ? raw.workspace : '',
        updatedUtc: typeof raw.updatedUtc === 'string' ? raw.updatedUtc : '',
        title: typeof raw.title === 'string' ? raw.title : '',
        messageCount: count,
      });
    } catch {
      // Unreadable heads are omitted from the list.
    }
  }
  return out.sort((a, b) => (a.updatedUtc < b.updatedUtc ? 1 : a.updatedUtc > b.updatedUtc ? -1 : 0));
}
