/**
 * What the workspace holds, file by file (CKPT-1): a stat index (size, mtime, ctime, inode)
 * whose entries point at stored copies. A scan compares the disk with the index; only files
 * whose stat changed are read, so an unchanged 50,000-file tree costs one stat walk. The walk
 * is the engine's own (tools/builtin/walker.ts): `.gitignore` honoured, `.git`,
 * `node_modules`, `dist` and credential paths left out, links never followed; Home is left out
 * when it lies inside the workspace.
 *
 * Nothing here writes in the workspace or runs git.
 */
import { lstatSync, type Stats } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { openCheckedFile, readDirChecked, readOpenedSync } from '../tools/safe-open.js';
import { acceptsEntry, type SearchScope, searchScope, walkFileBatches } from '../tools/builtin/walker.js';
import type { ChunkStore } from './store.js';

export type FileState =
  | { readonly kind: 'file'; readonly hash: string; readonly size: number; readonly mode: number }
  | { readonly kind: 'absent' }
  | { readonly kind: 'unrestorable'; readonly size: number; readonly reason: string };

export interface Change {
  /** Relative to the workspace, `/`-separated. */
  readonly path: string;
  readonly before: FileState;
  readonly after: FileState;
}

export interface CheckpointLimits {
  /** A text file larger than this is recorded as not restorable. */
  readonly maxFileBytes: number;
  /** A binary file (a NUL byte in its first 8 KiB) larger than this is recorded as not restorable. */
  readonly maxBinaryBytes: number;
  /** A session's checkpoints above this are pruned oldest first. */
  readonly sessionCapBytes: number;
  /** All checkpoints in Home above this are pruned oldest first. */
  readonly globalCapBytes: number;
}

export const DEFAULT_CHECKPOINT_LIMITS: CheckpointLimits = {
  maxFileBytes: 8 * 1024 * 1024,
  maxBinaryBytes: 1024 * 1024,
  sessionCapBytes: 512 * 1024 * 1024,
  globalCapBytes: 2 * 1024 * 1024 * 1024,
};

interface Entry {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  /** Undefined while the content is not read yet (the first capture of a tree reads it in the background). */
  state: FileState | undefined;
  /** The stat was taken within RACY_MS of the change it shows: not trusted by the next scan. */
  racy?: boolean;
}

interface DirStat {
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  racy?: boolean;
}

export const ABSENT: FileState = { kind: 'absent' };

/** The "before" of a file a batch changed while the first capture had not read it yet. */
export const NOT_YET_CAPTURED: FileState = {
  kind: 'unrestorable',
  size: -1,
  reason: 'changed before the first checkpoint of this workspace had read it (it was still being taken)',
};

export function sameState(a: FileState, b: FileState): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file') return a.hash === b.hash && a.mode === b.mode;
  if (a.kind === 'unrestorable' && b.kind === 'unrestorable') return a.size === b.size;
  return true;
}

/** Same content (mode ignored): what a conflict check compares. */
export function sameContent(a: FileState, b: FileState): boolean {
  if (a.kind === 'file' && b.kind === 'file') return a.hash === b.hash;
  return sameState(a, b);
}

const toPosix = (path: string): string => (sep === '/' ? path : path.split(sep).join('/'));

export function isBinary(head: Uint8Array): boolean {
  return head.subarray(0, 8192).includes(0);
}

const SYNC_READ_BYTES = 256 * 1024;

/** Reads a file into the store, or records why it is not restorable. */
export async function captureFile(
  store: ChunkStore,
  absolute: string,
  stat: Stats,
  limits: CheckpointLimits,
): Promise<FileState> {
  const mode = stat.mode & 0o777;
  if (stat.size > limits.maxFileBytes)
    return { kind: 'unrestorable', size: stat.size, reason: `larger than the ${limits.maxFileBytes} byte limit` };
  // SEC-4: read through a descriptor verified to be this very path (opened `O_NOFOLLOW`), so a
  // folder swapped for a link out of the workspace is never read and stored as this file. A
  // small file is read at once: a thread-pool round trip costs more than the read itself.
  const bytes = stat.size <= SYNC_READ_BYTES ? readOpenedSync(absolute, SYNC_READ_BYTES) : await readLarge(absolute);
  if (bytes === null) {
    if (!statOf(absolute)) throw Object.assign(new Error(`${absolute} was removed`), { code: 'ENOENT' });
    throw new Error('it changed while it was being read (a link was swapped in, or it grew)');
  }
  if (bytes.length > limits.maxBinaryBytes && isBinary(bytes))
    return {
      kind: 'unrestorable',
      size: bytes.length,
      reason: `a binary file larger than the ${limits.maxBinaryBytes} byte limit`,
    };
  return { kind: 'file', hash: await store.put(bytes), size: bytes.length, mode };
}

async function readLarge(absolute: string): Promise<Buffer | null> {
  try {
    const { handle } = await openCheckedFile(absolute, absolute);
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}

export interface ScanOptions {
  readonly signal?: AbortSignal;
  /** Record stats only; files whose stat changed are read later (`fillPending`). */
  readonly statOnly?: boolean;
  /** Walk the whole tree even when the folder stats say what changed. */
  readonly full?: boolean;
}

/**
 * Scans, in two ways:
 * - a full walk (the first one, or when a `.gitignore` changed): every folder is listed, and
 *   every folder's stat is kept;
 * - after that, a stat pass: every known folder and file is `lstat`-ed and only folders whose
 *   stat changed (an entry was added, removed or renamed) are listed again, so a batch that
 *   touched one file costs a stat per file and no listing of 50,000 names through the ignore
 *   rules. A file changed in place changes its own stat, not its folder's: the file stats
 *   catch it.
 */
export class WorkspaceTracker {
  private readonly entries = new Map<string, Entry>();
  /** Every folder the last walk entered (relative, '' for the root). */
  private readonly dirs = new Map<string, DirStat>();
  private scannedAll = false;
  /** Entries changed since the index was last persisted. */
  dirty = 0;
  /** Full walks and stat passes done (tests and benchmarks). */
  readonly counts = { walks: 0, statPasses: 0 };

  constructor(
    readonly workspace: string,
    private readonly store: ChunkStore,
    private readonly limits: CheckpointLimits,
    /** Folders left out of the walk (Home, when inside the workspace). */
    private readonly exclude: readonly string[] = [],
  ) {}

  /** The index as JSON rows, to persist between sessions (a cache: a file is read again when its stat differs). */
  toJson(): unknown {
    const rows: unknown[] = [];
    for (const [path, e] of this.entries) if (e.state) rows.push([path, e.size, e.mtimeMs, e.ctimeMs, e.ino, e.state]);
    return rows;
  }

  loadJson(rows: unknown): void {
    if (!Array.isArray(rows)) return;
    for (const row of rows) {
      if (!Array.isArray(row) || row.length !== 6 || typeof row[0] !== 'string') continue;
      const [path, size, mtimeMs, ctimeMs, ino, state] = row as [string, number, number, number, number, FileState];
      if (state?.kind !== 'file' && state?.kind !== 'unrestorable') continue;
      this.entries.set(path, { size, mtimeMs, ctimeMs, ino, state });
    }
  }

  /** The recorded state of a path (absent when unknown or not read yet). */
  stateOf(path: string): FileState {
    return this.entries.get(path)?.state ?? ABSENT;
  }

  /** Every file state the index points at (GC roots). */
  states(): FileState[] {
    const out: FileState[] = [];
    for (const e of this.entries.values()) if (e.state) out.push(e.state);
    return out;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Files whose stat is known but whose content is not read yet. */
  get pending(): number {
    let n = 0;
    for (const e of this.entries.values()) if (!e.state) n++;
    return n;
  }

  get hasFullScan(): boolean {
    return this.scannedAll;
  }

  /** A workspace-relative path for a tool's path argument, or undefined when it lies outside. */
  relativeOf(path: string): string | undefined {
    const absolute = isAbsolute(path) ? path : resolve(this.workspace, path);
    const rel = relative(this.workspace, absolute);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
    return toPosix(rel);
  }

  /** Stats the named paths and brings the index up to date (reading them if not read yet); answers what changed. */
  async scanPaths(paths: Iterable<string>): Promise<Change[]> {
    const changes: Change[] = [];
    for (const path of new Set(paths)) {
      const change = await this.refresh(path, this.absolute(path), undefined, { fill: true });
      if (change) changes.push(change);
    }
    return changes;
  }

  private absolute(rel: string): string {
    if (rel === '') return this.workspace;
    return sep === '/' ? `${this.workspace}/${rel}` : join(this.workspace, ...rel.split('/'));
  }

  private excluded(absolute: string): boolean {
    return this.exclude.some((d) => absolute === d || absolute.startsWith(d + sep));
  }

  /** Brings the whole index up to date: a full walk the first time, a stat pass after; answers what changed. */
  async scanAll(options: ScanOptions = {}): Promise<Change[]> {
    if (!options.full && this.scannedAll && this.dirs.size > 0) {
      const changes = await this.statPass(options);
      if (changes !== undefined) return changes;
    }
    return this.walk(options);
  }

  /** The full walk (gitignore-aware, the search tools' walker). */
  private async walk(options: ScanOptions): Promise<Change[]> {
    this.counts.walks++;
    const changes: Change[] = [];
    const seen = new Set<string>();
    const scope = await searchScope(this.workspace, '.');
    const root = scope.root;
    const exclude = this.exclude.map((d) => resolve(d));
    const dirs = new Map<string, DirStat>();
    const onDirectory = (absolute: string): void => {
      const stat = statOf(absolute);
      const rel = absolute === root ? '' : toPosix(relative(this.workspace, absolute));
      if (stat) dirs.set(rel, dirStat(stat));
    };
    for await (const batch of walkFileBatches(scope, options.signal, onDirectory)) {
      // Stats are synchronous in batches of 512 (far cheaper than one promise per file); files
      // whose stat changed are read and stored 16 at a time, so their reads overlap.
      const stale: Array<[string, string, Stats | undefined]> = [];
      for (const file of batch) {
        if (exclude.some((d) => file.absolute === d || file.absolute.startsWith(d + sep))) continue;
        const rel = root === this.workspace ? file.rel : toPosix(relative(this.workspace, file.absolute));
        seen.add(rel);
        const stat = statOf(file.absolute);
        const known = this.entries.get(rel);
        if (stat && unchanged(known, stat) && (known?.state || options.statOnly)) continue;
        stale.push([rel, file.absolute, stat]);
      }
      await this.refreshAll(stale, changes, options);
    }
    // Files the walk did not list: deleted, or known from a tool's path (an ignored file).
    for (const path of [...this.entries.keys()]) {
      if (seen.has(path)) continue;
      const change = await this.refresh(path, this.absolute(path), undefined, options);
      if (change) changes.push(change);
    }
    this.dirs.clear();
    for (const [rel, stat] of dirs) this.dirs.set(rel, stat);
    this.scannedAll = true;
    return changes;
  }

  /**
   * The stat pass: known folders whose stat changed are listed again (new entries go through
   * the walker's rules; a new folder is walked); every known file is stat-ed. Undefined when a
   * `.gitignore` changed or appeared: the caller walks instead.
   */
  private async statPass(options: ScanOptions): Promise<Change[] | undefined> {
    this.counts.statPasses++;
    let scope: SearchScope | undefined;
    const scopeOf = async (): Promise<SearchScope> => {
      scope ??= await searchScope(this.workspace, '.');
      return scope;
    };
    const candidates: Array<[string, string, Stats | undefined]> = [];
    const listed = new Set<string>();
    // Folders: the changed ones are listed again; new files and folders in them are taken in.
    const queue = [...this.dirs.keys()];
    while (queue.length > 0) {
      const relDir = queue.pop() as string;
      const absoluteDir = this.absolute(relDir);
      const stat = statOf(absoluteDir);
      const known = this.dirs.get(relDir);
      if (!stat?.isDirectory()) {
        this.dirs.delete(relDir);
        continue;
      }
      if (known && !known.racy && known.mtimeMs === stat.mtimeMs && known.ctimeMs === stat.ctimeMs && known.ino === stat.ino)
        continue;
      this.dirs.set(relDir, dirStat(stat));
      // SEC-4: listed through a descriptor verified to be this folder, never by name (a folder
      // swapped for a link out of the workspace between the stat and the listing is skipped).
      let names: import('node:fs').Dirent[] | undefined;
      try {
        names = await readDirChecked(absoluteDir);
      } catch {
        continue;
      }
      if (names === undefined) {
        this.dirs.delete(relDir);
        continue;
      }
      const s = await scopeOf();
      const realDir = relDir === '' ? s.root : join(s.root, ...relDir.split('/'));
      for (const entry of names) {
        const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
        const absolute = join(absoluteDir, entry.name);
        if (this.excluded(absolute)) continue;
        if (entry.isDirectory()) {
          if (this.dirs.has(rel) || !acceptsEntry(s, realDir, entry.name, true)) continue;
          // A new folder: listed like a changed one (its stat is unknown).
          this.dirs.set(rel, { mtimeMs: -1, ctimeMs: -1, ino: -1 });
          queue.push(rel);
        } else if (entry.isFile()) {
          if (this.entries.has(rel) || listed.has(rel) || !acceptsEntry(s, realDir, entry.name, false)) continue;
          if (entry.name === '.gitignore') return undefined;
          listed.add(rel);
          candidates.push([rel, absolute, statOf(absolute)]);
        }
      }
    }
    // Known files: a changed stat means a changed (or removed) file.
    for (const [rel, known] of this.entries) {
      const absolute = this.absolute(rel);
      const stat = statOf(absolute);
      if (stat && unchanged(known, stat)) continue;
      if (rel === '.gitignore' || rel.endsWith('/.gitignore')) return undefined;
      candidates.push([rel, absolute, stat]);
    }
    const changes: Change[] = [];
    await this.refreshAll(candidates, changes, options);
    return changes;
  }

  private async refreshAll(
    stale: ReadonlyArray<[string, string, Stats | undefined]>,
    changes: Change[],
    options: ScanOptions,
  ): Promise<void> {
    for (let i = 0; i < stale.length; i += 16) {
      const done = await Promise.all(
        stale.slice(i, i + 16).map(([rel, absolute, stat]) => this.refresh(rel, absolute, stat, options)),
      );
      for (const change of done) if (change) changes.push(change);
    }
  }

  /**
   * Reads the files whose stat is known but whose content is not (the first capture, in the
   * background). A file is taken only when its stat is the same before and after the read and
   * is still the one the index holds, so a batch or an editor writing it meanwhile is never
   * recorded under the old stat; such a file stays unread and the next scan sees it changed.
   */
  async fillPending(signal?: AbortSignal, onProgress?: (done: number) => Promise<void>): Promise<number> {
    const todo: Array<[string, Entry]> = [];
    for (const [rel, e] of this.entries) if (!e.state) todo.push([rel, e]);
    let done = 0;
    let savedAt = Date.now();
    for (let i = 0; i < todo.length; i += 16) {
      signal?.throwIfAborted();
      await Promise.all(
        todo.slice(i, i + 16).map(async ([rel, entry]) => {
          if (this.entries.get(rel) !== entry || entry.state) return;
          const absolute = this.absolute(rel);
          const before = statOf(absolute);
          if (!before?.isFile() || !sameStat(entry, before)) return;
          let state: FileState;
          try {
            state = await captureFile(this.store, absolute, before, this.limits);
          } catch {
            return;
          }
          const after = statOf(absolute);
          if (!after || !sameStat(entry, after) || this.entries.get(rel) !== entry || entry.state) return;
          entry.state = state;
          this.dirty++;
          done++;
        }),
      );
      // The stat index is saved now and then (a session that ends early keeps what was read).
      if (onProgress && Date.now() - savedAt > 10_000) {
        savedAt = Date.now();
        await onProgress(done);
      }
    }
    return done;
  }

  private async refresh(
    path: string,
    absolute: string,
    given?: Stats,
    options: ScanOptions & { readonly fill?: boolean } = {},
  ): Promise<Change | undefined> {
    const known = this.entries.get(path);
    const stat = given ?? statOf(absolute);
    const before = known ? (known.state ?? NOT_YET_CAPTURED) : ABSENT;
    if (!stat?.isFile()) {
      if (!known) return undefined;
      this.entries.delete(path);
      this.dirty++;
      return { path, before, after: ABSENT };
    }
    if (unchanged(known, stat) && (known?.state || !options.fill)) return undefined;
    if (options.statOnly) {
      // A copy read by an earlier batch with this very stat is kept (racy, it is read again by the next pass).
      if (known?.state && sameStat(known, stat)) return undefined;
      this.entries.set(path, {
        size: stat.size,
        mtimeMs: stat.mtimeMs,
        ctimeMs: stat.ctimeMs,
        ino: stat.ino,
        state: undefined,
        racy: isRacy(stat),
      });
      return undefined;
    }
    let state: FileState;
    try {
      state = await captureFile(this.store, absolute, stat, this.limits);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        if (!known) return undefined;
        this.entries.delete(path);
        this.dirty++;
        return { path, before, after: ABSENT };
      }
      state = { kind: 'unrestorable', size: stat.size, reason: `unreadable (${(error as Error).message})` };
    }
    const wasPending = known !== undefined && !known.state;
    this.entries.set(path, {
      size: stat.size,
      mtimeMs: stat.mtimeMs,
      ctimeMs: stat.ctimeMs,
      ino: stat.ino,
      state,
      racy: isRacy(stat),
    });
    this.dirty++;
    // Read now with the stat the index already had: the content is what it was, not a change.
    if (wasPending && sameStat(known, stat)) return undefined;
    if (sameState(before, state)) return undefined;
    return { path, before, after: state };
  }
}

function statOf(absolute: string): Stats | undefined {
  try {
    return lstatSync(absolute);
  } catch {
    return undefined;
  }
}

/**
 * File system times are coarse (a few milliseconds on Linux): a file or folder changed again
 * within the same tick keeps its stat. A stat taken less than RACY_MS after the change it shows
 * is not trusted ("racily clean", as git calls it): the next scan reads the file, or lists the
 * folder, again.
 */
const RACY_MS = 1000;

const isRacy = (stat: Stats): boolean => Date.now() - Math.max(stat.mtimeMs, stat.ctimeMs) < RACY_MS;

function sameStat(known: Entry | undefined, stat: Stats): boolean {
  return (
    known !== undefined &&
    known.size === stat.size &&
    known.mtimeMs === stat.mtimeMs &&
    known.ctimeMs === stat.ctimeMs &&
    known.ino === stat.ino
  );
}

/** The stat says the file is as the index holds it (and the index's stat was not taken racily). */
function unchanged(known: Entry | undefined, stat: Stats): boolean {
  return sameStat(known, stat) && known?.racy !== true;
}

function dirStat(stat: Stats): DirStat {
  return { mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, racy: isRacy(stat) };
}
