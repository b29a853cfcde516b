/**
 * Runs an argv without a shell in its own process group, the sibling of `runInProcessGroup` for
 * exec tools: stdin gets the call's JSON and is closed, stdout and stderr are kept apart (the
 * result is stdout then stderr), and the tool's own timer or a cancel stops the whole group:
 * SIGTERM, then SIGKILL after a grace period for children that ignore it (BASH-3).
 */
import { spawn } from '../tools/lazy-child-process.js';
import { type ContainArgv, superviseGroup } from '../tools/process-group.js';

export interface ArgvRunOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; undefined leaves stdin empty. */
  readonly stdin?: string;
  /** The tool's own timer in milliseconds (stdin, run and output); null disables it. */
  readonly timeoutMs: number | null;
  readonly signal: AbortSignal;
  readonly killGraceMs?: number;
  /** Bytes of each stream kept; the rest is counted and dropped. */
  readonly maxStdoutBytes: number;
  readonly maxStderrBytes: number;
  /** Wraps the argv for the OS sandbox (SBX-1). */
  readonly contain?: ContainArgv;
}

export interface ArgvRunResult {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly stdoutDropped: number;
  readonly stderrDropped: number;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
}

class Capped {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  dropped = 0;
  constructor(private readonly max: number) {}
  add(chunk: Buffer): void {
    const room = this.max - this.kept;
    if (room >= chunk.length) {
      this.chunks.push(chunk);
      this.kept += chunk.length;
      return;
    }
    if (room > 0) this.chunks.push(chunk.subarray(0, room));
    this.kept += Math.max(0, room);
    this.dropped += chunk.length - Math.max(0, room);
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

export function runArgv(file: string, args: readonly string[], options: ArgvRunOptions): Promise<ArgvRunResult> {
  return new Promise((resolve, reject) => {
    const wrapped = options.contain?.([file, ...args], options.env);
    const child = spawn(wrapped?.file ?? file, wrapped ? [...wrapped.args] : [...args], {
      cwd: options.cwd,
      env: wrapped?.env ?? options.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout = new Capped(options.maxStdoutBytes);
    const stderr = new Capped(options.maxStderrBytes);
    child.stdout.on('data', (chunk: Buffer) => stdout.add(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.add(chunk));
    // A child that exits without reading stdin closes the pipe: that is not an error of ours.
    child.stdin.on('error', () => undefined);
    const group = superviseGroup(child, options);
    child.on('error', (error: NodeJS.ErrnoException) => {
      group.release(false);
      wrapped?.cleanup();
      const why = error.code === 'ENOENT' ? 'not found' : error.code === 'EACCES' ? 'not executable' : error.message;
      reject(new Error(`Cannot start ${file}: ${why}.`));
    });
    child.on('close', (exitCode, signal) => {
      // The tool is gone; release() also makes sure nothing it started outlives it.
      group.release(true);
      wrapped?.cleanup();
      resolve({
        exitCode,
        signal,
        stdout: stdout.bytes(),
        stderr: stderr.bytes(),
        stdoutDropped: stdout.dropped,
        stderrDropped: stderr.dropped,
        timedOut: group.timedOut,
        cancelled: group.cancelled,
      });
    });
    if (options.stdin !== undefined) child.stdin.end(options.stdin, 'utf8');
    else child.stdin.end();
  });
}
