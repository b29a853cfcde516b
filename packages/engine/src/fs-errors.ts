/**
 * REL-13: expected file-system failures (disk full, read-only, missing, no permission) reach
 * the operator as one sentence naming what failed, the path and what to do, never a stack trace.
 */
import { readFileSync, statSync } from 'node:fs';
import { UsageError } from './errors.js';

/** A file operation that failed for a reason the operator can fix. */
export class FileSystemError extends UsageError {
  override readonly name = 'FileSystemError';
  constructor(
    message: string,
    readonly code: string,
    readonly path: string,
  ) {
    super(message);
  }
}

const advice: Record<string, string> = {
  ENOSPC: 'the disk is full; free some space and try again',
  EDQUOT: 'the disk quota is used up; free some space and try again',
  EROFS: 'the file system is read-only; point CRYSTAL_HOME (or --home) at a writable folder, or remount it writable',
  EACCES: 'permission denied; fix the permissions of that path or use another Home with --home',
  EPERM: 'the operation is not permitted; fix the permissions of that path or use another Home with --home',
  ENOENT: 'it does not exist; check the path',
  ENOTDIR: 'a part of the path is not a folder; check the path',
  EISDIR: 'it is a folder, not a file; check the path',
  EMFILE: 'too many open files; close other programs or raise the limit (ulimit -n)',
  ENFILE: 'too many open files on the system; try again later',
  EIO: 'an input/output error occurred; check the disk',
  EEXIST: 'it already exists',
};

/** The errno codes the operator can act on. */
export function isExpectedFsError(error: unknown): error is NodeJS.ErrnoException {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && code in advice;
}

/** Turns an expected errno error into a FileSystemError naming `what` failed and the path; others pass unchanged. */
export function describeFsError(error: unknown, what: string, path?: string): unknown {
  if (error instanceof FileSystemError) return error;
  if (!isExpectedFsError(error)) return error;
  const code = error.code as string;
  const where = path ?? error.path ?? (error as { dest?: string }).dest ?? '';
  return new FileSystemError(`Could not ${what}${where ? ` (${where})` : ''}: ${advice[code]} [${code}].`, code, where);
}

const verbs: Record<string, string> = {
  open: 'open',
  read: 'read',
  write: 'write',
  mkdir: 'create the folder',
  rmdir: 'remove the folder',
  rename: 'replace',
  unlink: 'remove',
  scandir: 'list the folder',
  stat: 'read',
  lstat: 'read',
  copyfile: 'copy',
  fsync: 'write',
  ftruncate: 'write',
  link: 'create',
  symlink: 'create',
  chmod: 'change the permissions of',
  access: 'access',
};

/** The operator's sentence for an error: expected file-system failures get what failed, the path and the fix. */
export function fsOperatorMessage(error: unknown): string {
  if (isExpectedFsError(error)) {
    const described = describeFsError(error, verbs[error.syscall ?? ''] ?? 'use');
    if (described instanceof Error) return described.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * The UTF-8 text of `file`, or undefined when nothing is there (a missing file or folder on its
 * path), asked with a stat that does not throw: a start looks for a dozen optional files
 * (instructions, settings, permissions.json, checkpoint logs), and a missing one read with
 * `readFileSync` throws, for which Node builds an error and its stack (~15 us each, ~0.3 ms the
 * first time; issue 22 item 4). Any other failure throws as `readFileSync` does: a folder, no
 * permission, a part of the path that is a file, a file removed between the look and the read.
 */
export function readTextIfPresent(file: string): string | undefined {
  if (statSync(file, { throwIfNoEntry: false }) === undefined) return undefined;
  return readFileSync(file, 'utf8');
}
