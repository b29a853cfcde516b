/**
 * Checkpoints of one session (CKPT-1..6): taken before every user turn and around every tool
 * batch, rewound by `/rewind`, `/undo` and `crystal rewind`.
 *
 * Capture. The whole workspace is walked once per session and every file's content is stored
 * (chunked, deduplicated: a second session on the same tree reads only what changed, thanks to
 * the persisted stat index). The walk starts with the first tool call that may change files
 * (when it begins to stream, or at its batch), not at the turn: a turn that only talks walks
 * nothing (issue 22 item 4). Until a tool runs the model changes no file, so the tree the walk
 * finds is the tree as the turn began. Around a batch:
 * - `edit`/`write` (and read-only tools): the named paths are stat-ed before and after — the
 *   tool says which file it changes, so an unchanged tree costs nothing;
 * - anything else (`bash`, exec tools, MCP, unknown tools): a stat walk before and after, and
 *   only files whose size, mtime, ctime or inode changed are read. The walk before catches what
 *   the operator changed meanwhile, so it is never taken for the agent's work.
 *
 * Rewind. "Before turn N" is: every file changed by a batch after turn N's checkpoint goes back
 * to the state before the first such change. A file whose content is no longer what the agent
 * left (the operator or another program changed it) is a conflict: refused unless forced. Each
 * file is written to a temp file beside it and renamed over it, after a journal names every
 * file and its target: a restore killed with -9 leaves each file old or new, and re-running the
 * rewind finishes it.
 */
import { promises as fs, lstatSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { type ChatMessage, type ParsedToolCall, type ToolResultPart, isoTime } from '@crystal/core';
import { writeFileAtomic } from '../atomic-write.js';
import { ToolFailure } from '../tools/builtin/failure.js';
import { openCheckedFile, removeChecked, writeChecked } from '../tools/safe-open.js';
import { fromItems, type SessionItem, toItems } from '../transcript-items.js';
import {
  type BatchRecord,
  type CheckpointLog,
  type CheckpointRecord,
  liveTurns,
  type RewindRecord,
  readLogSync,
  type TurnRecord,
  turnRecord,
  writeLog,
} from './log.js';
import { collectGarbage } from './gc.js';
import { ChunkStore, sha256 } from './store.js';
import {
  ABSENT,
  captureFile,
  type Change,
  type CheckpointLimits,
  DEFAULT_CHECKPOINT_LIMITS,
  type FileState,
  isBinary,
  sameContent,
  WorkspaceTracker,
} from './tracker.js';
import { readTextIfPresent } from '../fs-errors.js';

/** The longest a `bash` batch waits for the first capture of a never-seen tree to read its files. */
export const FIRST_CAPTURE_WAIT_MS = 2000;

/** Tools that change no file. */
const READ_ONLY = new Set(['read', 'list', 'glob', 'grep', 'todowrite', 'todoread', 'question', 'view_image', 'describe_image']);
/** Tools that change exactly the file their `path` argument names. */
const PATH_TOOLS = new Set(['edit', 'write']);

export type CheckpointEvent =
  | {
      readonly type: 'checkpoint-restored';
      readonly turn: number;
      readonly code: boolean;
      readonly chat: boolean;
      readonly files: readonly string[];
      /** The user message of turn N: surfaces put it back into the composer for editing. */
      readonly composerText?: string;
      /** A `/redo`: the last rewind was taken back. */
      readonly redo?: boolean;
    }
  | { readonly type: 'rewind-picker'; readonly entries: readonly RewindEntry[] }
  /** CKPT-4: a rewind refused because files changed since the checkpoint; `force` is the command that overwrites them. */
  | { readonly type: 'rewind-conflict'; readonly turn: number; readonly conflicts: readonly Conflict[]; readonly force: string };

export interface RewindEntry {
  readonly turn: number;
  readonly text: string;
  readonly at: string;
  /** Files changed by this turn's batches and later ones (what a code rewind to it restores). */
  readonly files: number;
}

export interface RewindOptions {
  readonly to: number;
  readonly code: boolean;
  readonly chat: boolean;
  readonly force?: boolean;
}

export interface Conflict {
  readonly path: string;
  readonly reason: string;
}

export interface RewindResult {
  readonly turn: number;
  /** False when conflicts stopped it (nothing was written). */
  readonly applied: boolean;
  readonly restored: readonly string[];
  readonly conflicts: readonly Conflict[];
  readonly notRestorable: readonly Conflict[];
  readonly chat: boolean;
  readonly composerText: string;
  /** Whether an interrupted restore was finished first. */
  readonly finishedJournal: boolean;
}

interface Target {
  readonly path: string;
  readonly expected: FileState;
  readonly target: FileState;
}

interface Journal {
  readonly version: 1;
  readonly session: string;
  readonly turn: number;
  readonly undo: readonly number[];
  readonly targets: readonly Target[];
  /** The rewind as applied, appended to the log once the files are written (what `/redo` reads). */
  readonly record?: Omit<RewindRecord, 'seq'>;
  /** A redo: the seq of the rewind record it takes back. */
  readonly redoOf?: number;
}

/** The conversation as it is now (what a conversation rewind keeps for `/redo`). */
export interface ChatNow {
  readonly context: readonly ChatMessage[];
  readonly userTurns: number;
}

export interface RedoResult {
  /** The message number the undone rewind went back to. */
  readonly turn: number;
  readonly applied: boolean;
  readonly restored: readonly string[];
  readonly conflicts: readonly Conflict[];
  readonly notRestorable: readonly Conflict[];
  readonly code: boolean;
  readonly chat: boolean;
  /** A redo killed part way was finished (this call did only that). */
  readonly finishedJournal?: boolean;
}

export interface CheckpointsOptions {
  readonly home: string;
  readonly workspace: string;
  readonly sessionId: string;
  readonly limits?: Partial<CheckpointLimits> | undefined;
  readonly publish?: (event: CheckpointEvent | { type: 'note'; text: string }) => void;
}

export class Checkpoints {
  readonly store: ChunkStore;
  readonly tracker: WorkspaceTracker;
  readonly limits: CheckpointLimits;
  private log: CheckpointLog | undefined;
  private loaded = false;
  private indexLoaded: Promise<void> | undefined;
  private failedNote = false;
  readonly workspace: string;

  constructor(readonly options: CheckpointsOptions) {
    this.limits = { ...DEFAULT_CHECKPOINT_LIMITS, ...(options.limits ?? {}) };
    this.store = ChunkStore.forHome(options.home);
    let workspace = resolve(options.workspace);
    try {
      workspace = realpathSync(workspace);
    } catch {
      // A missing workspace: the walk finds nothing.
    }
    this.workspace = workspace;
    let home = resolve(options.home);
    try {
      home = realpathSync(home);
    } catch {
      // Home is made on first write.
    }
    this.tracker = new WorkspaceTracker(workspace, this.store, this.limits, [home]);
  }

  get sessionId(): string {
    return this.options.sessionId;
  }

  private get indexPath(): string {
    return join(this.options.home, 'checkpoints', 'index', `${sha256(this.workspace)}.json`);
  }

  /** The session's checkpoint log (read once, from the page cache: no thread-pool round trip, issue 22). */
  async records(): Promise<CheckpointLog> {
    if (!this.loaded) {
      this.log = readLogSync(this.options.home, this.options.sessionId);
      this.loaded = true;
    }
    this.log ??= { version: 1, session: this.options.sessionId, workspace: this.workspace, records: [] };
    return this.log;
  }

  private nextSeq(log: CheckpointLog): number {
    return (log.records.at(-1)?.seq ?? 0) + 1;
  }

  private note(error: unknown): void {
    if (this.failedNote) return;
    this.failedNote = true;
    this.options.publish?.({
      type: 'note',
      text: `Checkpoint not taken: ${(error as Error).message}. Rewind may not restore this turn's files.`,
    });
  }

  /** Loads the persisted stat index once, before the first scan (every caller waits for the one read). */
  private ensureIndex(): Promise<void> {
    this.indexLoaded ??= fs
      .readFile(this.indexPath, 'utf8')
      .then(
        (text) => this.tracker.loadJson(JSON.parse(text)),
        () => undefined, // No index yet: the first walk reads every file.
      )
      .catch(() => undefined);
    return this.indexLoaded;
  }

  /**
   * The stat index is a cache (a file whose stat differs is read again), so it is written when
   * many entries changed (the first walk), not after every edit: at 50,000 files it is megabytes.
   */
  private async persistIndex(): Promise<void> {
    if (this.tracker.dirty === 0 || (this.tracker.dirty < 64 && this.tracker.size > 5000)) return;
    this.tracker.dirty = 0;
    await this.store.flush();
    await writeFileAtomic(this.indexPath, JSON.stringify(this.tracker.toJson()), 0o600);
  }

  /**
   * CKPT-1: the checkpoint before user turn `turn`: the model context, as a turn record. It is
   * written in the background (issue 22 item 4: the first request does not wait for it); every
   * batch, rewind, flush and stop waits for it first.
   */
  beforeTurn(turn: number, text: string, context: readonly ChatMessage[], at = isoTime()): Promise<void> {
    const recorded = this.pending.then(() => this.recordTurn(turn, text, context, at));
    this.pending = recorded;
    return recorded;
  }

  private async recordTurn(turn: number, text: string, context: readonly ChatMessage[], at: string): Promise<void> {
    try {
      await this.finishJournal();
      // Issue 22 item 4: the first capture (a walk of the whole workspace) waits for the turn's
      // first tool call (`toolCallStreaming`, `aroundBatch`): a turn that only talks needs none of it.
      this.autoPrune ??= this.pruneDaily();
      const log = await this.records();
      const contextHash = await this.store.put(Buffer.from(JSON.stringify(toItems(context))), { lookup: 'loaded' });
      const record: TurnRecord = { seq: this.nextSeq(log), kind: 'turn', turn, at, text, context: contextHash };
      log.records.push(record);
      await this.saveLog(log);
    } catch (error) {
      this.note(error);
    }
  }

  private baseline: Promise<void> | undefined;
  /** The first capture's stat walk (what a `bash` batch needs before it runs). */
  private walked: Promise<void> | undefined;
  private autoPrune: Promise<void> | undefined;

  /**
   * The first capture of the workspace, in the background (it overlaps the model's rounds):
   * a stat walk, then the content of every file not stored yet, read 16 at a time and packed
   * (store.ts). The stat index is saved every 10 s meanwhile, so a session that ends (or
   * is killed) before it finishes leaves the next one less to read.
   */
  private startFirstCapture(): void {
    if (this.baseline) return;
    // After the capture of the last batch (a walk racing it could take its change for the tree's
    // first state), with the persisted stat index loaded first.
    const walked = this.pending
      .then(() => this.ensureIndex())
      // A session that ends stops the walk too (a huge tree would hold the process open).
      .then(() => this.tracker.scanAll({ statOnly: true, signal: this.stopping.signal }))
      .then(
        () => undefined,
        (error: unknown) => {
          if (!this.stopping.signal.aborted) this.note(error);
        },
      );
    this.walked = walked;
    this.baseline = walked
      .then(() => this.tracker.fillPending(this.stopping.signal, () => this.persistIndex()))
      .then(() => this.persistIndex())
      .catch((error: unknown) => {
        if (!this.stopping.signal.aborted) this.note(error);
      });
  }

  /**
   * A tool call of this turn began to stream (its name when the wire gave it): the first capture
   * starts now, so its walk overlaps the rest of the model's answer. A tool that names its file
   * (`edit`, `write`) or changes none needs no walk, and does not start it.
   */
  toolCallStreaming(name?: string): void {
    if (this.baseline) return;
    if (name !== undefined && (READ_ONLY.has(name) || PATH_TOOLS.has(name))) return;
    this.startFirstCapture();
  }

  /**
   * What a `bash` batch waits for before it runs: the first capture's stat walk, then its
   * content reading for at most FIRST_CAPTURE_WAIT_MS. Past that the batch goes ahead; a file
   * it changes whose first copy was not read yet is recorded as not restorable, never as the
   * wrong content (tracker.ts: NOT_YET_CAPTURED).
   */
  private async firstCaptureBound(): Promise<void> {
    await this.walked;
    if (!this.baseline) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.baseline,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, FIRST_CAPTURE_WAIT_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }

  private readonly stopping = new AbortController();

  /**
   * The session ends: a first capture still reading stops, and what it read is kept (pack and
   * stat index written), so the process is not held open and the next session reads the rest.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.baseline;
    await this.pending;
    await this.store.flush().catch(() => undefined);
    await this.persistIndex().catch(() => undefined);
  }

  /** Everything in flight done, the first capture included (tests, benchmarks, `crystal checkpoints`). */
  async settled(): Promise<void> {
    await this.baseline;
    await this.flush();
    await this.store.flush();
  }

  /** Pieces are on disk before the log that names them (store.ts: packs). */
  private async saveLog(log: CheckpointLog): Promise<void> {
    await this.store.flush();
    await writeLog(this.options.home, log);
  }

  /**
   * CKPT-2: once a day (a marker file in Home), the caps are applied in the background: logs
   * written in the last hour (live sessions) are left alone, and only files unreferenced for an
   * hour are swept.
   */
  private async pruneDaily(): Promise<void> {
    const marker = join(this.options.home, 'checkpoints', 'last-gc');
    try {
      const stat = statSync(marker, { throwIfNoEntry: false });
      if (stat && Date.now() - stat.mtimeMs < 24 * 3600_000) return;
      await writeFileAtomic(marker, isoTime(), 0o600);
      await collectGarbage(this.options.home, { limits: this.limits, graceMs: 3600_000, skipRecentMs: 3600_000 });
    } catch (error) {
      this.note(error);
    }
  }

  private pending: Promise<void> = Promise.resolve();

  /**
   * Waits for the capture after the last batch (the session calls it before the turn ends).
   * The first capture of a large tree is not waited for: it goes on in the background.
   */
  async flush(): Promise<void> {
    await this.autoPrune;
    await this.pending;
    await this.persistIndex().catch((error: unknown) => this.note(error));
  }

  /**
   * CKPT-1: runs a tool batch between a scan before and a scan after; what changed is recorded.
   * The scan after runs once the results are handed back (it overlaps the next model round) and
   * is awaited before the next batch, the next turn, a rewind and the end of the turn.
   */
  async aroundBatch(
    turn: number,
    calls: readonly ParsedToolCall[],
    run: () => Promise<ToolResultPart[]>,
  ): Promise<ToolResultPart[]> {
    await this.pending;
    let paths: string[] | 'all' | undefined;
    try {
      paths = await this.scopeOf(calls);
      await this.ensureIndex();
      if (paths === 'all') {
        this.startFirstCapture();
        await this.firstCaptureBound();
        await this.tracker.scanAll();
      } else if (paths.length > 0) {
        // A first walk under way (started when a call streamed) is let finish: the stat it takes
        // of a file this batch changes must not replace the copy read just before the change.
        await this.walked;
        await this.tracker.scanPaths(paths);
      }
    } catch (error) {
      this.note(error);
      paths = undefined;
    }
    const results = await run();
    if (paths === undefined || (paths !== 'all' && paths.length === 0)) return results;
    const scope = paths;
    this.pending = this.captureAfter(turn, calls, scope);
    return results;
  }

  private async captureAfter(turn: number, calls: readonly ParsedToolCall[], paths: string[] | 'all'): Promise<void> {
    try {
      const changes = paths === 'all' ? await this.tracker.scanAll() : await this.tracker.scanPaths(paths);
      if (changes.length > 0) {
        const log = await this.records();
        const record: BatchRecord = {
          seq: this.nextSeq(log),
          kind: 'batch',
          turn,
          at: isoTime(),
          tools: calls.map((c) => c.name),
          changes,
        };
        log.records.push(record);
        await this.saveLog(log);
      }
    } catch (error) {
      this.note(error);
    }
  }

  /** The paths a batch may change, or 'all' when a tool may change anything (bash, exec, MCP). */
  private async scopeOf(calls: readonly ParsedToolCall[]): Promise<string[] | 'all'> {
    const paths: string[] = [];
    for (const call of calls) {
      if (READ_ONLY.has(call.name)) continue;
      if (!PATH_TOOLS.has(call.name)) return 'all';
      const path = (call.input as { path?: unknown } | undefined)?.path;
      if (typeof path !== 'string') return 'all';
      const rel = this.tracker.relativeOf(path);
      if (rel === undefined) continue;
      // A link or a path through a linked folder changes another file: walk instead.
      const absolute = join(this.workspace, ...rel.split('/'));
      let stat: import('node:fs').Stats | undefined;
      let real: string | undefined;
      try {
        stat = lstatSync(absolute);
      } catch {
        // A file the batch creates.
      }
      if (stat?.isSymbolicLink()) return 'all';
      try {
        real = realpathSync(dirname(absolute));
      } catch {
        // A folder the batch creates.
      }
      if (real !== undefined && real !== dirname(absolute)) return 'all';
      paths.push(rel);
    }
    return paths;
  }

  /** Earlier user messages for the `/rewind` picker, oldest first. */
  async entries(): Promise<RewindEntry[]> {
    await this.pending;
    const log = await this.records();
    return liveTurns(log).map((r) => ({
      turn: r.turn,
      text: r.text,
      at: r.at,
      files: new Set(this.batchesAfter(log, r.seq).flatMap((b) => b.changes.map((c) => c.path))).size,
    }));
  }

  private batchesAfter(log: CheckpointLog, seq: number): BatchRecord[] {
    return log.records.filter((r): r is BatchRecord => r.kind === 'batch' && r.seq > seq && !r.undone);
  }

  /** The latest turn whose code is not yet undone (`/undo`). */
  async lastUndoableTurn(): Promise<number | undefined> {
    await this.pending;
    const log = await this.records();
    const turns = liveTurns(log);
    for (let i = turns.length - 1; i >= 0; i--) {
      const rec = turns[i] as TurnRecord;
      if (this.batchesAfter(log, rec.seq).length > 0) return rec.turn;
    }
    return undefined;
  }

  /** The model context saved before turn N (for a conversation rewind). */
  async contextBefore(turn: number): Promise<ChatMessage[]> {
    const rec = await this.requireTurn(turn);
    return fromItems(JSON.parse((await this.store.get(rec.context)).toString('utf8')) as SessionItem[]);
  }

  private async requireTurn(turn: number): Promise<TurnRecord> {
    const log = await this.records();
    const rec = turnRecord(log, turn);
    if (rec) return rec;
    const turns = liveTurns(log).map((r) => r.turn);
    const range = turns.length === 0 ? 'none' : `${turns[0]}..${turns.at(-1)}`;
    throw new Error(
      `No checkpoint for turn ${turn} in session ${this.sessionId} (turns with checkpoints: ${range}${log.pruned ? `; ${log.pruned} older turns were pruned by the size caps` : ''}).`,
    );
  }

  /**
   * CKPT-3/4/5: puts the files (code) and/or the model context (chat) back to just before turn
   * N. Conflicts refuse the whole rewind unless `force`. The conversation part is applied by the
   * caller through `applyChat` (the session owns its context).
   */
  async rewind(
    options: RewindOptions,
    applyChat?: (context: ChatMessage[], turn: number) => Promise<void>,
    chatNow?: () => ChatNow,
  ): Promise<RewindResult> {
    await this.pending;
    const finishedJournal = await this.finishJournal();
    const rec = await this.requireTurn(options.to);
    const log = await this.records();
    const restored: string[] = [];
    const notRestorable: Conflict[] = [];
    const conflicts: Conflict[] = [];
    const targets: Target[] = [];
    const undo: number[] = [];
    if (options.code) {
      const batches = this.batchesAfter(log, rec.seq);
      const byPath = new Map<string, { expected: FileState; target: FileState }>();
      for (const batch of batches) {
        undo.push(batch.seq);
        for (const change of batch.changes) {
          const known = byPath.get(change.path);
          byPath.set(change.path, { target: known?.target ?? change.before, expected: change.after });
        }
      }
      for (const [path, { expected, target }] of byPath) {
        const current = await this.diskState(path);
        if (sameContent(current, target) && (target.kind !== 'file' || current.kind !== 'file' || current.mode === target.mode))
          continue;
        if (target.kind === 'unrestorable') {
          notRestorable.push({ path, reason: `not restorable: ${target.reason}` });
          continue;
        }
        if (!sameContent(current, expected) && !options.force) {
          conflicts.push({ path, reason: describeConflict(current, expected) });
          continue;
        }
        // Forced over someone else's change: that content is stored first, so /redo can bring it back.
        const kept = !sameContent(current, expected) && current.kind === 'file' ? await this.storedState(path) : current;
        targets.push({ path, expected: kept, target });
      }
    }
    const composerText = rec.text;
    if (conflicts.length > 0) {
      return { turn: options.to, applied: false, restored, conflicts, notRestorable, chat: false, composerText, finishedJournal };
    }
    let chatContext: ChatMessage[] | undefined;
    if (options.chat) chatContext = await this.contextBefore(options.to);
    const superseded = options.chat
      ? log.records.filter((r) => r.kind === 'turn' && !r.superseded && r.turn >= options.to).map((r) => r.seq)
      : [];
    // What /redo needs: the files as they are now (stored) and the conversation as it is now.
    const now = options.chat ? chatNow?.() : undefined;
    const record: Omit<RewindRecord, 'seq'> = {
      kind: 'rewind',
      id: globalThis.crypto.randomUUID(),
      turn: options.to,
      at: isoTime(),
      undo,
      changes: targets.map((t) => ({ path: t.path, before: t.expected, after: t.target })),
      ...(now
        ? {
            chat: {
              context: await this.store.put(Buffer.from(JSON.stringify(toItems(now.context)))),
              userTurns: now.userTurns,
              superseded,
            },
          }
        : {}),
    };
    const journal: Journal = { version: 1, session: this.sessionId, turn: options.to, undo, targets, record };
    if (options.code) {
      await this.store.flush();
      await writeFileAtomic(this.journalPath, JSON.stringify(journal), 0o600);
      await this.applyJournal(journal, restored, notRestorable);
    } else this.appendRecord(log, record);
    if (options.chat && chatContext) {
      const gone = new Set(superseded);
      for (const r of log.records) if (r.kind === 'turn' && gone.has(r.seq)) r.superseded = true;
      await this.saveLog(log);
      await applyChat?.(chatContext, options.to);
    }
    this.options.publish?.({
      type: 'checkpoint-restored',
      turn: options.to,
      code: options.code,
      chat: options.chat,
      files: restored,
      ...(options.chat ? { composerText } : {}),
    });
    return {
      turn: options.to,
      applied: true,
      restored,
      conflicts,
      notRestorable,
      chat: options.chat,
      composerText,
      finishedJournal,
    };
  }

  private get journalPath(): string {
    return join(this.options.home, 'checkpoints', 'journal', `${this.sessionId}.json`);
  }

  /** CKPT-6: a restore a crash interrupted is finished first (each file is old or new; temp files are removed). */
  async finishJournal(): Promise<boolean> {
    return (await this.finishInterrupted()) !== undefined;
  }

  /** The interrupted restore, finished; undefined when there was none. */
  private async finishInterrupted(): Promise<Journal | undefined> {
    let journal: Journal;
    try {
      // Looked for before every turn: one stat that finds nothing, no thread-pool round trip (issue 22).
      const text = readTextIfPresent(this.journalPath);
      if (text === undefined) return undefined;
      journal = JSON.parse(text) as Journal;
    } catch {
      return undefined;
    }
    await this.applyJournal(journal, [], []);
    return journal;
  }

  private async applyJournal(journal: Journal, restored: string[], notRestorable: Conflict[]): Promise<void> {
    // Test seam (CKPT-6): stop after N files so a test can kill -9 a restore in the middle.
    const hangAfter = Number(process.env.CRYSTAL_CHECKPOINT_TEST_HANG_AFTER ?? Number.NaN);
    let written = 0;
    for (const t of journal.targets) {
      if (written === hangAfter) {
        process.stderr.write(`restore paused after ${written} files\n`);
        await new Promise(() => {});
      }
      const absolute = this.absoluteOf(t.path);
      const current = await this.diskState(t.path);
      if (
        !sameContent(current, t.target) ||
        (current.kind === 'file' && t.target.kind === 'file' && current.mode !== t.target.mode)
      ) {
        try {
          await this.writeTarget(absolute, t.target);
          written++;
        } catch (error) {
          notRestorable.push({ path: t.path, reason: (error as Error).message });
          continue;
        }
      }
      await removeTemps(absolute);
      restored.push(t.path);
    }
    const log = await this.records();
    const undo = new Set(journal.undo);
    for (const r of log.records) if (r.kind === 'batch' && undo.has(r.seq)) r.undone = true;
    if (journal.record) this.appendRecord(log, journal.record);
    if (journal.redoOf !== undefined) {
      const rewound = log.records.find((r): r is RewindRecord => r.kind === 'rewind' && r.seq === journal.redoOf);
      if (rewound) {
        rewound.redone = true;
        const back = new Set(rewound.undo);
        for (const r of log.records) if (r.kind === 'batch' && back.has(r.seq)) r.undone = false;
      }
    }
    await this.saveLog(log);
    // The persisted index first: the scan below must not leave an index of these files only.
    await this.ensureIndex();
    await this.tracker.scanPaths(journal.targets.map((t) => t.path)).catch(() => undefined);
    await fs.rm(this.journalPath, { force: true });
  }

  /** Appends a rewind record once (a journal finished twice must not add it twice). */
  private appendRecord(log: CheckpointLog, record: Omit<RewindRecord, 'seq'>): void {
    if (log.records.some((r) => r.kind === 'rewind' && r.id === record.id)) return;
    log.records.push({ ...record, seq: this.nextSeq(log) } as RewindRecord);
  }

  /**
   * The rewind `/redo` would take back: the newest one not yet taken back, as long as no
   * message was sent after it (the conversation went on from there). A string says why not.
   */
  async redoable(): Promise<RewindRecord | string> {
    await this.pending;
    const log = await this.records();
    const rewinds = log.records.filter((r): r is RewindRecord => r.kind === 'rewind' && !r.redone);
    const last = rewinds.at(-1);
    if (!last) return 'Nothing to redo: no rewind or undo of this session is left to take back.';
    if (log.records.some((r) => r.kind === 'turn' && r.seq > last.seq))
      return 'Nothing to redo: a message was sent after the last rewind, so the conversation went on from there.';
    return last;
  }

  /**
   * `/redo`: takes back the last rewind or undo: the files it restored get the content they
   * had just before it, the conversation (when it was rewound) its context and turn count. A
   * file changed since the rewind is a conflict, refused unless forced (CKPT-4); the restore is
   * journalled like a rewind (CKPT-6).
   */
  async redo(
    options: { readonly force?: boolean },
    applyChat?: (context: ChatMessage[], turn: number) => Promise<void>,
  ): Promise<RedoResult | string> {
    await this.pending;
    const interrupted = await this.finishInterrupted();
    if (interrupted?.redoOf !== undefined) {
      // CKPT-6: a redo killed part way is what this redo finishes (its conversation part too).
      const log = await this.records();
      const done = log.records.find((r): r is RewindRecord => r.kind === 'rewind' && r.seq === interrupted.redoOf);
      if (done?.chat) await this.redoChat(log, done, applyChat);
      return {
        turn: interrupted.turn,
        applied: true,
        restored: interrupted.targets.map((t) => t.path),
        conflicts: [],
        notRestorable: [],
        code: true,
        chat: done?.chat !== undefined,
        finishedJournal: true,
      };
    }
    const rec = await this.redoable();
    if (typeof rec === 'string') return rec;
    const log = await this.records();
    const restored: string[] = [];
    const notRestorable: Conflict[] = [];
    const conflicts: Conflict[] = [];
    const targets: Target[] = [];
    for (const change of rec.changes) {
      const current = await this.diskState(change.path);
      if (sameContent(current, change.before) && sameMode(current, change.before)) continue;
      if (change.before.kind === 'unrestorable') {
        notRestorable.push({ path: change.path, reason: `not restorable: ${change.before.reason}` });
        continue;
      }
      if (!sameContent(current, change.after) && !options.force) {
        conflicts.push({ path: change.path, reason: describeConflict(current, change.after, 'rewind') });
        continue;
      }
      targets.push({ path: change.path, expected: current, target: change.before });
    }
    const code = rec.changes.length > 0 || rec.undo.length > 0;
    const chat = rec.chat !== undefined;
    if (conflicts.length > 0) return { turn: rec.turn, applied: false, restored, conflicts, notRestorable, code, chat };
    const context = rec.chat
      ? fromItems(JSON.parse((await this.store.get(rec.chat.context)).toString('utf8')) as SessionItem[])
      : undefined;
    const journal: Journal = { version: 1, session: this.sessionId, turn: rec.turn, undo: [], targets, redoOf: rec.seq };
    await this.store.flush();
    await writeFileAtomic(this.journalPath, JSON.stringify(journal), 0o600);
    await this.applyJournal(journal, restored, notRestorable);
    if (rec.chat && context) await this.redoChat(log, rec, applyChat, context);
    this.options.publish?.({ type: 'checkpoint-restored', turn: rec.turn, code, chat, files: restored, redo: true });
    return { turn: rec.turn, applied: true, restored, conflicts, notRestorable, code, chat };
  }

  /** The conversation part of a redo: the superseded turns live again, the context comes back. */
  private async redoChat(
    log: CheckpointLog,
    rec: RewindRecord,
    applyChat?: (context: ChatMessage[], turn: number) => Promise<void>,
    known?: ChatMessage[],
  ): Promise<void> {
    if (!rec.chat) return;
    const context = known ?? fromItems(JSON.parse((await this.store.get(rec.chat.context)).toString('utf8')) as SessionItem[]);
    const back = new Set(rec.chat.superseded);
    for (const r of log.records) if (r.kind === 'turn' && back.has(r.seq)) r.superseded = false;
    await this.saveLog(log);
    await applyChat?.(context, rec.chat.userTurns + 1);
  }

  /** Reads a file into the store (what a forced rewind overwrites, kept for /redo). */
  private async storedState(path: string): Promise<FileState> {
    const absolute = this.absoluteOf(path);
    try {
      return await captureFile(this.store, absolute, await fs.lstat(absolute), this.limits);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ABSENT;
      return { kind: 'unrestorable', size: -1, reason: `not stored before it was overwritten (${(error as Error).message})` };
    }
  }

  private absoluteOf(path: string): string {
    const absolute = resolve(this.workspace, ...path.split('/'));
    const rel = relative(this.workspace, absolute);
    if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) throw new Error(`'${path}' is outside the workspace.`);
    return absolute;
  }

  /**
   * One file: temp beside it + fsync + rename (never half-written); a deletion is an unlink.
   * SEC-4: nothing is done by name. The folder is opened once and verified to be the checked,
   * link-free path (missing folders are made inside their verified parent, `openCheckedDir`),
   * and the temp file, the rename and the unlink go through that descriptor: a folder swapped
   * for a link out of the workspace mid-rewind makes no folder, writes no file and removes no
   * file outside; the file is reported not restored.
   */
  private async writeTarget(absolute: string, target: FileState): Promise<void> {
    // A folder on the way that is a link (to outside the workspace) already: said plainly.
    this.insideForReal(dirname(absolute));
    const display = relative(this.workspace, absolute);
    try {
      if (target.kind === 'absent') {
        await removeChecked(dirname(absolute), display, { only: basename(absolute) });
        return;
      }
      if (target.kind !== 'file') return;
      const bytes = await this.store.get(target.hash);
      await writeChecked(absolute, display, bytes, target.mode);
    } catch (error) {
      if (error instanceof ToolFailure) throw new Error(`not restored: ${error.message}`);
      throw error;
    }
  }

  private insideForReal(dir: string): void {
    let real: string | undefined;
    // The nearest folder that exists decides where a mkdir would land.
    for (let at = dir; real === undefined; at = dirname(at)) {
      try {
        real = realpathSync(at);
      } catch {
        if (dirname(at) === at) return;
      }
    }
    if (real !== this.workspace && !real.startsWith(this.workspace + sep))
      throw new Error(`not restored: its folder now leads outside the workspace through a link (${real})`);
  }

  /** What a path holds now, by content hash (nothing is stored). */
  private async diskState(path: string): Promise<FileState> {
    const absolute = this.absoluteOf(path);
    let stat: import('node:fs').Stats;
    try {
      stat = await fs.lstat(absolute);
    } catch {
      return ABSENT;
    }
    if (!stat.isFile()) return { kind: 'unrestorable', size: -1, reason: 'not a regular file' };
    if (stat.size > this.limits.maxFileBytes) return { kind: 'unrestorable', size: stat.size, reason: 'too large' };
    // SEC-4: read through a descriptor verified to be this path, never through a swapped-in link.
    let bytes: Buffer;
    try {
      const { handle } = await openCheckedFile(absolute, path);
      try {
        bytes = await handle.readFile();
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (!(await fs.lstat(absolute).catch(() => undefined))) return ABSENT;
      return { kind: 'unrestorable', size: -1, reason: `not read: ${(error as Error).message}` };
    }
    if (bytes.length > this.limits.maxFileBytes) return { kind: 'unrestorable', size: bytes.length, reason: 'too large' };
    if (bytes.length > this.limits.maxBinaryBytes && isBinary(bytes))
      return { kind: 'unrestorable', size: bytes.length, reason: 'binary' };
    return { kind: 'file', hash: sha256(bytes), size: bytes.length, mode: stat.mode & 0o777 };
  }
}

function describeConflict(current: FileState, expected: FileState, since = 'checkpoint'): string {
  if (current.kind === 'absent') return `deleted since the ${since}`;
  if (expected.kind === 'absent') return `created since the ${since} by someone else`;
  return `changed since the ${since} by someone else`;
}

function sameMode(a: FileState, b: FileState): boolean {
  return a.kind !== 'file' || b.kind !== 'file' || a.mode === b.mode;
}

/**
 * Temp files a killed restore left beside a file: `writeChecked`'s `.<name>.<pid>.<hex>.tmp`
 * and the `<name>.crystal-restore-<pid>.tmp` of earlier versions. Listed and removed through a
 * verified descriptor of the folder (SEC-4); a folder that is not the checked one is left alone.
 */
async function removeTemps(absolute: string): Promise<void> {
  const dir = dirname(absolute);
  const name = basename(absolute);
  const legacy = `${name}.crystal-restore-`;
  const current = `.${name}.`;
  const isTemp = (entry: string): boolean =>
    entry.endsWith('.tmp') &&
    ((entry.startsWith(legacy) && /^\d+\.tmp$/.test(entry.slice(legacy.length))) ||
      (entry.startsWith(current) && /^\d+\.[0-9a-f]{8}\.tmp$/.test(entry.slice(current.length))));
  await removeChecked(dir, name, isTemp).catch(() => undefined);
}

export type { Change, CheckpointRecord };
