/**
 * REL-3 in the order of issue 22's saves: both transcripts and the head's temp file are written
 * before anything is fsynced, so a failure can now come while generation files are open and
 * written but not yet durable. Each such point on a real full disk (a small tmpfs, root only):
 * the error names the path and the reason (REL-13), no temp file and no new generation file is
 * left, what was committed loads as it was, and the next save that can writes everything.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { userMessage } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { assistant, stateOf, textOf } from './saved-state.js';
import { FileSystemError, SessionFiles, sessionPath, writeFileAtomic } from '../src/index.js';

/** Why the full-disk tests cannot run here (they mount a tmpfs), or undefined. */
const noMount = process.platform !== 'linux' || process.getuid?.() !== 0 ? 'mounting a tmpfs needs root on Linux' : undefined;

/** A Home on its own small tmpfs, with its sessions folder made. */
async function onSmallDisk(size: string, run: (home: string) => Promise<void>): Promise<void> {
  const disk = mkdtempSync(join(tmpdir(), 'crystal-savefull-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', disk]);
  try {
    mkdirSync(join(disk, 'sessions'), { mode: 0o700 });
    await run(disk);
  } finally {
    execFileSync('umount', ['-l', disk]);
    rmSync(disk, { recursive: true, force: true });
  }
}

/** Fills the disk until a write fails, leaving `pages` free 4 KiB pages. Returns the filler's path. */
function fill(home: string, pages: number): string {
  const spare = join(home, 'spare');
  if (pages > 0) writeFileSync(spare, Buffer.alloc(pages * 4096, 1));
  const filler = join(home, 'filler');
  const fd = openSync(filler, 'w');
  const block = Buffer.alloc(4096, 2);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
  } finally {
    closeSync(fd);
  }
  if (pages > 0) rmSync(spare);
  return filler;
}

const sessionFiles = (home: string): string[] => readdirSync(join(home, 'sessions')).sort();

async function expectDiskFull(save: Promise<string>, home: string, id: string): Promise<void> {
  const error = await save.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FileSystemError);
  expect((error as FileSystemError).message).toBe(
    `Could not save session ${id} (${sessionPath(home, id)}): the disk is full; free some space and try again [ENOSPC].`,
  );
}

describe('REL-3 issue 22 a save that fails part way leaves nothing half-made', () => {
  it('REL-3 issue 22 a new session whose transcripts fit but whose head does not: no generation file, no temp file; the next save writes it', async () => {
    if (noMount) return void console.warn(`REL-3 full-disk test not run: ${noMount}`);
    await onSmallDisk('64k', async (home) => {
      const state = stateOf('full-head', [userMessage('first question')]);
      const files = SessionFiles.create(home, state.id);
      // Two pages: one for each transcript, none for the head's temp file.
      const filler = fill(home, 2);
      await expectDiskFull(files.save(state), home, state.id);
      expect(sessionFiles(home)).toEqual([]);
      rmSync(filler);
      await files.save(state);
      expect(sessionFiles(home)).toEqual(['full-head.archive.1.jsonl', 'full-head.context.2.jsonl', 'full-head.json']);
      const loaded = SessionFiles.load(home, state.id);
      expect(loaded.notes).toEqual([]);
      expect(loaded.state.archive.map(textOf)).toEqual(['first question']);
    });
  });

  it('REL-3 issue 22 a new session whose second transcript does not fit: the first one written is removed, no head or temp file', async () => {
    if (noMount) return void console.warn(`REL-3 full-disk test not run: ${noMount}`);
    await onSmallDisk('64k', async (home) => {
      const state = stateOf('full-context', [userMessage('first question')]);
      const files = SessionFiles.create(home, state.id);
      const filler = fill(home, 1);
      await expectDiskFull(files.save(state), home, state.id);
      expect(sessionFiles(home)).toEqual([]);
      rmSync(filler);
      await files.save(state);
      expect(SessionFiles.load(home, state.id).state.archive.map(textOf)).toEqual(['first question']);
    });
  });

  it('REL-3 issue 22 an appended turn whose head does not fit: the committed turn loads as it was, the bytes written past it are cut by the next save', async () => {
    if (noMount) return void console.warn(`REL-3 full-disk test not run: ${noMount}`);
    await onSmallDisk('64k', async (home) => {
      const state = stateOf('full-append', [userMessage('first question')]);
      const files = SessionFiles.create(home, state.id);
      await files.save(state);
      const before = sessionFiles(home);
      const committedBytes = statSync(join(home, 'sessions', 'full-append.archive.1.jsonl')).size;
      const reply = assistant('first answer');
      state.archive.push(reply);
      state.context.push(reply);
      // No page left: the appends go into the transcripts' last pages, the head's temp file finds none.
      const filler = fill(home, 0);
      await expectDiskFull(files.save(state), home, state.id);
      expect(sessionFiles(home)).toEqual(before);
      // The appended bytes are on disk past the committed length, and ignored.
      expect(statSync(join(home, 'sessions', 'full-append.archive.1.jsonl')).size).toBeGreaterThan(committedBytes);
      const kept = SessionFiles.load(home, state.id);
      expect(kept.notes).toEqual([]);
      expect(kept.state.archive.map(textOf)).toEqual(['first question']);
      // The data stayed in memory: once there is room the same instance saves it.
      rmSync(filler);
      await files.save(state);
      expect(sessionFiles(home)).toEqual(before);
      const loaded = SessionFiles.load(home, state.id);
      expect(loaded.notes).toEqual([]);
      expect(loaded.state.archive.map(textOf)).toEqual(['first question', 'first answer']);
      expect(loaded.state.context.map(textOf)).toEqual(['first question', 'first answer']);
    });
  });

  it('REL-3 issue 22 transcripts over 1 MiB (written on the thread pool) that do not fit: every write settles before clean-up, nothing is left', async () => {
    if (noMount) return void console.warn(`REL-3 full-disk test not run: ${noMount}`);
    await onSmallDisk('2m', async (home) => {
      const big = (n: number): string => `${n} ${'x'.repeat(1_300_000)}`;
      const state = stateOf('full-big', [userMessage(big(1))]);
      const files = SessionFiles.create(home, state.id);
      await expectDiskFull(files.save(state), home, state.id);
      expect(sessionFiles(home)).toEqual([]);
      // A smaller conversation fits: the same files save it.
      const small = stateOf('full-big', [userMessage('short')]);
      await files.save(small);
      expect(SessionFiles.load(home, 'full-big').state.archive.map(textOf)).toEqual(['short']);
    });
  });
});

describe('REL-3 issue 22 writeFileAtomic of more than 1 MiB (written on the thread pool)', () => {
  it('REL-3 issue 22 an image-sized write that does not fit fails with ENOSPC and leaves no temp file', async () => {
    if (noMount) return void console.warn(`REL-3 full-disk test not run: ${noMount}`);
    await onSmallDisk('1m', async (home) => {
      const target = join(home, 'media', 'image.png');
      await expect(writeFileAtomic(target, Buffer.alloc(1536 * 1024, 3))).rejects.toMatchObject({ code: 'ENOSPC' });
      expect(readdirSync(join(home, 'media'))).toEqual([]);
      // The same write that fits goes through, whole.
      await writeFileAtomic(target, Buffer.alloc(512 * 1024, 4));
      expect(readdirSync(join(home, 'media'))).toEqual(['image.png']);
      expect(statSync(target).size).toBe(512 * 1024);
    });
  });
});

describe('issue 22 large transcripts', () => {
  it('issue 22 a transcript over 1 MiB is written on the thread pool and loads whole', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crystal-savebig-'));
    try {
      const text = `big ${'y'.repeat(3_000_000)}`;
      const state = stateOf('big-one', [userMessage(text), assistant('short answer')]);
      const files = SessionFiles.create(home, state.id);
      await files.save(state);
      state.archive.push(userMessage(text));
      state.context.push(userMessage(text));
      await files.save(state);
      const loaded = SessionFiles.load(home, state.id);
      expect(loaded.notes).toEqual([]);
      expect(loaded.state.archive.map(textOf)).toEqual([text, 'short answer', text]);
      expect(loaded.state.context.map(textOf)).toEqual([text, 'short answer', text]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
