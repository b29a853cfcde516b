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
import {
  closeSync,
  promises as fs,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  type Stats,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { type ChatMessage, type Usage, uniqueHex, isoTime } from '@crystal/core';
import { commit, discard, removeQuietly, type StagedFile, stageAt, stageReplace, syncAll, syncDir } from './durable-files.js';
import { UsageError } from './errors.js';
import { describeFsError } from './fs-errors.js';
import { homePaths } from './home.js';
import { archiveLength, DeferredArchive, deferArchive, pendingArchive } from './session-archive.js';
import { type CompanionKind, companionGeneration, isCompanionName, isSessionId, requireSessionId } from './session-names.js';
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
  const stamp = isoTime(now).replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${uniqueHex(3)}`;
}

export function sessionsDir(home: string): string {
  return homePaths(home).sessions;
}

export function sessionPath(home: string, id: string): string {
  return join(sessionsDir(home), `${requireSessionId(id)}.json`);
}

/**
 * REL-2: the head changed on disk since this process loaded or saved it (another process wrote
 * the session). The save is refused so nothing is overwritten unseen.
 */
export class SessionChangedError extends UsageError {
  override readonly name = 'SessionChangedError';
  constructor(
    readonly sessionId: string,
    readonly path: string,
  ) {
    super(
      `Session ${sessionId} (${path}) was changed by another process since it was opened here; it is not overwritten. ` +
        'This conversation stays in memory: /fork saves it as a new session, or reopen the session to see the other changes.',
    );
  }
}

/** What identifies one version of a head file: a save replaces it (new inode, new mtime). */
interface HeadStamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

const stampOf = (stat: Stats): HeadStamp => ({ ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs });

function headStamp(path: string): HeadStamp | undefined {
  try {
    // A new session has no head yet: asked without an exception (~15 us each, issue 22).
    const stat = statSync(path, { throwIfNoEntry: false });
    return stat === undefined ? undefined : stampOf(stat);
  } catch {
    return undefined;
  }
}

const sameStamp = (a: HeadStamp | undefined, b: HeadStamp | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs);

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
    title: titleNow(state),
    messageCount: archiveLength(state),
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

/** The title without reading an archive left on disk (its first user message is in the committed part, whose title the head kept). */
function titleNow(state: SessionState): string {
  const pending = pendingArchive(state);
  return pending ? pending.title || titleOf(pending.tail) : titleOf(state.archive);
}

function titleOf(archive: readonly ChatMessage[]): string {
  const first = archive.find((m) => m.role === 'user');
  const text = first?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/**
 * One transcript's persisted part: the messages (by identity) already committed to its file. With
 * a `prefix` (an archive left on disk, session-archive.ts), `committed` holds only the messages
 * after the prefix's.
 */
class PersistedLog {
  constructor(
    public ref: LogRef,
    public committed: ChatMessage[],
    readonly prefix?: DeferredArchive,
  ) {}

  /**
   * How many leading messages of `messages` are committed, when `messages` extends what is
   * committed (same objects, in order); undefined when it does not. `tail` says `messages` is
   * only what follows the prefix (the archive was not read); otherwise a prefix must be the very
   * messages read from the file.
   */
  committedPart(messages: readonly ChatMessage[], tail: boolean): number | undefined {
    let offset = 0;
    if (this.prefix && !tail) {
      const loaded = this.prefix.loaded;
      if (!loaded || !this.prefix.intact || messages.length < loaded.length) return undefined;
      for (let i = 0; i < loaded.length; i++) if (messages[i] !== loaded[i]) return undefined;
      offset = loaded.length;
    }
    if (messages.length - offset < this.committed.length) return undefined;
    for (let i = 0; i < this.committed.length; i++) if (messages[offset + i] !== this.committed[i]) return undefined;
    return offset + this.committed.length;
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
    /** The head as this process last loaded or wrote it; undefined for a head not yet on disk. */
    private stamp: HeadStamp | undefined,
  ) {}

  static create(home: string, id: string): SessionFiles {
    return new SessionFiles(home, requireSessionId(id), 0, undefined, undefined, undefined);
  }

  /** Saves the state; resolves to the head path once committed. */
  save(state: SessionState): Promise<string> {
    const run = this.queue.then(() => this.saveNow(state));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async saveNow(state: SessionState): Promise<string> {
    const dir = sessionsDir(this.home);
    const path = sessionPath(this.home, this.id);
    // REL-2: never overwrite a head another process wrote since this one read it.
    const onDisk = headStamp(path);
    if (!sameStamp(onDisk, this.stamp)) throw new SessionChangedError(this.id, path);
    const created: string[] = [];
    const staged: StagedFile[] = [];
    try {
      return await this.write(dir, path, state, created, staged);
    } catch (error) {
      // REL-3: a failed save leaves no temp file and no half-made generation files; committed
      // bytes stay as they were.
      await discard(staged);
      for (const file of created) removeQuietly(join(dir, file));
      throw describeFsError(error, `save session ${this.id}`, path);
    }
  }

  /**
   * Issue 22: two thread-pool round trips. Both transcripts' new bytes and the new head (its
   * refs are computed from the bytes) are written to the page cache synchronously; then ONE
   * wait for the fsyncs of all three; then the head's rename (the commit point: transcripts and
   * head are durable before it), and one wait for the folder's fsync (durable-files.ts says what
   * may block the main thread). The snapshot of both transcripts and the head is taken with no
   * await before the writes, so a turn appending meanwhile saves its messages next time.
   */
  private async write(dir: string, path: string, state: SessionState, created: string[], staged: StagedFile[]): Promise<string> {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const contextBody = state.context[0]?.role === 'system' ? state.context.slice(1) : [...state.context];
    // An archive left on disk (a `run` resume) gets only what was appended since: it is not read.
    const pending = pendingArchive(state);
    const tail = pending !== undefined && this.archive?.prefix === pending;
    const archiveNow = tail ? [...pending.tail] : [...state.archive];
    const fields = headFields(state);
    const old: string[] = [];
    let generation = this.generation;
    const nextFile = (kind: 'archive' | 'context'): string => {
      generation++;
      const name = `${this.id}.${kind}.${generation}.jsonl`;
      created.push(name);
      return name;
    };
    const archive = this.persist(dir, this.archive, archiveNow, () => nextFile('archive'), old, tail, staged);
    const context = this.persist(dir, this.context, contextBody, () => nextFile('context'), old, false, staged);
    const head: LogHead = { version: 1, generation, archive: archive.ref, context: context.ref };
    staged.push(stageReplace(path, `${JSON.stringify({ ...fields, items: null, archive: null, log: head }, null, 2)}\n`));
    await syncAll(staged);
    commit(staged);
    created.length = 0;
    this.stamp = headStamp(path);
    this.generation = generation;
    this.archive = archive;
    this.context = context;
    await syncDir(dir);
    // The head no longer names them (after the folder's fsync, as before); one left behind is never read.
    for (const file of old) removeQuietly(join(dir, file));
    return path;
  }

  /**
   * Appends what is new, or writes a new generation when the transcript was rewritten (staged:
   * written, not yet durable). `live` is a snapshot: a turn may append while the save waits,
   * and those later messages belong to the next save. `tail`: `live` is what follows the
   * persisted prefix of an archive left on disk (it can only be appended).
   */
  private persist(
    dir: string,
    persisted: PersistedLog | undefined,
    live: readonly ChatMessage[],
    nextFile: () => string,
    old: string[],
    tail: boolean,
    staged: StagedFile[],
  ): PersistedLog {
    const messages = live as ChatMessage[];
    const committed = persisted?.committedPart(messages, tail);
    if (persisted && committed !== undefined) {
      const fresh = messages.slice(committed);
      if (fresh.length === 0) return persisted;
      const data = Buffer.from(fresh.map(messageLine).join(''), 'utf8');
      // Written at the committed length, cutting a torn append of a crashed save first.
      staged.push(stageAt(join(dir, persisted.ref.file), persisted.ref.bytes, data));
      const ref = {
        file: persisted.ref.file,
        bytes: persisted.ref.bytes + data.length,
        messages: persisted.ref.messages + fresh.length,
      };
      // Once the whole archive is in memory, the prefix is no longer needed to compare.
      return tail ? new PersistedLog(ref, messages, persisted.prefix) : new PersistedLog(ref, messages);
    }
    if (tail) throw new Error(`internal: the archive of session ${this.id} was changed without being read`);
    const file = nextFile();
    const data = Buffer.from(messages.map(messageLine).join(''), 'utf8');
    staged.push(stageAt(join(dir, file), 0, data));
    // A damaged file stays where it is, as it does when a load finds it damaged (REL-4).
    if (persisted && persisted.prefix?.intact !== false) old.push(persisted.ref.file);
    return new PersistedLog({ file, bytes: data.length, messages: messages.length }, messages);
  }

  /**
   * Loads a session; a missing, empty or unreadable head is a clear error (CLI-1). REL-4: damage
   * loads what can be loaded with one note: a truncated or missing companion restores its
   * readable lines and the next save starts a fresh generation (so nothing later is lost), and
   * a damaged head is rebuilt from its companions. `deferArchive`: leave the archive's committed
   * messages on disk until something reads `state.archive` (session-archive.ts); only an archive
   * file that is all there (not shorter than its head records) is left so, any other is read now.
   */
  static load(
    home: string,
    id: string,
    options: { readonly deferArchive?: boolean } = {},
  ): { state: SessionState; files: SessionFiles; notes: string[] } {
    const path = sessionPath(home, id);
    const dir = sessionsDir(home);
    let notes: string[] = [];
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      text = undefined;
    }
    const stamp = headStamp(path);
    let raw = text === undefined ? undefined : parseHead(text);
    let archive: ChatMessage[] = [];
    let context: ChatMessage[] = [];
    let files: SessionFiles | undefined;
    let deferred: DeferredArchive | undefined;
    const log = raw ? validLog(raw.log, id) : undefined;
    if (raw && log) {
      deferred = options.deferArchive ? deferrable(dir, log.archive, raw.title) : undefined;
      const a = deferred ? { messages: [], intact: true } : readLog(dir, log.archive, notes);
      const c = readLog(dir, log.context, notes);
      archive = a.messages;
      context = c.messages;
      // A damaged companion is never appended to again: the next save writes a new generation.
      files = new SessionFiles(
        home,
        id,
        log.generation,
        deferred
          ? new PersistedLog({ ...log.archive }, [], deferred)
          : a.intact
            ? new PersistedLog({ ...log.archive, messages: archive.length }, [...archive])
            : undefined,
        c.intact ? new PersistedLog({ ...log.context, messages: context.length }, [...context]) : undefined,
        stamp,
      );
    } else if (raw && raw.log === undefined) {
      try {
        const items = Array.isArray(raw.items) ? (raw.items as SessionItem[]) : [];
        // HIST-7: a file written before the archive existed loads its items as the archive.
        archive = fromItems(Array.isArray(raw.archive) ? (raw.archive as SessionItem[]) : items);
        context = fromItems(items);
        if (context[0]?.role === 'system' && !isSummary(context[0])) context = context.slice(1);
        files = new SessionFiles(home, id, 0, undefined, undefined, stamp);
      } catch {
        raw = undefined;
      }
    } else raw = undefined;
    if (!files) {
      const rebuilt = rebuildFromCompanions(dir, id);
      if (!rebuilt) {
        if (text === undefined)
          throw new UsageError(`No saved session '${id}' (looked for ${path}). List sessions with 'crystal sessions'.`);
        let reason = 'it does not hold a session object';
        try {
          JSON.parse(text);
        } catch (error) {
          reason = `it is not valid JSON (${(error as Error).message})`;
        }
        throw new UsageError(
          `Session file ${path} ${reason.replace(/^it /, '')}; no transcript files were found to rebuild it from, so it was left unchanged.`,
        );
      }
      archive = rebuilt.archive;
      context = rebuilt.context;
      notes = [
        `Session file ${path} was ${text === undefined ? 'missing' : 'damaged'}; it was rebuilt from its transcript files (${archive.length} messages)${rebuilt.skipped > 0 ? `, ${rebuilt.skipped} unreadable line(s) skipped` : ''}.`,
      ];
      raw = text === undefined ? {} : salvageHead(text);
      files = new SessionFiles(home, id, rebuilt.generation, undefined, undefined, stamp);
    }
    if (notes.length > 1) notes = [notes.join(' ')];
    if ((deferred?.committed ?? archive.length) === 0 && context.length === 0) {
      throw new UsageError(`Session '${id}' (${path}) is empty; there is nothing to resume.`);
    }
    const head = raw as Record<string, unknown>;
    const str = (key: string, fallback: string): string => (typeof head[key] === 'string' ? (head[key] as string) : fallback);
    const num = (key: string): number =>
      typeof head[key] === 'number' && Number.isFinite(head[key]) && (head[key] as number) >= 0 ? (head[key] as number) : 0;
    const strings = (key: string): string[] =>
      Array.isArray(head[key]) ? (head[key] as unknown[]).filter((q): q is string => typeof q === 'string') : [];
    const state: SessionState = {
      // SEC-8: the id is the validated one the file was found under, never one read from it.
      id,
      workspace: str('workspace', ''),
      createdUtc: str('createdUtc', isoTime()),
      updatedUtc: str('updatedUtc', isoTime()),
      provider: str('provider', ''),
      model: str('model', ''),
      context,
      archive,
      userTurns: num('userTurns'),
      modelCalls: num('modelCalls'),
      toolCalls: num('toolCalls'),
      usage: usageOf(head.usage),
      cumulativeUsage: usageOf(head.cumulativeUsage),
      queued: strings('queued'),
      images: Array.isArray(head.images) ? head.images : [],
      imageMarkersTagged: head.imageMarkersTagged === true,
      pendingApprovals: strings('pendingApprovals'),
    };
    if (deferred) deferArchive(state, deferred);
    return { state, files, notes };
  }
}

function isSummary(message: ChatMessage): boolean {
  return message.content.some((p) => p.type === 'text' && p.text.startsWith('## Earlier context'));
}

/**
 * The archive of a head left on disk, when that is safe: its file holds at least the committed
 * bytes and the head recorded how many messages they are and the title they give. A later read
 * takes exactly those bytes; the lines a save appends after them are in memory already.
 */
function deferrable(dir: string, ref: LogRef, title: unknown): DeferredArchive | undefined {
  if (ref.bytes === 0 || ref.messages === 0 || typeof title !== 'string' || title === '') return undefined;
  try {
    if (statSync(join(dir, ref.file)).size < ref.bytes) return undefined;
  } catch {
    return undefined;
  }
  const committed = { ...ref };
  return new DeferredArchive(
    ref.messages,
    title,
    () => readLog(dir, committed, []),
    (count) => readLastLines(join(dir, committed.file), committed.bytes, count),
  );
}

/**
 * The last `count` messages of a companion's first `bytes` bytes, read backwards in blocks, so a
 * resume shows the end of a long archive without reading it all. Lines that do not parse are left out.
 */
function readLastLines(path: string, bytes: number, count: number): ChatMessage[] {
  const BLOCK = 64 * 1024;
  let handle: number | undefined;
  try {
    handle = openSync(path, 'r');
    const blocks: Buffer[] = [];
    let start = bytes;
    let newlines = 0;
    // count + 1 newlines bound the last `count` lines (the file ends with one).
    while (start > 0 && newlines <= count) {
      const size = Math.min(BLOCK, start);
      start -= size;
      const block = Buffer.alloc(size);
      const read = readSync(handle, block, 0, size, start);
      if (read < size) return [];
      // indexOf (memchr), not a loop over the bytes: a for-of over a 64 KiB Buffer ran its
      // iterator per byte, unoptimised this early in a process, ~7 ms of every long resume.
      for (let at = block.indexOf(0x0a); at !== -1; at = block.indexOf(0x0a, at + 1)) newlines++;
      blocks.unshift(block);
    }
    let text = Buffer.concat(blocks);
    // Unless the read reached the start, the first line is cut: it is dropped.
    if (start > 0) text = text.subarray(text.indexOf(0x0a) + 1);
    const { messages } = parseLines(text);
    return messages.slice(-count);
  } catch {
    return [];
  } finally {
    if (handle !== undefined) closeSync(handle);
  }
}

/**
 * Reads the committed bytes of a companion; lines that do not parse are skipped with a note.
 * `intact` is false when anything was missing or damaged, so the caller never appends to it.
 */
function readLog(dir: string, ref: LogRef, notes: string[]): { messages: ChatMessage[]; intact: boolean } {
  let buffer: Buffer;
  try {
    buffer = readFileSync(join(dir, ref.file));
  } catch {
    if (ref.bytes > 0) {
      notes.push(
        `Transcript file ${ref.file} is missing; that part of the session is not restored, and the next save starts a new file.`,
      );
      return { messages: [], intact: false };
    }
    return { messages: [], intact: true };
  }
  let intact = true;
  if (buffer.length < ref.bytes) {
    intact = false;
    notes.push(`Transcript file ${ref.file} is shorter than recorded; the readable part is restored.`);
  }
  const { messages, skipped } = parseLines(buffer.subarray(0, Math.min(buffer.length, ref.bytes)));
  if (skipped > 0) {
    intact = false;
    notes.push(`${skipped} unreadable transcript line(s) in ${ref.file} were skipped.`);
  }
  return { messages, intact };
}

function parseLines(bytes: Buffer): { messages: ChatMessage[]; skipped: number } {
  const messages: ChatMessage[] = [];
  let skipped = 0;
  for (const line of bytes.toString('utf8').split('\n')) {
    if (line === '') continue;
    try {
      const items = JSON.parse(line) as unknown;
      const [message] = fromItems(Array.isArray(items) ? items : []);
      if (message && Array.isArray(message.content)) messages.push(message);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { messages, skipped };
}

function parseHead(text: string): Record<string, unknown> | undefined {
  try {
    const raw = JSON.parse(text) as unknown;
    return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The head's `log`, only when every part of it is well-formed and names this session's own files (SEC-8). */
function validLog(value: unknown, id: string): LogHead | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const log = value as Record<string, unknown>;
  const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  const ref = (v: unknown, kind: CompanionKind): LogRef | undefined => {
    if (!v || typeof v !== 'object') return undefined;
    const r = v as Record<string, unknown>;
    if (!isCompanionName(r.file, id, kind) || !count(r.bytes)) return undefined;
    return { file: r.file, bytes: r.bytes, messages: count(r.messages) ? r.messages : 0 };
  };
  if (log.version !== 1 || !count(log.generation)) return undefined;
  const archive = ref(log.archive, 'archive');
  const context = ref(log.context, 'context');
  if (!archive || !context) return undefined;
  return { version: 1, generation: log.generation, archive, context };
}

/** The newest companion of each kind of a session (names checked: SEC-8). */
function companionsOf(dir: string, id: string): { archive?: string; context?: string; generation: number } {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { generation: 0 };
  }
  const found: { archive?: string; context?: string; generation: number } = { generation: 0 };
  for (const kind of ['archive', 'context'] as const) {
    for (const name of names) {
      if (!isCompanionName(name, id, kind)) continue;
      const generation = companionGeneration(name);
      found.generation = Math.max(found.generation, generation);
      const current = found[kind];
      if (current === undefined || companionGeneration(current) < generation) found[kind] = name;
    }
  }
  return found;
}

/** REL-4: a head that is damaged or missing is rebuilt from the newest companions on disk. */
function rebuildFromCompanions(
  dir: string,
  id: string,
): { archive: ChatMessage[]; context: ChatMessage[]; generation: number; skipped: number } | undefined {
  const found = companionsOf(dir, id);
  if (!found.archive && !found.context) return undefined;
  const read = (name: string | undefined): { messages: ChatMessage[]; skipped: number } => {
    if (!name) return { messages: [], skipped: 0 };
    try {
      return parseLines(readFileSync(join(dir, name)));
    } catch {
      return { messages: [], skipped: 0 };
    }
  };
  const archive = read(found.archive);
  const context = read(found.context);
  return {
    archive: archive.messages,
    // Without a context file the model context restarts from the archive.
    context: found.context ? context.messages : [...archive.messages],
    generation: found.generation,
    skipped: archive.skipped + context.skipped,
  };
}

/** The string fields a damaged head still shows (a truncated head keeps its first lines). */
function salvageHead(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of ['workspace', 'createdUtc', 'updatedUtc', 'provider', 'model', 'title']) {
    const match = new RegExp(`"${key}":\\s*("(?:[^"\\\\]|\\\\.)*")`).exec(text);
    if (!match) continue;
    try {
      out[key] = JSON.parse(match[1] as string);
    } catch {
      // a torn string: left out
    }
  }
  return out;
}

export interface SessionSummary {
  readonly id: string;
  readonly workspace: string;
  readonly updatedUtc: string;
  readonly title: string;
  readonly messageCount: number;
  /** REL-4: what is damaged in a session that is still listed (its head is rebuilt on resume). */
  readonly note?: string;
}

/**
 * Resumable sessions, newest first; heads that are empty are left out (CLI-4). A damaged head
 * or companion is listed with a note instead of being hidden (REL-4).
 */
export async function listSessions(home: string, workspace?: string): Promise<SessionSummary[]> {
  const dir = sessionsDir(home);
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const out: SessionSummary[] = [];
  const heads = new Set<string>();
  for (const name of names) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    const id = name.slice(0, -'.json'.length);
    if (!isSessionId(id)) continue;
    heads.add(id);
    let text: string;
    try {
      text = await fs.readFile(join(dir, name), 'utf8');
    } catch {
      continue;
    }
    const summary = summarise(dir, id, text, names);
    if (!summary) continue;
    if (workspace !== undefined && summary.workspace !== workspace && !(summary.note && summary.workspace === '')) continue;
    out.push(summary);
  }
  // A first save that crashed before its head: the companions alone are listed, with a note.
  for (const name of names) {
    const id = /^(.+)\.archive\.\d+\.jsonl$/.exec(name)?.[1];
    if (!id || heads.has(id) || !isSessionId(id)) continue;
    heads.add(id);
    const summary = summarise(dir, id, undefined, names);
    if (summary && (workspace === undefined || summary.workspace === '' || summary.workspace === workspace)) out.push(summary);
  }
  return out.sort((a, b) => (a.updatedUtc < b.updatedUtc ? 1 : a.updatedUtc > b.updatedUtc ? -1 : 0));
}

function summarise(dir: string, id: string, text: string | undefined, names: readonly string[]): SessionSummary | undefined {
  const raw = text === undefined ? undefined : parseHead(text);
  const log = raw ? validLog(raw.log, id) : undefined;
  if (raw && (log || raw.log === undefined)) {
    const count = typeof raw.messageCount === 'number' ? raw.messageCount : Array.isArray(raw.archive) ? raw.archive.length : 0;
    if (count === 0 && !log?.archive.bytes) return undefined;
    const damaged = log ? [log.archive, log.context].filter((ref) => companionDamaged(dir, ref, names)) : [];
    return {
      id,
      workspace: typeof raw.workspace === 'string' ? raw.workspace : '',
      updatedUtc: typeof raw.updatedUtc === 'string' ? raw.updatedUtc : '',
      title: typeof raw.title === 'string' ? raw.title : '',
      messageCount: count,
      ...(damaged.length > 0
        ? {
            note: `transcript file ${damaged.map((r) => r.file).join(', ')} is missing or shortened; the readable part is restored on resume`,
          }
        : {}),
    };
  }
  const rebuilt = rebuildFromCompanions(dir, id);
  if (!rebuilt || (rebuilt.archive.length === 0 && rebuilt.context.length === 0)) {
    if (text === undefined || text.trim() === '') return undefined;
    const fields = salvageHead(text);
    return {
      id,
      workspace: typeof fields.workspace === 'string' ? fields.workspace : '',
      updatedUtc: typeof fields.updatedUtc === 'string' ? fields.updatedUtc : '',
      title: typeof fields.title === 'string' ? fields.title : '',
      messageCount: 0,
      note: 'the session file is damaged and no transcript files were found; it cannot be resumed',
    };
  }
  const fields = text === undefined ? {} : salvageHead(text);
  return {
    id,
    workspace: typeof fields.workspace === 'string' ? fields.workspace : '',
    updatedUtc: typeof fields.updatedUtc === 'string' ? fields.updatedUtc : '',
    title: typeof fields.title === 'string' ? fields.title : titleOf(rebuilt.archive),
    messageCount: rebuilt.archive.length,
    note: `the session file is ${text === undefined ? 'missing' : 'damaged'}; it is rebuilt from its transcript files on resume`,
  };
}

function companionDamaged(dir: string, ref: LogRef, names: readonly string[]): boolean {
  if (ref.bytes === 0) return false;
  if (!names.includes(ref.file)) return true;
  try {
    return statSync(join(dir, ref.file)).size < ref.bytes;
  } catch {
    return true;
  }
}
