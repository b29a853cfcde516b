/**
 * Runs one clipboard reader command with its output bounded WHILE it runs (CLIP-5): once its
 * standard output passes `maxOutputBytes`, or a file it writes passes `watchFile.maxBytes`, the
 * reader is killed and nothing more is read. The runner is injectable so the macOS and Windows
 * readers are tested through their exact command lines on any machine.
 */
import { spawn } from '../../tools/lazy-child-process.js';
import { promises as fs } from 'node:fs';

export interface ReaderCommand {
  /** An absolute path, or a name looked up on PATH by the operating system. */
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** The reader is killed once its standard output passes this many bytes. */
  readonly maxOutputBytes: number;
  /** A file the reader writes: it is killed once the file passes `maxBytes`. */
  readonly watchFile?: { readonly path: string; readonly maxBytes: number } | undefined;
  /** The reader is killed after this long. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
}

export interface ReaderResult {
  /** False when the command does not exist (the reader is not installed). */
  readonly found: boolean;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Standard output as collected: never more than `maxOutputBytes`. */
  readonly stdout: Uint8Array;
  /** Standard error, at most 16 KiB of it. */
  readonly stderr: string;
  /** Bytes of standard output received before the reader stopped (the cap plus at most one chunk). */
  readonly outputBytes: number;
  /** The reader was killed because its output or its file passed the cap. */
  readonly overflow: boolean;
  /** The reader was killed because it ran out of time. */
  readonly timedOut: boolean;
}

export type ReaderRunner = (command: ReaderCommand) => Promise<ReaderResult>;

const STDERR_BYTES = 16 * 1024;
const WATCH_INTERVAL_MS = 10;

/** The real runner: `child_process.spawn`, no shell. */
export const spawnRunner: ReaderRunner = (command) =>
  new Promise((resolve, reject) => {
    const child = spawn(command.command, [...command.args], {
      env: command.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    const chunks: Buffer[] = [];
    let outputBytes = 0;
    let stderr = '';
    let overflow = false;
    let timedOut = false;
    let settled = false;

    const stop = (): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      child.stdout.destroy();
    };
    const finish = (result: ReaderResult | Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (watcher) clearInterval(watcher);
      command.signal?.removeEventListener('abort', onAbort);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };

    child.stdout.on('data', (chunk: Buffer) => {
      outputBytes += chunk.length;
      if (outputBytes > command.maxOutputBytes) {
        overflow = true;
        stop();
        return;
      }
      chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_BYTES) stderr += chunk.toString('utf8').slice(0, STDERR_BYTES - stderr.length);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, command.timeoutMs);
    const onAbort = (): void => stop();
    command.signal?.addEventListener('abort', onAbort, { once: true });
    if (command.signal?.aborted) stop();
    const watched = command.watchFile;
    const watcher = watched
      ? setInterval(() => {
          fs.stat(watched.path).then(
            (stat) => {
              if (stat.size > watched.maxBytes) {
                overflow = true;
                stop();
              }
            },
            () => undefined,
          );
        }, WATCH_INTERVAL_MS)
      : undefined;

    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        finish({
          found: false,
          code: null,
          signal: null,
          stdout: new Uint8Array(),
          stderr: '',
          outputBytes: 0,
          overflow,
          timedOut,
        });
      } else {
        finish(new Error(`Could not start ${command.command}: ${error.message}`));
      }
    });
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(chunks);
      finish({ found: true, code, signal, stdout, stderr, outputBytes, overflow, timedOut });
    });
  });
