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
import { promises as fs, lstatSync, type Stats } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { searchScope, walkFileBatches } from '../tools/builtin/walker.js';
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
  state: FileState;
}

export const ABSENT: FileState = { kind: 'absent' };

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
  const bytes = await fs.readFile(absolute);
  if (bytes.length > limits.maxBinaryBytes && isBinary(bytes))
    return {
      kind: 'unrestorable',
      size: bytes.length,
      reason: `a binary file larger than the ${limits.maxBinaryBytes} byte limit`,
    };
  return { kind: 'file', hash: await store.put(bytes), size: bytes.length, mode };
}

export class WorkspaceTracker {
  private readonly entries = new Map<string, Entry>();
  private scannedAll = false;
  /** Entries changed since the index was last persisted. */
  dirty = 0;

  constructor(
    readonly workspace: string,
    private readonly store: ChunkStore,
    private readonly limits: CheckpointLimits,
    /** Folders left out of the walk (Home, when inside the workspace). */
    private readonly exclude: readonly string[] = [],
  ) {}

  /** The index as JSON rows, to persist between sessions (a cache: a file is read again when its stat differs). */
  toJson(): unknown {
    return [...this.entries].map(([path, e]) => [path, e.size, e.mtimeMs, e.ctimeMs, e.ino, e.state]);
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

  /** The recorded state of a path (absent when unknown). */
  stateOf(path: string): FileState {
    return this.entries.get(path)?.state ?? ABSENT;
  }

  /** Every file state the index points at (GC roots). */
  states(): FileState[] {
    return [...this.entries.values()].map((e) => e.state);
  }

  get size(): number {
    return this.entries.size;
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

  /** Stats the named paths and brings the index up to date; answers what changed. */
  async scanPaths(paths: Iterable<string>): Promise<Change[]> {
    const changes: Change[] = [];
    for (const path of new Set(paths)) {
      const change = await this.refresh(path, join(this.workspace, ...path.split('/')));
      if (change) changes.push(change);
    }
    return changes;
  }

  /** Walks the whole workspace (gitignore-aware) and brings the index up to date; answers what changed. */
  async scanAll(signal?: AbortSignal): Promise<Change[]> {
    const changes: Change[] = [];
    const seen = new Set<string>();
    const scope = await searchScope(this.workspace, '.');
    const root = scope.root;
    const excluded = this.exclude.map((d) => resolve(d));
    for await (const batch of walkFileBatches(scope, signal)) {
      // Stats are synchronous in batches of 512 (far cheaper than one promise per file); files
      // whose stat changed are read and stored 16 at a time, so their fsyncs overlap.
      const stale: Array<[string, string, Stats | undefined]> = [];
      for (const file of batch) {
        if (excluded.some((d) => file.absolute === d || file.absolute.startsWith(d + sep))) continue;
        const rel = root === this.workspace ? file.rel : toPosix(relative(this.workspace, file.absolute));
        seen.add(rel);
        const stat = statOf(file.absolute);
        if (stat && unchanged(this.entries.get(rel), stat)) continue;
        stale.push([rel, file.absolute, stat]);
      }
      for (let i = 0; i < stale.length; i += 16) {
        const done = await Promise.all(stale.slice(i, i + 16).map(([rel, absolute, stat]) => this.refresh(rel, absolute, stat)));
        for (const change of done) if (change) changes.push(change);
      }
    }
    // Files the walk did not list: deleted, or known from a tool's path (an ignored file).
    for (const path of [...this.entries.keys()]) {
      if (seen.has(path)) continue;
      const change = await this.refresh(path, join(this.workspace, ...path.split('/')));
      if (change) changes.push(change);
    }
    this.scannedAll = true;
    return changes;
  }

  private async refresh(path: string, absolute: string, given?: Stats): Promise<Change | undefined> {
    const known = this.entries.get(path);
    const stat = given ?? statOf(absolute);
    if (!stat?.isFile()) {
      if (!known) return undefined;
      this.entries.delete(path);
      this.dirty++;
      return { path, before: known.state, after: ABSENT };
    }
    if (unchanged(known, stat)) return undefined;
    let state: FileState;
    try {
      state = await captureFile(this.store, absolute, stat, this.limits);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        if (!known) return undefined;
        this.entries.delete(path);
        this.dirty++;
        return { path, before: known.state, after: ABSENT };
      }
      state = { kind: 'unrestorable', size: stat.size, reason: `unreadable (${(error as Error).message})` };
    }
    this.entries.set(path, { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, state });
    this.dirty++;
    const before = known?.state ?? ABSENT;
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

function unchanged(known: Entry | undefined, stat: Stats): boolean {
  return (
    known !== undefined &&
    known.size === stat.size &&
    known.mtimeMs === stat.mtimeMs &&
    known.ctimeMs === stat.ctimeMs &&
    known.ino === stat.ino
  );
}
