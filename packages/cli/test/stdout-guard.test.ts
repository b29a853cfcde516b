/**
 * `crystal run`'s standard output on POSIX (packages/cli/src/stdout-guard.ts; issue 22 item 4):
 * file descriptor 1 written with fs.writeSync instead of a `process.stdout` made for it. Real
 * descriptors: a file, a named pipe whose reader is behind (EAGAIN on a non-blocking descriptor)
 * and one whose reader has gone (EPIPE), and `crystal run` itself piped into `head`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { crystalBin, FakeProvider, fakeConfig, tempDir, tempHome } from '@crystal/testkit';
import { describe, expect, it } from 'vitest';
import { descriptorTarget, guardStdout } from '../src/stdout-guard.js';

/** A writer standing in for process.stdout, keeping what it was given. */
function fakeStream(): NodeJS.WriteStream & { received: Buffer[] } {
  const received: Buffer[] = [];
  return {
    received,
    isTTY: false,
    write: (chunk: string | Uint8Array) => {
      received.push(Buffer.from(chunk));
      return true;
    },
    on: () => undefined,
  } as unknown as NodeJS.WriteStream & { received: Buffer[] };
}

/** A named pipe in a new folder: its read end and a non-blocking write end, both open. */
function namedPipe(): { reader: number; writer: number; close: () => void } {
  const path = join(tempDir('crystal-fifo-'), 'out');
  execFileSync('mkfifo', [path]);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  return {
    reader,
    writer,
    close: () => {
      for (const fd of [reader, writer]) {
        try {
          closeSync(fd);
        } catch {
          // Closed by the test already.
        }
      }
    },
  };
}

function drain(fd: number): Buffer {
  const parts: Buffer[] = [];
  const buffer = Buffer.alloc(65536);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buffer, 0, buffer.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break;
      throw error;
    }
    if (n === 0) break;
    parts.push(Buffer.from(buffer.subarray(0, n)));
  }
  return Buffer.concat(parts);
}

describe.skipIf(process.platform === 'win32')('CLI-2 crystal run writes stdout to descriptor 1 directly (issue 22)', () => {
  it('CLI-2 writes every byte of UTF-8 text to a file, in order, and a file is not a terminal', () => {
    const file = join(tempDir('crystal-stdout-'), 'out.txt');
    const fd = openSync(file, 'w');
    const fallback = fakeStream();
    const target = descriptorTarget(fd, () => fallback);
    const text = `caf\u00e9 \u2713 ${'x'.repeat(100_000)}\n`;
    expect(target.write('first line\n')).toBe(true);
    expect(target.write(text)).toBe(true);
    closeSync(fd);
    expect(readFileSync(file, 'utf8')).toBe(`first line\n${text}`);
    expect(target.isTTY).toBe(false);
    expect(fallback.received).toEqual([]);
  });

  it('REL-11 a non-blocking descriptor whose reader is behind (EAGAIN) hands the rest to process.stdout, which queues: nothing is lost or repeated', () => {
    const pipe = namedPipe();
    try {
      const fallback = fakeStream();
      const target = descriptorTarget(pipe.writer, () => fallback);
      // More than a pipe holds (64 KiB on Linux), with no one reading yet.
      const text = Array.from({ length: 25_000 }, (_, i) => `line ${i} \u2713\n`).join('');
      target.write(text);
      target.write('after\n');
      const inPipe = drain(pipe.reader);
      expect(inPipe.length).toBeGreaterThan(0);
      expect(fallback.received.length).toBe(2);
      expect(Buffer.concat([inPipe, ...fallback.received]).toString('utf8')).toBe(`${text}after\n`);
    } finally {
      pipe.close();
    }
  });

  it('REL-11 a reader that went away (EPIPE) stops the writing quietly: no failure, nothing on stderr', () => {
    const pipe = namedPipe();
    try {
      closeSync(pipe.reader);
      const errors: string[] = [];
      const guarded = guardStdout(
        descriptorTarget(pipe.writer, () => fakeStream()),
        { write: (chunk: string) => errors.push(chunk) > 0 },
      );
      expect(guarded.stream.write('lost\n')).toBe(true);
      expect(guarded.stream.write('also lost\n')).toBe(true);
      expect(guarded.failure).toBeUndefined();
      expect(errors).toEqual([]);
    } finally {
      pipe.close();
    }
  });

  it('REL-11 crystal run --format text piped into head: head gets the start of the reply, the run ends and its session is saved', async () => {
    const fake = await FakeProvider.start({ replies: [{ textTokens: 20_000 }] });
    const home = tempHome(fakeConfig(fake.baseUri));
    try {
      const child = spawn(
        '/bin/bash',
        // pipefail: the pipeline's status is crystal's when crystal failed.
        ['-c', `set -o pipefail; "${process.execPath}" "${crystalBin}" run "write a lot" | head -c 10`],
        { env: { ...process.env, CRYSTAL_HOME: home.path }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
      });
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code).toBe(0);
      expect(stdout.startsWith('tok tok to')).toBe(true);
      expect(stderr).toBe('');
      const sessions = execFileSync('ls', [join(home.path, 'sessions')]).toString();
      expect(sessions).toMatch(/\.json\n/);
    } finally {
      await fake.close();
      home.dispose();
    }
  }, 30_000);
});
