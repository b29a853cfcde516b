/**
 * Wraps one command in bubblewrap under a `SandboxPolicy` (SBX-1). The mount order is the
 * policy: the whole file system read-only, fresh devices and proc, a private empty temp (`/tmp`
 * and `$TMPDIR`), the readable folders bound back read-only, the writable folders read-write,
 * protected workspace paths read-only again, then the hidden paths covered last so that no bind
 * can uncover them. Every namespace is new (no network unless the policy allows it, an own PID
 * space, no capabilities). `--die-with-parent` and the PID namespace make a kill of the bwrap
 * process (the process group leader the supervisor signals) end everything the command started.
 */
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve, sep } from 'node:path';
import type { SandboxPolicy } from './policy.js';

export interface WrapRequest {
  /** The program and its arguments; a bare program name is looked up on PATH inside the sandbox. */
  readonly argv: readonly [string, ...string[]];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly policy: SandboxPolicy;
  /** The bwrap binary (from `detectSandbox`). */
  readonly bwrap: string;
}

export interface WrappedCommand {
  /** Spawn this file with these arguments and this environment, in the request's cwd. */
  readonly file: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Releases what the wrap set up for this call; safe to call more than once. */
  cleanup(): void;
}

export function wrapCommand(request: WrapRequest): WrappedCommand {
  const { policy } = request;
  const writable = policy.writable.filter(existsSync).map(real);
  const args: string[] = ['--die-with-parent', '--new-session', '--unshare-all', '--cap-drop', 'ALL'];
  if (policy.network) args.push('--share-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  for (const temp of tempDirs(request.env)) {
    if (!writable.some((dir) => within(temp, dir))) args.push('--tmpfs', temp);
  }
  for (const path of (policy.readable ?? []).filter(existsSync).map(real)) args.push('--ro-bind', path, path);
  for (const dir of writable) args.push('--bind', dir, dir);
  for (const path of (policy.readOnly ?? []).filter(existsSync).map(real)) {
    if (writable.some((dir) => within(path, dir))) args.push('--ro-bind', path, path);
  }
  for (const path of hiddenTargets(policy.hidden)) {
    if (isDirectory(path)) args.push('--tmpfs', path, '--remount-ro', path);
    else args.push('--ro-bind', '/dev/null', path);
  }
  args.push('--chdir', existsSync(request.cwd) ? real(request.cwd) : request.cwd, '--', ...request.argv);
  return { file: request.bwrap, args, env: { ...request.env }, cleanup: () => undefined };
}

/** The private temp folders: `/tmp`, `$TMPDIR` and Node's temp when they exist. */
export function tempDirs(env: NodeJS.ProcessEnv): string[] {
  const dirs = new Set<string>();
  for (const dir of ['/tmp', env.TMPDIR, tmpdir()]) {
    if (dir && existsSync(dir)) dirs.add(real(dir));
  }
  // The outer ones first, so that an inner temp is mounted inside the outer tmpfs.
  return [...dirs].sort((a, b) => a.length - b.length);
}

/** Each hidden path that exists, as itself and as its final target when it is a symlink. */
function hiddenTargets(hidden: readonly string[]): string[] {
  const out = new Set<string>();
  for (const path of hidden) {
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    const target = real(path);
    if (existsSync(target)) out.add(target);
    if (!stat.isSymbolicLink()) out.add(resolve(path));
  }
  return [...out];
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}
