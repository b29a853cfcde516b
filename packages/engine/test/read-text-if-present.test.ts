/**
 * Issue 22 item 4: `readTextIfPresent` (packages/engine/src/fs-errors.ts) reads the optional files
 * a start looks for without the exception a missing one costs; it must give what readFileSync
 * gives, and undefined only when nothing is there.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTextIfPresent } from '../src/fs-errors.js';

describe('readTextIfPresent: a file that may be missing, read without an exception when it is (issue 22)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-read-text-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file as UTF-8, an empty one as empty', () => {
    writeFileSync(join(dir, 'notes.md'), 'caf\u00e9 \u2713\n');
    writeFileSync(join(dir, 'empty.md'), '');
    expect(readTextIfPresent(join(dir, 'notes.md'))).toBe('caf\u00e9 \u2713\n');
    expect(readTextIfPresent(join(dir, 'empty.md'))).toBe('');
  });

  it('is undefined for a missing file and for a file in a missing folder', () => {
    expect(readTextIfPresent(join(dir, 'missing.md'))).toBeUndefined();
    expect(readTextIfPresent(join(dir, 'no-such-folder', 'settings.json'))).toBeUndefined();
  });

  it('throws, as readFileSync does, for a folder and for a path through a file', () => {
    mkdirSync(join(dir, 'a-folder'));
    writeFileSync(join(dir, 'a-file'), 'x');
    expect(() => readTextIfPresent(join(dir, 'a-folder'))).toThrow(expect.objectContaining({ code: 'EISDIR' }));
    expect(() => readTextIfPresent(join(dir, 'a-file', 'settings.json'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });
});
