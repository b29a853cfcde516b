/**
 * Opening the file that was checked (SEC-4, SEC-5). The fence decides on a path with every link
 * followed; between that decision and an open by name, a directory on the way can be swapped for
 * a link out of the workspace. So a tool opens once, with `O_NOFOLLOW` (a link swapped in for the
 * last component fails), asks the kernel which file the descriptor is (`/proc/self/fd/N` on
 * Linux; elsewhere the device and inode of the checked path) and refuses unless it is the checked
 * path; then it reads or writes through that descriptor only. Writes create their temp file and
 * rename it through the verified directory descriptor (`/proc/self/fd/N/<name>`), so no name is
 * resolved again. Special files (FIFOs, devices, sockets) are refused from an `lstat` before any
 * open, and every open carries `O_NONBLOCK`, so nothing here can block the event loop or a
 * thread-pool thread for ever.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  promises as fs,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  type Dirent,
  type Stats,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { lazyBuiltin } from '@crystal/core';
import { ToolFailure } from './builtin/failure.js';
import { type PathVerdict, resolvePath } from './fence.js';

/** Loaded with the first write (issue 22 item 4); a workspace temp name is unguessable. */
const crypto = lazyBuiltin<typeof import('node:crypto')>('node:crypto');

const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const NOCTTY = constants.O_NOCTTY ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;

export const SWAPPED_TEXT = 'changed while it was being opened (a link was swapped in); nothing was read or written';

/** The refusal for a file that is not a regular file (SEC-5). */
export function notRegularText(display: string, stat: Stats): string {
  const kind = stat.isFIFO()
    ? 'a FIFO'
    : stat.isSocket()
      ? 'a socket'
      : stat.isCharacterDevice() || stat.isBlockDevice()
        ? 'a device'
        : 'a special file';
  return `${display} is not a regular file (${kind}) and will not be read.`;
}

/** Which file an open descriptor is; undefined when the platform cannot say. */
async function descriptorPath(fd: number): Promise<string | undefined> {
  if (!PROC_FD) return undefined;
  return fs.readlink(`/proc/self/fd/${fd}`);
}

/** Throws unless the descriptor is the file at `expected` (the checked, link-free path). */
async function verifyDescriptor(handle: fs.FileHandle, expected: string, display: string): Promise<Stats> {
  const stat = await handle.stat();
  const actual = await descriptorPath(handle.fd);
  if (actual !== undefined) {
    if (actual !== expected) throw new ToolFailure(`${display} ${SWAPPED_TEXT}.`);
    return stat;
  }
  // No /proc: the checked path must still name this very file, and hold no link.
  const [named, real] = await Promise.all([fs.stat(expected).catch(() => undefined), fs.realpath(expected).catch(() => '')]);
  if (!named || named.dev !== stat.dev || named.ino !== stat.ino || real !== expected) {
    throw new ToolFailure(`${display} ${SWAPPED_TEXT}.`);
  }
  return stat;
}

function openFailure(display: string, error: NodeJS.ErrnoException): ToolFailure {
  if (error.code === 'ENOENT') return new ToolFailure(`File not found: ${display}.`);
  if (error.code === 'ELOOP' || error.code === 'EMLINK') return new ToolFailure(`${display} ${SWAPPED_TEXT}.`);
  return new ToolFailure(`${display} cannot be read: ${error.message}.`);
}

export interface CheckedFile {
  readonly handle: fs.FileHandle;
  readonly stat: Stats;
}

/**
 * Opens the checked path `real` for reading: a regular file, the very one that was checked.
 * A folder is refused with `folderText` when given (else opened as well, for callers that list).
 */
export async function openCheckedFile(real: string, display: string, folderText?: string): Promise<CheckedFile> {
  const before = await fs.lstat(real).catch((error: NodeJS.ErrnoException) => {
    throw openFailure(display, error);
  });
  if (before.isDirectory() && folderText !== undefined) throw new ToolFailure(folderText);
  if (before.isSymbolicLink()) throw new ToolFailure(`${display} ${SWAPPED_TEXT}.`);
  if (!before.isFile() && !before.isDirectory()) throw new ToolFailure(notRegularText(display, before));
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(real, constants.O_RDONLY | NOFOLLOW | NONBLOCK | NOCTTY);
  } catch (error) {
    throw openFailure(display, error as NodeJS.ErrnoException);
  }
  try {
    const stat = await verifyDescriptor(handle, real, display);
    if (stat.isDirectory() && folderText !== undefined) throw new ToolFailure(folderText);
    if (!stat.isFile()) throw new ToolFailure(notRegularText(display, stat));
    return { handle, stat };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The whole file (at most `max` bytes when given) through a verified descriptor. */
export async function readChecked(real: string, display: string, folderText?: string): Promise<{ bytes: Buffer; stat: Stats }> {
  const { handle, stat } = await openCheckedFile(real, display, folderText);
  try {
    return { bytes: await handle.readFile(), stat };
  } finally {
    await handle.close();
  }
}

/** The existing file's stat at the checked path, undefined when there is none; never follows a link. */
export async function lstatChecked(real: string): Promise<Stats | undefined> {
  return fs.lstat(real).catch(() => undefined);
}

/**
 * Writes `data` to the checked path `real` atomically (temp file, fsync, rename) through a
 * verified descriptor of its folder. An existing file's `mode` is applied to the temp file before
 * the rename; a new file gets 0666 less the umask. Parent folders are created first.
 */
export async function writeChecked(
  real: string,
  display: string,
  data: string | Uint8Array,
  mode: number | undefined,
): Promise<void> {
  const dir = dirname(real);
  let dirHandle: fs.FileHandle;
  try {
    dirHandle = await openCheckedDir(dir, display);
  } catch (error) {
    if (error instanceof ToolFailure) throw error;
    const e = error as NodeJS.ErrnoException;
    if (e.code === 'ELOOP' || e.code === 'ENOTDIR') throw new ToolFailure(`${display} ${SWAPPED_TEXT}.`);
    throw new ToolFailure(`${display} cannot be written: ${e.message}.`);
  }
  try {
    // Through the descriptor where the platform has one: no name on the way is looked up again.
    const base = PROC_FD ? `/proc/self/fd/${dirHandle.fd}` : dir;
    const name = basename(real);
    const existing = await fs.lstat(`${base}/${name}`).catch(() => undefined);
    if (existing && !existing.isFile() && !existing.isSymbolicLink()) throw new ToolFailure(notRegularText(display, existing));
    const temp = `${base}/.${name}.${process.pid}.${crypto().randomBytes(4).toString('hex')}.tmp`;
    const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o666);
    try {
      await handle.writeFile(data);
      if (mode !== undefined) await handle.chmod(mode & 0o7777);
      await handle.sync();
    } catch (error) {
      await handle.close();
      await fs.rm(temp, { force: true });
      throw error;
    }
    await handle.close();
    try {
      await fs.rename(temp, `${base}/${name}`);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
    await dirHandle.sync().catch(() => undefined);
  } finally {
    await dirHandle.close();
  }
}

/** Opens a folder without following a link in its last part and verifies it is `expected`. */
async function openVerifiedDir(path: string, expected: string, display: string): Promise<fs.FileHandle> {
  const handle = await fs.open(path, constants.O_RDONLY | DIRECTORY | NOFOLLOW | NONBLOCK);
  try {
    const stat = await verifyDescriptor(handle, expected, display);
    if (!stat.isDirectory()) throw new ToolFailure(`${display} ${SWAPPED_TEXT}.`);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The verified folder `dir` (a checked, link-free path), created first when missing, like
 * `mkdir -p` but safe against a race (SEC-4): the deepest existing folder on the way is opened
 * and verified, then each missing folder is made inside the previous one's descriptor
 * (`/proc/self/fd/N/<name>`: no name above it is looked up again), opened `O_NOFOLLOW` and
 * verified in turn. A folder on the way swapped for a link out of the workspace fails the
 * verification before anything is created beyond it.
 */
export async function openCheckedDir(dir: string, display: string): Promise<fs.FileHandle> {
  const missing: string[] = [];
  let existing = dir;
  for (;;) {
    const stat = await fs.lstat(existing).catch(() => undefined);
    if (stat) {
      if (!stat.isDirectory()) throw new ToolFailure(`${display} ${SWAPPED_TEXT}.`);
      break;
    }
    const parent = dirname(existing);
    if (parent === existing) break;
    missing.unshift(basename(existing));
    existing = parent;
  }
  let handle = await openVerifiedDir(existing, existing, display);
  let at = existing;
  try {
    for (const name of missing) {
      const next = join(at, name);
      // Without /proc (macOS): by name, each step checked again as it is opened.
      const inside = PROC_FD ? `/proc/self/fd/${handle.fd}/${name}` : next;
      await fs.mkdir(inside, 0o777).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
      const child = await openVerifiedDir(inside, next, display);
      await handle.close();
      handle = child;
      at = next;
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The entries of the folder `dir` (a checked, link-free path), read through a descriptor that
 * was verified to be that folder (SEC-4): a folder on the way swapped for a link out of the
 * workspace is refused, never listed. With `/proc` the listing is read through the descriptor
 * itself; elsewhere the folder's identity is compared before and after reading it by name.
 * Returns undefined when the folder is not the one that was checked (or is gone); other
 * errors (a folder that cannot be read) are thrown.
 */
export async function readDirChecked(dir: string): Promise<Dirent[] | undefined> {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | DIRECTORY | NOFOLLOW | NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    if (PROC_FD) {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== dir) return undefined;
      return readdirSync(`/proc/self/fd/${fd}`, { withFileTypes: true });
    }
    const before = fstatSync(fd);
    const entries = await fs.readdir(dir, { withFileTypes: true });
    const after = await fs.lstat(dir).catch(() => undefined);
    const real = await fs.realpath(dir).catch(() => '');
    if (!after || after.dev !== before.dev || after.ino !== before.ino || real !== dir) return undefined;
    return entries;
  } finally {
    closeSync(fd);
  }
}

/** What a path tool needs to find the file the approval checked. */
export interface FenceHost {
  readonly workspace: string;
  /** Crystal Home: its contents are outside the fence and its secrets refused (SEC-3). */
  readonly home?: string | undefined;
  /** The final path the approval policy checked for a call, when it checked one (SEC-4). */
  readonly checkedPath?: ((callId: string) => string | undefined) | undefined;
}

/**
 * The path a tool acts on: resolved through the fence once more, and refused when that is not
 * the path the approval policy checked for this call (a link swapped in between the two).
 */
export function checkedTarget(host: FenceHost, path: string, callId: string | undefined): PathVerdict {
  const verdict = resolvePath(host.workspace, path, host.home);
  const checked = callId === undefined ? undefined : host.checkedPath?.(callId);
  if (checked !== undefined && checked !== verdict.real) {
    throw new ToolFailure(`${path} changed after it was approved (a link was swapped in); nothing was read or written.`);
  }
  return verdict;
}

/**
 * A small file read synchronously for search (grep's batches), or null when it is not a regular
 * file, is larger than `max`, or is not the file at `path` (SEC-4, SEC-5): `lstat` first, so a
 * FIFO or a device is never opened, then `O_NOFOLLOW | O_NONBLOCK` and the descriptor checked.
 */
export function readSmallFileSync(path: string, max: number): Buffer | null {
  try {
    if (!lstatSync(path).isFile()) return null;
  } catch {
    return null;
  }
  return readOpenedSync(path, max);
}

/**
 * As `readSmallFileSync` for a caller that has just `lstat`-ed the path itself (the checkpoint
 * capture): no second `lstat`; the open is `O_NONBLOCK`, and the descriptor must be a regular
 * file at `path` before anything is read. Null when it is not (or is larger than `max`).
 */
export function readOpenedSync(path: string, max: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NOFOLLOW | NONBLOCK | NOCTTY);
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > max) return null;
    if (PROC_FD && readlinkSync(`/proc/self/fd/${fd}`) !== path) return null;
    return readFileSync(fd);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** As `readSmallFileSync` through the thread pool, for larger files; at most `max` bytes or null. */
export async function readFileForSearch(path: string, max: number): Promise<Buffer | null> {
  try {
    const { handle, stat } = await openCheckedFile(path, path);
    try {
      if (stat.size > max) return null;
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}

/**
 * The existing folder `dir` (a checked, link-free path) opened and verified (SEC-4), or
 * undefined when it is missing; unlike `openCheckedDir` nothing is created.
 */
export async function openExistingCheckedDir(dir: string, display: string): Promise<fs.FileHandle | undefined> {
  try {
    return await openVerifiedDir(dir, dir, display);
  } catch (error) {
    if (error instanceof ToolFailure) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' || code === 'ENOTDIR') throw new ToolFailure(`${display} ${SWAPPED_TEXT}.`);
    throw error;
  }
}

/**
 * Removes the files `pick` chooses in the folder `dir` (a checked, link-free path), listed and
 * unlinked through a verified descriptor of that folder (SEC-4): a folder on the way swapped for
 * a link out of the workspace is refused, so nothing outside is removed. `pick` gets the names
 * the folder holds, or undefined to name exactly one file (`only`). A missing folder removes
 * nothing. Answers how many were removed.
 */
export async function removeChecked(
  dir: string,
  display: string,
  pick: { readonly only: string } | ((name: string) => boolean),
): Promise<number> {
  const handle = await openExistingCheckedDir(dir, display);
  if (!handle) return 0;
  try {
    const base = PROC_FD ? `/proc/self/fd/${handle.fd}` : dir;
    const names = typeof pick === 'function' ? (await fs.readdir(base)).filter(pick) : [pick.only];
    let removed = 0;
    for (const name of names) {
      const stat = await fs.lstat(`${base}/${name}`).catch(() => undefined);
      if (!stat || stat.isDirectory()) continue;
      await fs.unlink(`${base}/${name}`).then(
        () => removed++,
        (error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        },
      );
    }
    await handle.sync().catch(() => undefined);
    return removed;
  } finally {
    await handle.close();
  }
}
