/**
 * One writer per session across processes (REL-2). A surface that opens a session for writing
 * (terminal, Web host, `crystal run --resume`, `/resume`, a `/fork` target) holds
 * `sessions/<id>.lock`, created exclusively (a hard link, which fails like O_EXCL) and holding the holder's pid, start time, host and
 * surface. A second opener is refused with a message naming the session, the holder and what
 * to do; a lock whose process is gone (kill -9, power loss) is taken over. Locks are released
 * when the session is closed and, at the latest, when the process exits.
 */
import { closeSync, existsSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { uniqueHex, isoTime } from '@crystal/core';
import { UsageError } from './errors.js';
import { removeFileSync } from './durable-files.js';
import { describeFsError } from './fs-errors.js';
import { homePaths } from './home.js';
import { requireSessionId } from './session-names.js';

export interface LockHolder {
  readonly pid: number;
  /** When the holder opened the session (ISO time). */
  readonly since: string;
  readonly host: string;
  readonly surface: string;
  /** The holder's process start (Linux /proc starttime), so a reused pid is not taken for the holder. */
  readonly procStart?: string;
}

/** The session is open for writing in another live process. */
export class SessionBusyError extends UsageError {
  override readonly name = 'SessionBusyError';
  constructor(
    readonly sessionId: string,
    readonly holder: LockHolder,
  ) {
    const where = holder.host === hostname() ? '' : ` on host ${holder.host}`;
    super(
      `Session ${sessionId} is open in another process (${holder.surface}, pid ${holder.pid}${where}, since ${holder.since}). ` +
        `Only one process writes a session at a time: close it there, or work on a copy with /fork ${sessionId} in crystal.`,
    );
  }
}

/** Locks this process holds, by session id (a session reopened in the same process shares its lock). */
const held = new Map<string, { path: string; count: number; token: string }>();
let exitHookInstalled = false;

function releaseAllSync(): void {
  for (const [id, entry] of held) {
    removeIfOurs(entry.path, entry.token);
    held.delete(id);
  }
}

export function lockPath(home: string, id: string): string {
  return join(homePaths(home).sessions, `${requireSessionId(id)}.lock`);
}

export class SessionLock {
  private released = false;

  private constructor(
    readonly id: string,
    readonly path: string,
  ) {}

  /** Takes the session's lock or throws SessionBusyError; a dead holder's lock is taken over. */
  static acquire(home: string, id: string, surface: string): SessionLock {
    const path = lockPath(home, id);
    const mine = held.get(id);
    if (mine) {
      mine.count++;
      return new SessionLock(id, path);
    }
    const dir = homePaths(home).sessions;
    try {
      ensureDir(dir);
    } catch (error) {
      throw describeFsError(error, 'create the sessions folder', dir);
    }
    const token = uniqueHex(8);
    const body = `${JSON.stringify({ ...self(surface), token })}\n`;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (tryCreate(path, body)) {
        held.set(id, { path, count: 1, token });
        if (!exitHookInstalled) {
          exitHookInstalled = true;
          process.on('exit', releaseAllSync);
        }
        return new SessionLock(id, path);
      }
      const text = readLock(path);
      if (text === undefined) continue; // released meanwhile: try again
      const holder = parseHolder(text);
      if (holder && holderAlive(holder)) throw new SessionBusyError(id, holder);
      // Dead holder (or an unreadable lock left by a crash): move it aside, but only if it is
      // still the lock we judged, never a fresh one another process just took over.
      const aside = `${path}.stale.${process.pid}.${token}`;
      try {
        renameSync(path, aside);
      } catch {
        continue;
      }
      const moved = readLock(aside);
      if (moved !== text) {
        // Someone else's fresh lock: put it back if the place is still free, and retry.
        try {
          linkSync(aside, path);
        } catch {
          // the place was taken again; whoever holds it is judged on the next attempt
        }
      }
      removeFileSync(aside);
    }
    const holder = parseHolder(readLock(path) ?? '');
    if (holder) throw new SessionBusyError(id, holder);
    throw new UsageError(`Could not take the lock ${path} of session ${id}; try again.`);
  }

  /** Releases the lock (idempotent). */
  release(): void {
    if (this.released) return;
    this.released = true;
    const entry = held.get(this.id);
    if (!entry) return;
    entry.count--;
    if (entry.count > 0) return;
    held.delete(this.id);
    removeIfOurs(entry.path, entry.token);
  }
}

/**
 * mkdir -p that reports the real cause: Node's recursive mkdir says ENOENT on a read-only file
 * system and loops for ever where a parent cannot hold folders (/proc), so each level is made
 * here, from the top.
 */
function ensureDir(dir: string): void {
  const missing: string[] = [];
  for (let current = dir; ; current = dirname(current)) {
    if (existsSync(current)) break;
    missing.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const level of missing) {
    try {
      mkdirSync(level, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

function self(surface: string): LockHolder {
  const procStart = procStartOf(process.pid);
  return {
    pid: process.pid,
    since: isoTime(),
    host: hostname(),
    surface,
    ...(procStart ? { procStart } : {}),
  };
}

/**
 * Creates the lock with its content in one step: the body is written to a private temp file,
 * which is then hard-linked to the lock name. link(2) fails with EEXIST like O_EXCL does, and
 * no other process ever sees a lock that exists but is still empty.
 */
function tryCreate(path: string, body: string): boolean {
  const temp = `${path}.${process.pid}.${uniqueHex(4)}.tmp`;
  let fd: number;
  try {
    fd = openSync(temp, 'wx', 0o600);
  } catch (error) {
    throw describeFsError(error, 'create the session lock', path);
  }
  try {
    try {
      writeSync(fd, body);
    } finally {
      closeSync(fd);
    }
    linkSync(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw describeFsError(error, 'create the session lock', path);
  } finally {
    removeFileSync(temp);
  }
}

function readLock(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const raw = JSON.parse(text) as Record<string, unknown>;
    if (typeof raw.pid !== 'number' || !Number.isInteger(raw.pid) || raw.pid <= 0) return undefined;
    return {
      pid: raw.pid,
      since: typeof raw.since === 'string' ? raw.since : 'an unknown time',
      host: typeof raw.host === 'string' ? raw.host : hostname(),
      surface: typeof raw.surface === 'string' ? raw.surface : 'crystal',
      ...(typeof raw.procStart === 'string' ? { procStart: raw.procStart } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Whether the holder still runs. A holder on another host is assumed alive (it cannot be checked). */
function holderAlive(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return false; // our own lock from an earlier, unreleased open
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(holder.pid);
  if (stat === undefined) return true; // no /proc (macOS): the pid check is all there is
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return holder.procStart === undefined || holder.procStart === stat.start;
}

function procStat(pid: number): { state: string; start: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces; fields after it are positional.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0] ?? '', start: rest[19] ?? '' };
  } catch {
    return undefined;
  }
}

function procStartOf(pid: number): string | undefined {
  return procStat(pid)?.start;
}

function removeIfOurs(path: string, token: string): void {
  try {
    const text = readFileSync(path, 'utf8');
    if (!text.includes(`"token":"${token}"`)) return;
    removeFileSync(path);
  } catch {
    // already gone
  }
}
