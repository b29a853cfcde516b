/**
 * stdout for `crystal run`. A reader that went away (`crystal run … | head`, EPIPE) stops the
 * writing quietly; any other failure (`> /dev/full`, a closed terminal: ENOSPC, EIO, …) is
 * reported once on stderr and remembered, so the run exits non-zero while the turn itself
 * goes on and is saved (REL-11).
 */
export interface GuardedStdout {
  readonly stream: NodeJS.WritableStream & { isTTY?: boolean };
  /** The failure other than EPIPE, if stdout failed. */
  readonly failure: NodeJS.ErrnoException | undefined;
}

export function guardStdout(
  stdout: NodeJS.WriteStream = process.stdout,
  stderr: NodeJS.WritableStream = process.stderr,
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
    isTTY: stdout.isTTY,
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
