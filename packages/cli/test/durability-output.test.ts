/** REL-11 (stdout failures) and REL-13 (no stack trace for expected failures), with real devices and mounts. */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionFiles } from '@crystal/engine';
import { crystalBin, FakeProvider, fakeConfig, runCrystal, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { fillDisk, mountReadOnly, mountTmpfs, mountUnavailable, sessionIds } from './durability-helpers.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(): Promise<{ fake: FakeProvider; home: TempHome }> {
  const fake = await FakeProvider.start({
    replies: [{ toolCalls: [{ name: 'list', arguments: { path: '.' } }] }, { text: 'done '.repeat(200) }],
  });
  const home = tempHome(fakeConfig(fake.baseUri));
  cleanups.push(
    () => fake.close(),
    () => home.dispose(),
  );
  return { fake, home };
}

describe('REL-11 stdout failures', () => {
  it('REL-11 crystal run > /dev/full reports the failure once on stderr, exits non-zero, and the turn is saved', async () => {
    const { home } = await setup();
    const full = openSync('/dev/full', 'w');
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: tempDir(), CRYSTAL_HOME: home.path };
    const child = spawn(process.execPath, [crystalBin, 'run', 'list the files'], {
      cwd: tempDir('crystal-ws-'),
      env,
      stdio: ['ignore', full, 'pipe'],
    });
    closeSync(full);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr.match(/cannot write to standard output/g)).toHaveLength(1);
    expect(stderr).toContain('ENOSPC');
    expect(stderr).not.toMatch(/internal error|\n\s+at /);
    expect(code).toBe(2);
    const [id] = sessionIds(home.path) as [string];
    const archive = SessionFiles.load(home.path, id).state.archive;
    expect(archive[0]?.role).toBe('user');
    expect(archive.at(-1)?.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('done') });
  });
});

describe('REL-13 expected failures name what failed, the path and the fix', () => {
  const noMount = mountUnavailable();

  it('REL-13 export into a missing folder, a read-only mount and a full disk: one line each, no stack trace', async () => {
    const { home } = await setup();
    expect((await runCrystal(['run', 'list the files'], { home: home.path })).code).toBe(0);
    const [id] = sessionIds(home.path) as [string];
    const targets: [string, RegExp][] = [
      [join(tempDir(), 'no', 'such', 'folder', 'out.json'), /it does not exist; check the path \[ENOENT\]/],
    ];
    if (noMount) console.warn(`REL-13 mount cases not run: ${noMount}`);
    else {
      const roSource = tempDir();
      mkdirSync(join(roSource, 'inside'));
      const ro = mountReadOnly(roSource);
      const disk = mountTmpfs(64);
      cleanups.push(
        () => ro.unmount(),
        () => disk.unmount(),
      );
      writeFileSync(join(disk.path, 'keep'), '');
      fillDisk(disk.path);
      targets.push([join(ro.path, 'out.json'), /the file system is read-only.*\[EROFS\]/]);
      targets.push([join(disk.path, 'out.json'), /the disk is full; free some space and try again \[ENOSPC\]/]);
    }
    for (const [target, reason] of targets) {
      const result = await runCrystal(['export', id, '--out', target], { home: home.path });
      expect(result.code, target).toBe(1);
      expect(result.stderr, target).toMatch(/^crystal: Could not [a-z ]+ \(.+out\.json\): /);
      expect(result.stderr, target).toContain(target);
      expect(result.stderr, target).toMatch(reason);
      expect(result.stderr.trim().split('\n'), target).toHaveLength(1);
      expect(result.stderr, target).not.toMatch(/internal error|\n\s+at /);
    }
  });

  it('REL-13 crystal run on a Home whose disk is full fails before the request with one line naming the path', async () => {
    if (noMount) return void console.warn(`REL-13 tmpfs case not run: ${noMount}`);
    const fake = await FakeProvider.start({ replies: [{ text: 'never' }] });
    const disk = mountTmpfs(64);
    cleanups.push(
      () => fake.close(),
      () => disk.unmount(),
    );
    writeFileSync(join(disk.path, 'config.json'), JSON.stringify(fakeConfig(fake.baseUri)));
    fillDisk(disk.path);
    const result = await runCrystal(['run', 'hello'], { home: disk.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^crystal: Could not [a-z ]+ \\(${disk.path}/sessions[^)]*\\): the disk is full; free some space and try again \\[ENOSPC\\]\\.\n$`,
      ),
    );
    expect(fake.requests).toHaveLength(0);
  });
});

describe('REL-12 configuration warnings reach the operator', () => {
  it('REL-12 crystal run warns once about an unknown config key, naming the nearest known key', async () => {
    const fake = await FakeProvider.start({ replies: [{ text: 'fine' }] });
    const home = tempHome(fakeConfig(fake.baseUri, { executionBudget: { maximumModelCall: 3 } }));
    cleanups.push(
      () => fake.close(),
      () => home.dispose(),
    );
    const result = await runCrystal(['run', 'hi'], { home: home.path });
    expect(result.code).toBe(0);
    const warning = `${join(home.path, 'config.json')}: unknown key executionBudget.maximumModelCall is ignored; did you mean executionBudget.maximumModelCalls?`;
    expect(result.stderr.split('\n').filter((l) => l === warning)).toHaveLength(1);
  });
});
