/**
 * Start-up (issue 22 item 4), proved without timing:
 * - `crystal run` does not wait for the sandbox probe before it opens the session: the probe
 *   runs on the first command only (a turn that runs none starts no bwrap). The `bwrap` the
 *   probe runs (CRYSTAL_BWRAP) is a script that records each run and whether the session had
 *   taken its lock by then (a bounded wait, so a sequential start still finishes).
 * - nothing on the way to the first request formats a number through Intl (the first
 *   `toLocaleString` loads ICU's number data: 20 ms or more): a preloaded probe records every call.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeProvider, fakeConfig, runCrystal, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('CLI-2 crystal run start-up (issue 22 item 4)', () => {
  it('CLI-2 crystal run opens the session (takes its lock) before any sandbox probe: a turn without a command probes nothing, the first bash call probes', async () => {
    const fake = await FakeProvider.start({
      replies: [{ text: 'done' }, { toolCalls: [{ name: 'bash', arguments: { command: 'echo hi' } }] }, { text: 'ran it' }],
      whenExhausted: 'error',
    });
    cleanups.push(() => fake.close());
    const home = tempHome(fakeConfig(fake.baseUri));
    cleanups.push(() => home.dispose());
    const dir = tempDir('crystal-fake-bwrap-');
    const marks = join(dir, 'marks.txt');
    const bwrap = join(dir, 'bwrap');
    writeFileSync(
      bwrap,
      [
        '#!/bin/sh',
        `for i in $(seq 1 100); do`,
        `  if ls '${home.path}'/sessions/*.lock >/dev/null 2>&1; then echo lock-seen >> '${marks}'; exit 1; fi`,
        '  sleep 0.05',
        'done',
        `echo lock-not-seen >> '${marks}'`,
        'exit 1',
        '',
      ].join('\n'),
    );
    chmodSync(bwrap, 0o755);
    const result = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path, env: { CRYSTAL_BWRAP: bwrap } });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed' });
    // Issue 22 item 4: the turn ran no command, so no bwrap was started at all.
    expect(existsSync(marks)).toBe(false);
    const withBash = await runCrystal(['run', '--approval', 'full', '--format', 'json', 'run it'], {
      home: home.path,
      env: { CRYSTAL_BWRAP: bwrap },
    });
    expect(withBash.code).toBe(0);
    expect(JSON.parse(withBash.stdout)).toMatchObject({ stopReason: 'completed' });
    // The probe ran at the bash call (a sized run, then a plain one: the script fails both) with the lock there.
    expect(readFileSync(marks, 'utf8').trim().split('\n')).toEqual(['lock-seen', 'lock-seen']);
  }, 30_000);

  it('CLI-2 crystal run runs its turn without Intl number formatting (no ICU number data loaded on the way to the first request)', async () => {
    const fake = await FakeProvider.start({ replies: [{ text: 'done' }] });
    cleanups.push(() => fake.close());
    const home = tempHome(fakeConfig(fake.baseUri));
    cleanups.push(() => home.dispose());
    const dir = tempDir('crystal-intl-probe-');
    const probe = join(dir, 'intl-probe.cjs');
    const report = join(dir, 'calls.txt');
    // Records each call with its stack, over the whole run.
    writeFileSync(
      probe,
      [
        "const fs = require('node:fs');",
        'const original = Number.prototype.toLocaleString;',
        'Number.prototype.toLocaleString = function (...args) {',
        `  fs.appendFileSync(${JSON.stringify(report)}, new Error('toLocaleString').stack.split('\\n').slice(1, 4).join(' | ') + '\\n');`,
        '  return original.apply(this, args);',
        '};',
        'const Format = Intl.NumberFormat;',
        'Intl.NumberFormat = function (...args) {',
        `  fs.appendFileSync(${JSON.stringify(report)}, 'Intl.NumberFormat\\n');`,
        '  return new Format(...args);',
        '};',
        '',
      ].join('\n'),
    );
    const result = await runCrystal(['run', '--format', 'json', 'hi'], {
      home: home.path,
      env: { NODE_OPTIONS: `--require ${probe}` },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed' });
    expect(existsSync(report) ? readFileSync(report, 'utf8') : '').toBe('');
  }, 30_000);
});
