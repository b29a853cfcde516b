/**
 * Durable writes in few thread-pool round trips (issue 22: a session save took ~25 sequential
 * `fs.promises` calls, each a hop main thread → libuv pool → main thread, 8–10 ms before the
 * first request although every syscall took well under a millisecond).
 *
 * What blocks the main thread and what does not:
 * - open, ftruncate, write, close, rename, unlink, mkdir and stat are called synchronously. They
 *   touch the page cache and the directory cache only, never wait for the disk: microseconds
 *   each (a create or rename can wait a little for the file system's journal on a busy machine,
 *   measured up to ~1 ms here, still far below an fsync and below the hop it replaces);
 * - fsync waits for the disk, which on a slow or busy disk can take long, so it always runs on
 *   the thread pool, and the fsyncs of one commit run in parallel: one wait for all of them;
 * - a write of more than SYNC_WRITE_LIMIT bytes also goes to the pool (copying megabytes into
 *   the page cache is long enough to stall a frame), in the same parallel wait as the fsyncs.
 *
 * The order guarantees are those of the sequential code: every staged file is fsynced before any
 * rename of a commit, and the folder is fsynced after the renames (`syncDir`).
 */
import { closeSync, fsync, ftruncateSync, mkdirSync, openSync, renameSync, unlinkSync, write, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { uniqueHex } from '@crystal/core';

/** Larger writes run on the thread pool (see above). */
export const SYNC_WRITE_LIMIT = 1024 * 1024;

/** One file written (to the page cache, or under way on the pool), not yet fsynced or committed. */
export interface StagedFile {
  /** The file written, or the temp file that replaces `target` at commit. */
  readonly path: string;
  /** Set when the file replaces `target` by rename at commit. */
  readonly target?: string;
  fd: number | undefined;
  /** A large write still running on the thread pool. */
  readonly writing: Promise<void> | undefined;
}

/** The temp name beside `path` (pid, then random; opened exclusively, so nothing already there is written through). */
export function tempNameOf(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${uniqueHex(4)}.tmp`);
}

const bytesOf = (data: string | Uint8Array): Uint8Array => (typeof data === 'string' ? Buffer.from(data, 'utf8') : data);

/** Writes all of `bytes` at `position`: synchronously when small, else on the pool (the promise). */
function writeAll(fd: number, bytes: Uint8Array, position: number): Promise<void> | undefined {
  if (bytes.length <= SYNC_WRITE_LIMIT) {
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
    return undefined;
  }
  return new Promise<void>((resolve, reject) => {
    const next = (done: number): void => {
      if (done >= bytes.length) resolve();
      else
        write(fd, bytes, done, bytes.length - done, position + done, (error, written) =>
          error ? reject(error) : next(done + written),
        );
    };
    next(0);
  });
}

/**
 * Writes `data` at byte `offset` of `path`, cutting anything past it first (a torn append of a
 * crashed save); offset 0 creates or empties the file. Not durable until `syncAll`.
 */
export function stageAt(path: string, offset: number, data: string | Uint8Array, mode = 0o600): StagedFile {
  const fd = openSync(path, offset === 0 ? 'w' : 'r+', mode);
  try {
    ftruncateSync(fd, offset);
    return { path, fd, writing: writeAll(fd, bytesOf(data), offset) };
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
}

/**
 * Writes `data` to a new temp file beside `target`, which replaces `target` at `commit`. A
 * missing folder is made (0700) and the open tried again. On failure no temp file is left.
 */
export function stageReplace(target: string, data: string | Uint8Array, mode = 0o600): StagedFile {
  const path = tempNameOf(target);
  let fd: number;
  try {
    fd = openSync(path, 'wx', mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    fd = openSync(path, 'wx', mode);
  }
  try {
    return { path, target, fd, writing: writeAll(fd, bytesOf(data), 0) };
  } catch (error) {
    closeQuietly(fd);
    removeQuietly(path);
    throw error;
  }
}

const fsyncOf = (fd: number): Promise<void> =>
  new Promise<void>((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));

/**
 * Makes every staged file durable: their pool writes and fsyncs run in parallel, one wait for
 * all. Every one has settled before this returns or throws (so no descriptor is closed while a
 * call on it runs); the first failure is thrown. The descriptors stay open (`commit`, `discard`).
 */
export async function syncAll(files: readonly StagedFile[]): Promise<void> {
  const results = await Promise.allSettled(
    files.map((file) => (file.writing ?? Promise.resolve()).then(() => fsyncOf(file.fd as number))),
  );
  for (const result of results) if (result.status === 'rejected') throw result.reason;
}

/** After `syncAll`: closes every file and renames the temp files over their targets, in order. */
export function commit(files: readonly StagedFile[]): void {
  for (const file of files) {
    const fd = file.fd;
    file.fd = undefined;
    if (fd !== undefined) closeSync(fd);
  }
  for (const file of files) if (file.target !== undefined) renameSync(file.path, file.target);
}

/**
 * A failed commit: once no write runs on them any more, every descriptor closed and every temp
 * file not yet renamed removed (REL-3: a failed write leaves no temp file).
 */
export async function discard(files: readonly StagedFile[]): Promise<void> {
  await Promise.allSettled(files.map((file) => file.writing));
  for (const file of files) {
    if (file.fd !== undefined) closeQuietly(file.fd);
    file.fd = undefined;
    if (file.target !== undefined) removeQuietly(file.path);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already failing: the first error is the one reported.
  }
}

export function removeQuietly(path: string): void {
  try {
    removeFileSync(path);
  } catch {
    // Nothing more can be done; the first error is the one reported.
  }
}

/**
 * Removes a file; one that is not there is not an error (`rmSync(path, { force: true })` for a
 * file). Not rmSync itself: its first call loads and compiles Node's rimraf, ~0.3 ms of every
 * start, for the session lock's temp file (issue 22 item 4).
 */
export function removeFileSync(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * fsync of a folder, so the renames and new names in it survive a power cut: the open is
 * synchronous, the fsync on the pool. Some file systems refuse it (and Windows cannot open a
 * folder): then skipped, the rename is still atomic.
 */
export async function syncDir(dir: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    await fsyncOf(fd);
  } catch {
    // Refused: see above.
  } finally {
    closeQuietly(fd);
  }
}

/**
 * Temp file + fsync + atomic rename + fsync of the folder: a file is never half-written. Two
 * round trips to the thread pool (the file's fsync, the folder's) instead of nine.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const staged = stageReplace(path, data, mode);
  try {
    await syncAll([staged]);
    commit([staged]);
  } catch (error) {
    await discard([staged]);
    throw error;
  }
  await syncDir(dirname(path));
}
