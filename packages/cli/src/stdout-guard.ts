/**
 * stdout for `crystal run`. A reader that went away (`crystal run … | head`, EPIPE) stops the
 * writing quietly; any other failure (`> /dev/full`, a closed terminal: ENOSPC, EIO, …) is
 * reported once on stderr and remembered, so the run exits non-zero while the turn itself
 * goes on and is saved (REL-11).
 *
 * On POSIX the text goes to file descriptor 1 with `fs.writeSync`, not through `process.stdout`:
 * making that stream costs a start about a millisecond for a pipe (a socket over it) and more on
 * a terminal (node:tty), and Node writes to pipes, files and terminals synchronously on Linux
 * anyway (issue 22 item 4). A descriptor someone made non-blocking (EAGAIN when the reader is
 * behind) is handed to `process.stdout`, which queues, for the rest of the run. On Windows a
 * console needs Node's TTY stream (UTF-16 output), so `process.stdout` is used there.
 */
import { writeSync } from 'node:fs';
import { lazyBuiltin } from '@crystal/core';

export interface GuardedStdout {
  readonly stream: NodeJS.WritableStream & { isTTY?: boolean };
  /** The failure other than EPIPE, if stdout failed. */
  readonly failure: NodeJS.ErrnoException | undefined;
}

/** What `guardStdout` writes to: `process.stdout`, or file descriptor 1 written directly. */
export interface StdoutTarget {
  readonly isTTY?: boolean | undefined;
  write(chunk: string): boolean;
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
}

const tty = lazyBuiltin<typeof import('node:tty')>('node:tty');

/** File descriptor `fd` as a synchronous writer; EAGAIN hands the rest to `fallback()`. */
export function descriptorTarget(fd: number, fallback: () => NodeJS.WriteStream): StdoutTarget {
  let stream: NodeJS.WriteStream | undefined;
  let isTTY: boolean | undefined;
  const listeners: ((error: NodeJS.ErrnoException) => void)[] = [];
  const handOver = (): NodeJS.WriteStream => {
    stream = fallback();
    for (const listener of listeners) stream.on('error', listener);
    return stream;
  };
  return {
    get isTTY() {
      isTTY ??= stream?.isTTY ?? tty().isatty(fd);
      return isTTY;
    },
    write(chunk: string): boolean {
      if (stream !== undefined) return stream.write(chunk);
      const bytes = Buffer.from(chunk, 'utf8');
      let done = 0;
      while (done < bytes.length) {
        try {
          done += writeSync(fd, bytes, done, bytes.length - done);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
          return handOver().write(bytes.subarray(done));
        }
      }
      return true;
    },
    on(_event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown {
      listeners.push(listener);
      return stream?.on('error', listener);
    },
  };
}

/** `process.stdout`'s place for `crystal run`: descriptor 1 on POSIX, the stream on Windows. */
export function runStdout(): StdoutTarget {
  return process.platform === 'win32' ? process.stdout : descriptorTarget(1, () => process.stdout);
}

export function guardStdout(
  stdout: StdoutTarget = runStdout(),
  stderr: Pick<NodeJS.WritableStream, 'write'> = lazyStderr(),
): GuardedStdout {
  let closed = false;
  let failure: NodeJS.ErrnoException | undefined;
  const fail = (error: NodeJS.ErrnoException): void => {
    if (closed) return;
    closed = true;
    if (error.code === 'EPIPE') return;
    failure = error;
    stderr.write(
      `crystal: cannot write to standard output (${error.code ?? error.message}); the rest of the output is dropped, the session is still saved.\n`,
    );
  };
  stdout.on('error', fail);
  const stream = {
    get isTTY() {
      return stdout.isTTY;
    },
    write: (chunk: string) => {
      if (closed) return true;
      try {
        return stdout.write(chunk);
      } catch (error) {
        fail(error as NodeJS.ErrnoException);
        return true;
      }
    },
  } as unknown as NodeJS.WritableStream & { isTTY?: boolean };
  return {
    stream,
    get failure() {
      return failure;
    },
  };
}

/** `process.stderr`, made at its first write: a plain run writes nothing there (issue 22). */
export function lazyStderr(): NodeJS.WritableStream {
  return { write: (chunk: string) => process.stderr.write(chunk) } as unknown as NodeJS.WritableStream;
}
