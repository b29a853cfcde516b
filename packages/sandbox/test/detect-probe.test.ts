/**
 * SBX-2 detection in one bwrap run (issue 22 item 4: every spawn at start-up costs time). Real
 * processes: CRYSTAL_BWRAP names a script that records each call and answers like a bwrap of a
 * given kind (sized tmpfs supported, not supported, no namespaces).
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectSandbox } from '../src/index.js';

/** A bwrap stand-in: logs its arguments, fails calls holding `--size` when `sized` is false, all calls when `works` is false. */
function fakeBwrap(kind: { sized: boolean; works: boolean }): { path: string; calls: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-fake-bwrap-'));
  const log = join(dir, 'calls.txt');
  const path = join(dir, 'bwrap');
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      `echo "$*" >> '${log}'`,
      kind.works ? '' : "echo 'bwrap: No permissions to creating new namespace' >&2; exit 1",
      kind.sized ? '' : `case "$*" in *--size*) echo 'bwrap: Unknown option --size' >&2; exit 1;; esac`,
      'exit 0',
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
  return {
    path,
    calls: () => {
      try {
        return readFileSync(log, 'utf8').trim().split('\n');
      } catch {
        return [];
      }
    },
  };
}

describe('SBX-2 detection costs one bwrap run (issue 22 item 4)', () => {
  it('SBX-2 a bwrap that sizes a tmpfs is found available with one run', async () => {
    const bwrap = fakeBwrap({ sized: true, works: true });
    expect(await detectSandbox({ env: { CRYSTAL_BWRAP: bwrap.path } })).toEqual({
      available: true,
      bwrap: bwrap.path,
      tmpfsSize: true,
    });
    expect(bwrap.calls()).toHaveLength(1);
    expect(bwrap.calls()[0]).toContain('--unshare-all');
  });

  it('SBX-2 an older bwrap without --size is still available, with an unsized /tmp (two runs)', async () => {
    const bwrap = fakeBwrap({ sized: false, works: true });
    expect(await detectSandbox({ env: { CRYSTAL_BWRAP: bwrap.path } })).toEqual({
      available: true,
      bwrap: bwrap.path,
      tmpfsSize: false,
    });
    expect(bwrap.calls()).toHaveLength(2);
    expect(bwrap.calls()[1]).not.toContain('--size');
  });

  it('SBX-2 a bwrap that cannot create namespaces is unavailable, with its own words in the reason', async () => {
    const bwrap = fakeBwrap({ sized: true, works: false });
    const found = await detectSandbox({ env: { CRYSTAL_BWRAP: bwrap.path } });
    expect(found.available).toBe(false);
    expect(found.available === false && found.reason).toContain('No permissions to creating new namespace');
  });
});
