/**
 * The reader runner with real processes: output and temp-file bounds enforced while the reader
 * runs (CLIP-5), a missing command, a reader that never answers, and a cancelled paste.
 */
import { chmodSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClipboardError, type ReaderResult, readClipboardImage, spawnRunner } from '../src/images/clipboard/index.js';
import { limits } from './images-fixtures.js';

const work = mkdtempSync(join(tmpdir(), 'crystal-runner-'));
const SYSTEM_PATH = ['/usr/bin', '/bin'].join(delimiter);

function script(name: string, program: string, body: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, program);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return dir;
}

describe('clipboard reader runner', () => {
  it('CLIP-5 kills a reader once the file it writes passes the cap', async () => {
    const file = join(work, 'growing.bin');
    const cap = 64 * 1024;
    // Writes 4 KiB at a time, for ever: only the runner's file watch can end it.
    const result = await spawnRunner({
      command: '/bin/sh',
      args: ['-c', 'while :; do head -c 4096 /dev/zero; sleep 0.005; done > "$0"', file],
      env: { PATH: SYSTEM_PATH },
      maxOutputBytes: 1024,
      watchFile: { path: file, maxBytes: cap },
      timeoutMs: 60_000,
    });
    expect(result).toMatchObject({ found: true, overflow: true, timedOut: false, signal: 'SIGKILL' });
    expect(statSync(file).size).toBeGreaterThan(cap);
  });

  it('CLIP-5 kills a reader once its output passes the cap and keeps at most the cap', async () => {
    const result = await spawnRunner({
      command: '/bin/cat',
      args: ['/dev/zero'],
      env: {},
      maxOutputBytes: 200_000,
      timeoutMs: 60_000,
    });
    expect(result).toMatchObject({ overflow: true, signal: 'SIGKILL' });
    expect(result.stdout.length).toBeLessThanOrEqual(200_000);
    expect(result.outputBytes).toBeLessThanOrEqual(200_000 + 64 * 1024);
  });

  it('CLIP-6 a command that does not exist is reported as not found', async () => {
    const result = await spawnRunner({
      command: join(work, 'no-such-reader'),
      args: [],
      env: {},
      maxOutputBytes: 10,
      timeoutMs: 60_000,
    });
    expect(result.found).toBe(false);
  });

  it('CLIP-6 a reader that never answers is killed at its timeout: reader_failed', async () => {
    const dir = script('hanging', 'xclip', 'exec sleep 600');
    const error = await readClipboardImage({
      limits: limits(),
      platform: 'linux',
      env: { PATH: `${dir}${delimiter}${SYSTEM_PATH}`, DISPLAY: ':0' },
      timeoutMs: 200,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClipboardError);
    expect((error as ClipboardError).kind).toBe('reader_failed');
    expect((error as ClipboardError).message).toBe('The clipboard reader xclip failed: it did not finish within 0.2 seconds.');
  });

  it('a cancelled paste kills the reader and rejects with the abort reason', async () => {
    const dir = script('slow', 'xclip', 'exec sleep 600');
    const controller = new AbortController();
    const results: ReaderResult[] = [];
    const error = await readClipboardImage({
      limits: limits(),
      platform: 'linux',
      env: { PATH: `${dir}${delimiter}${SYSTEM_PATH}`, DISPLAY: ':0' },
      signal: controller.signal,
      run: async (command) => {
        const running = spawnRunner(command);
        controller.abort();
        const result = await running;
        results.push(result);
        return result;
      },
    }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(results[0]?.signal).toBe('SIGKILL');
  });
});
