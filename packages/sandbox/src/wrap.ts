/**
 * Wraps one command in bubblewrap under a `SandboxPolicy` (SBX-1). The mount order is the
 * policy: the whole file system read-only, fresh devices and proc, a private empty temp (`/tmp`
 * and `$TMPDIR`), the readable folders bound back read-only, the writable folders read-write,
 * protected workspace paths read-only again, then the hidden paths covered last so that no bind
 * can uncover them. Every namespace is new (no network unless the policy allows it, an own PID
 * space; a command joining the session's proxy bridge gets that bridge's network namespace
 * instead of a new one), and no capabilities. The command stays in the process group of the bwrap process, so
 * the supervisor's group SIGTERM/SIGKILL reaches all of it; no `--new-session`, which would take
 * it out of that group (the spawner's `detached` group is already a session without a controlling
 * terminal, so there is no terminal to inject keys into). bwrap's init (PID 1 inside) stays in
 * that group too and lives while anything in the namespace does; the supervisor's final SIGKILL
 * to the group reaches it, and the kernel then kills whatever is left in the namespace, also a
 * child that left the group with `setsid`. `--die-with-parent` ends the sandbox when the agent
 * itself dies.
 */
import { existsSync, lstatSync, mkdtempSync, realpathSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { SandboxPolicy } from './policy.js';
import { PROXY_PORT } from './proxy.js';

export interface WrapRequest {
  /** The program and its arguments; a bare program name is looked up on PATH inside the sandbox. */
  readonly argv: readonly [string, ...string[]];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly policy: SandboxPolicy;
  /** The bwrap binary (from `detectSandbox`). */
  readonly bwrap: string;
  /** Caps each private temp at this many bytes (a tmpfs lives in memory); only where `detectSandbox` found `tmpfsSize`. */
  readonly tempBytes?: number;
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
  const proxy = policy.network ? undefined : policy.proxy;
  const join = proxy?.join;
  // Joining the session's bridge: every namespace new but the network, which is the bridge's.
  const unshare = join ? JOINED_UNSHARE : ['--unshare-all'];
  const args: string[] = ['--die-with-parent', ...unshare, '--cap-drop', 'ALL'];
  if (policy.network) args.push('--share-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  const temps = tempDirs(request.env).filter((temp) => !writable.some((dir) => within(temp, dir)));
  for (const temp of temps) {
    if (request.tempBytes !== undefined) args.push('--size', String(request.tempBytes));
    args.push('--tmpfs', temp);
  }
  const readable = [...(policy.readable ?? []), ...(proxy && !join ? [dirname(proxy.socket)] : [])].filter(existsSync).map(real);
  for (const path of readable) args.push('--ro-bind', path, path);
  for (const dir of writable) args.push('--bind', dir, dir);
  for (const path of (policy.readOnly ?? []).filter(existsSync).map(real)) {
    if (writable.some((dir) => within(path, dir))) args.push('--ro-bind', path, path);
  }
  const bound = [...writable, ...readable];
  for (const path of hiddenTargets(policy.hidden)) {
    // Under the private temp and not bound back: not there inside anyway (one mount less per call).
    if (temps.some((temp) => within(path, temp)) && !bound.some((dir) => within(path, dir))) continue;
    // One mount each: an empty read-only folder over a folder, an unopenable node over a file.
    if (isDirectory(path)) args.push('--ro-bind', emptyDir(), path);
    else args.push('--ro-bind', '/dev/null', path);
  }
  args.push('--chdir', existsSync(request.cwd) ? real(request.cwd) : request.cwd, '--');
  if (!proxy) {
    args.push(...request.argv);
    return { file: request.bwrap, args, env: { ...request.env }, cleanup: () => undefined };
  }
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  const env: NodeJS.ProcessEnv = { ...request.env, HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url };
  for (const name of ['NO_PROXY', 'no_proxy', 'ALL_PROXY', 'all_proxy']) delete env[name];
  if (join?.[0]) {
    // nsenter execs bwrap in its place: the process group, the signals and --die-with-parent stay as they were.
    args.push(...request.argv);
    return { file: join[0], args: [...join.slice(1), request.bwrap, ...args], env, cleanup: () => undefined };
  }
  args.push('/bin/sh', '-c', bridgeScript(proxy.socat, proxy.socket), 'crystal-sandbox', ...request.argv);
  return { file: request.bwrap, args, env, cleanup: () => undefined };
}

/** `--unshare-all` without the network: user, IPC, PID, UTS and (where there is one) cgroup namespaces. */
const JOINED_UNSHARE = ['--unshare-user', '--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try'];

/**
 * Starts the bridge (127.0.0.1:3128 inside, the proxy's Unix socket outside), waits until it
 * accepts (a second socat retrying the connect every 2 ms, at most a second: one process instead
 * of a poll loop), then runs the command in its place. The bridge ends with the PID namespace
 * when the command ends.
 */
function bridgeScript(socat: string, socket: string): string {
  const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;
  const listen = `TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr`;
  return [
    `${quote(socat)} ${listen} UNIX-CONNECT:${quote(socket)} </dev/null >/dev/null 2>&1 &`,
    `${quote(socat)} -T1 OPEN:/dev/null TCP:127.0.0.1:${PROXY_PORT},retry=500,interval=0.002 </dev/null >/dev/null 2>&1`,
    'exec "$@"',
  ].join('\n');
}

let empty: string | undefined;

/** An empty folder of our own (0700, made once per process, removed at exit) to cover hidden folders with. */
function emptyDir(): string {
  if (empty && existsSync(empty)) return empty;
  const dir = mkdtempSync(join(tmpdir(), 'crystal-sandbox-empty-'));
  empty = dir;
  process.once('exit', () => {
    try {
      rmdirSync(dir);
    } catch {
      // Already gone, or someone put something in it: leave it.
    }
  });
  return dir;
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
