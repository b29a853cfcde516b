/**
 * One network bridge per session (SBX-1, the sandbox's cost): instead of starting `socat` inside
 * every sandboxed command (two socat processes and a wait for the listener, ~8 ms a call), one
 * long-lived bwrap holds a network namespace whose only listener is `socat` on 127.0.0.1:3128,
 * bridged to the filtering proxy's Unix socket. Each command joins that namespace (`nsenter`
 * into the holder's user and network namespaces, then bwrap as before, minus `--unshare-net`), so
 * it starts with the bridge already listening and no network of its own. Joining an existing
 * network namespace is also cheaper than creating one, so a proxied call costs about what a
 * network-off call does.
 *
 * What the commands share: that namespace's loopback, so two sandboxed commands of one session
 * that run at the same time can reach each other's 127.0.0.1 listeners (never the host's).
 * The holder gets no `--dev` (bwrap would then nest a second user namespace, which nsenter could
 * not join the network of) and dies with the agent (`--die-with-parent`); a holder that is gone
 * is noticed before the next command, which then falls back to its own bridge.
 */
import { type ChildProcess, execFile, spawn } from './child-process.js';
import { readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { PROXY_PORT } from './proxy.js';

export interface ProxyBridgeOptions {
  readonly bwrap: string;
  readonly socat: string;
  readonly nsenter: string;
  /** The filtering proxy's Unix socket (`startNetworkProxy`). */
  readonly socket: string;
  /** Give up waiting for the listener after this long (default 5 s). */
  readonly readyTimeoutMs?: number;
}

export interface ProxyBridge {
  /** The argv prefix that runs a program inside the bridge's network; undefined once the holder is gone. */
  join(): readonly string[] | undefined;
  /** The holder's PID (its sandbox's first process, as the host sees it). */
  readonly pid: number;
  close(): void;
}

/** The holders to kill when the agent exits: one exit listener for all of them. */
const atExit = new Set<() => void>();
let exitHooked = false;
function closeAll(): void {
  for (const close of atExit) close();
  atExit.clear();
}

const LISTEN_HEX = `0100007F:${PROXY_PORT.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Starts the holder and resolves once its bridge listens and a probe has joined it; resolves
 * undefined (with the reason) when this machine cannot do that, so callers keep the per-command
 * bridge.
 */
export async function startProxyBridge(options: ProxyBridgeOptions): Promise<ProxyBridge | { readonly failed: string }> {
  const args = [
    '--die-with-parent',
    '--unshare-user',
    '--unshare-net',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--ro-bind',
    dirname(options.socket),
    dirname(options.socket),
    '--info-fd',
    '3',
    '--',
    options.socat,
    `TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr`,
    `UNIX-CONNECT:${options.socket}`,
  ];
  let holder: ChildProcess;
  try {
    // Its own process group, so that close() reaches the sandbox's first process and socat too,
    // also when it comes before bwrap has armed --die-with-parent inside.
    holder = spawn(options.bwrap, args, {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '' },
      detached: true,
    });
  } catch (error) {
    return { failed: `the bridge could not start (${(error as Error).message})` };
  }
  let exited = false;
  let stderr = '';
  let how = '';
  holder.on('exit', (code, signal) => {
    exited = true;
    how = signal ? `signal ${signal}` : `exit ${code}`;
  });
  holder.on('error', () => {
    exited = true;
  });
  holder.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 2000) stderr += chunk;
  });
  holder.stderr?.on('error', () => undefined);
  const close = (): void => {
    try {
      if (holder.pid !== undefined) process.kill(-holder.pid, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
  };
  atExit.add(close);
  if (!exitHooked) {
    exitHooked = true;
    process.once('exit', closeAll);
  }
  const fail = (why: string): { failed: string } => {
    close();
    atExit.delete(close);
    const said = stderr.trim().split('\n')[0];
    return { failed: said ? `${why}: ${said}` : why };
  };
  const pid = await childPid(holder);
  if (pid === undefined) return fail('the bridge did not report its PID');
  const deadline = Date.now() + (options.readyTimeoutMs ?? 5000);
  while (!listening(pid)) {
    if (exited) return fail(`the bridge ended before it listened (${how})`);
    if (Date.now() > deadline) return fail('the bridge did not listen in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const netIno = nsIno(pid, 'net');
  const userIno = nsIno(pid, 'user');
  if (netIno === undefined || userIno === undefined) return fail('the bridge namespaces cannot be read');
  const prefix = [options.nsenter, `--user=/proc/${pid}/ns/user`, `--net=/proc/${pid}/ns/net`, '--preserve-credentials', '--'];
  const probe = await new Promise<string | undefined>((resolve) => {
    execFile(prefix[0] as string, [...prefix.slice(1), 'true'], { timeout: 10_000 }, (error, _out, err) =>
      resolve(error ? String(err).trim().split('\n')[0] || error.message : undefined),
    );
  });
  if (probe !== undefined) return fail(`nsenter cannot join the bridge (${probe})`);
  holder.unref();
  // Still read (a closed pipe would end socat with SIGPIPE on its next complaint), never waited for.
  stderr = '';
  (holder.stderr as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
  return {
    pid,
    // The same namespaces as at the start: a holder that died (and a PID used again) is not joined.
    join: () => (!exited && nsIno(pid, 'net') === netIno && nsIno(pid, 'user') === userIno ? prefix : undefined),
    close: () => {
      close();
      atExit.delete(close);
    },
  };
}

/**
 * bwrap's `--info-fd` JSON names the sandbox's first process. The pipe is read to its end, never
 * closed early: bwrap writes the JSON in parts, and a write to a closed pipe would end it (SIGPIPE).
 */
function childPid(holder: ChildProcess): Promise<number | undefined> {
  const info = holder.stdio[3] as (NodeJS.ReadableStream & { unref?: () => void }) | null | undefined;
  if (!info) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let text = '';
    let settled = false;
    const settle = (pid: number | undefined): void => {
      if (settled) return;
      settled = true;
      info.unref?.();
      resolve(pid);
    };
    info.setEncoding('utf8');
    info.on('data', (chunk: string) => {
      if (settled) return;
      text += chunk;
      const match = /"child-pid"\s*:\s*(\d+)\s*[,}\n]/.exec(text);
      if (match) settle(Number(match[1]));
    });
    info.on('end', () => {
      const found = /"child-pid"\s*:\s*(\d+)/.exec(text)?.[1];
      settle(found === undefined ? undefined : Number(found));
    });
    info.on('error', () => settle(undefined));
  });
}

/** Whether the holder's network namespace has a listener on 127.0.0.1:3128. */
function listening(pid: number): boolean {
  try {
    const table = readFileSync(`/proc/${pid}/net/tcp`, 'latin1');
    return table.split('\n').some((line) => {
      const fields = line.trim().split(/\s+/);
      return fields[1] === LISTEN_HEX && fields[3] === '0A';
    });
  } catch {
    return false;
  }
}

function nsIno(pid: number, kind: 'net' | 'user'): number | undefined {
  try {
    return statSync(`/proc/${pid}/ns/${kind}`).ino;
  } catch {
    return undefined;
  }
}
