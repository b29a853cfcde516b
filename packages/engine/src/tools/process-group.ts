/**
 * Runs a shell command in its own process group, so a timeout, a user cancel or the turn's
 * budget stops the command and everything it started (BASH-2): SIGTERM to the group, then
 * SIGKILL after a grace period for children that ignore it. Output is capped; the cap is
 * stated in the result.
 */
import { type ChildProcess, spawn } from './lazy-child-process.js';

export interface ProcessOptions {
  readonly cwd: string;
  /** Per-command timer in milliseconds; null disables it. */
  readonly timeoutMs: number | null;
  readonly signal: AbortSignal;
  readonly env?: NodeJS.ProcessEnv;
  /** Bytes of output kept (head and tail halves); the rest is counted and dropped. */
  readonly maxOutputBytes?: number;
  readonly killGraceMs?: number;
  /** Each chunk as it arrives, with the stream it came from (surfaces show stderr apart). */
  readonly onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  /** Wraps the argv for the OS sandbox (SBX-1); undefined (or returning undefined) runs it as is. */
  readonly contain?: ContainArgv;
}

/** What the process runners need from the sandbox: the file, args and env to spawn instead, and a cleanup. */
export type ContainArgv = (
  argv: readonly [string, ...string[]],
  env: NodeJS.ProcessEnv,
) => { readonly file: string; readonly args: readonly string[]; readonly env: NodeJS.ProcessEnv; cleanup(): void } | undefined;

export interface ProcessResult {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
  readonly truncatedBytes: number;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
}

const DEFAULT_MAX_OUTPUT = 256 * 1024;

export function runInProcessGroup(command: string, options: ProcessOptions): Promise<ProcessResult> {
  const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  return new Promise((resolve, reject) => {
    const env = options.env ?? process.env;
    const wrapped = options.contain?.(['/bin/sh', '-c', command], env);
    const child = spawn(wrapped?.file ?? '/bin/sh', wrapped ? [...wrapped.args] : ['-c', command], {
      cwd: options.cwd,
      env: wrapped?.env ?? env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let head = '';
    let tail = '';
    let headFull = false;
    let dropped = 0;
    // Keeps the first and last halves of the cap, in order; characters split across chunks are
    // decoded whole (setEncoding keeps a decoder per stream).
    const take = (text: string, stream: 'stdout' | 'stderr'): void => {
      options.onOutput?.(text, stream);
      if (!headFull) {
        const room = max / 2 - head.length;
        if (text.length <= room) {
          head += text;
          return;
        }
        head += text.slice(0, room);
        text = text.slice(room);
        headFull = true;
      }
      tail += text;
      if (tail.length > max / 2) {
        dropped += tail.length - max / 2;
        tail = tail.slice(tail.length - max / 2);
      }
    };
    child.stdout.setEncoding('utf8').on('data', (text: string) => take(text, 'stdout'));
    child.stderr.setEncoding('utf8').on('data', (text: string) => take(text, 'stderr'));
    const group = superviseGroup(child, options);
    child.on('error', (error) => {
      group.release(false);
      wrapped?.cleanup();
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      group.release(true);
      wrapped?.cleanup();
      const { timedOut, cancelled } = group;
      const omitted = dropped > 0 ? `\n[… ${dropped} bytes of output omitted; the output cap is ${max} bytes …]\n` : '';
      resolve({ exitCode, signal, output: head + omitted + tail, truncatedBytes: dropped, timedOut, cancelled });
    });
  });
}

export interface GroupSupervision {
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  /** Stops the timers; on `closed`, also kills any straggler of the group. */
  release(closed: boolean): void;
}

/**
 * The lifecycle every process group shares (the bash tool, exec tools): a timer and a cancel
 * each stop the whole group, SIGTERM then SIGKILL after a grace period. Until 'close' the group
 * is alive, even when its leader has exited and a background child still holds the pipes.
 */
export function superviseGroup(
  child: ChildProcess,
  options: { readonly timeoutMs: number | null; readonly signal: AbortSignal; readonly killGraceMs?: number | undefined },
): GroupSupervision {
  let timedOut = false;
  let cancelled = false;
  let closed = false;
  let killTimer: NodeJS.Timeout | undefined;
  const killGroup = (): void => {
    if (child.pid === undefined || closed || killTimer) return;
    signalGroup(child.pid, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(child.pid as number, 'SIGKILL'), options.killGraceMs ?? 2000);
  };
  const timer =
    options.timeoutMs === null
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          killGroup();
        }, options.timeoutMs);
  const onAbort = (): void => {
    cancelled = true;
    killGroup();
  };
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener('abort', onAbort, { once: true });
  return {
    get timedOut() {
      return timedOut;
    },
    get cancelled() {
      return cancelled;
    },
    release(isClosed) {
      if (timer) clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      options.signal.removeEventListener('abort', onAbort);
      if (!isClosed) return;
      closed = true;
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
    },
  };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}
