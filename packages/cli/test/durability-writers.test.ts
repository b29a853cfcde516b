/**
 * REL-2 (one writer per session across processes) and REL-3 (save errors are never swallowed),
 * with real processes, real signals and real tmpfs / read-only mounts.
 */
import { chmodSync, chownSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeProvider, type FakeReply, fakeConfig, runCrystal, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { SessionFiles } from '@crystal/engine';
import { afterEach, describe, expect, it } from 'vitest';
import {
  fillDisk,
  mountReadOnly,
  mountTmpfs,
  mountUnavailable,
  runCrystalAs,
  sessionIds,
  startCrystal,
  unprivilegedUid,
  until,
  writeHomeConfig,
} from './durability-helpers.js';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function track<T extends { close(): Promise<void> } | { dispose(): void } | { unmount(): void }>(thing: T): T {
  cleanups.push(() => {
    if ('close' in thing) return thing.close();
    if ('dispose' in thing) return thing.dispose();
    return thing.unmount();
  });
  return thing;
}

const userTexts = (home: string, id: string): string[] =>
  SessionFiles.load(home, id)
    .state.archive.filter((m) => m.role === 'user')
    .map((m) => m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''));

/** A fake whose request number `slow` (1-based) streams with a minute between chunks: the holder stays busy. */
async function fakeWithSlowRequest(slow: number): Promise<FakeProvider> {
  let n = 0;
  return track(
    await FakeProvider.start({
      replyFor: () => {
        n++;
        return n === slow ? ({ text: 'slow reply', delayMs: 60_000 } as FakeReply) : { text: `reply ${n}` };
      },
    }),
  );
}

describe('REL-2 one writer per session across processes', () => {
  it('REL-2 a second crystal run --resume of a session another run holds is refused, naming the session, the holder and what to do', async () => {
    const fake = await fakeWithSlowRequest(2);
    const home = track(tempHome(fakeConfig(fake.baseUri))) as TempHome;
    const first = await runCrystal(['run', 'first'], { home: home.path });
    expect(first.code).toBe(0);
    const [id] = sessionIds(home.path) as [string];

    const holder = startCrystal(['run', '--resume', id, 'second'], home.path);
    cleanups.push(() => void holder.child.kill('SIGKILL'));
    await until(() => fake.requests.length === 2);

    const second = await runCrystal(['run', '--resume', id, 'third'], { home: home.path });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`Session ${id} is open in another process`);
    expect(second.stderr).toContain(`pid ${holder.child.pid}`);
    expect(second.stderr).toMatch(/since \d{4}-\d\d-\d\dT/);
    expect(second.stderr).toContain('/fork');
    expect(second.stderr).not.toContain('internal error');
    // Refused before anything was sent, and the holder's turn is not overwritten.
    expect(fake.requests).toHaveLength(2);

    holder.child.kill('SIGTERM');
    expect((await holder.closed).code).toBe(5);
    expect(existsSync(join(home.path, 'sessions', `${id}.lock`))).toBe(false);
    const third = await runCrystal(['run', '--resume', id, 'third'], { home: home.path });
    expect(third.code).toBe(0);
    expect(userTexts(home.path, id)).toEqual(['first', 'second', 'third']);
  });

  it('REL-2 the lock of a process killed with -9 is taken over by the next opener', async () => {
    const fake = await fakeWithSlowRequest(2);
    const home = track(tempHome(fakeConfig(fake.baseUri))) as TempHome;
    expect((await runCrystal(['run', 'first'], { home: home.path })).code).toBe(0);
    const [id] = sessionIds(home.path) as [string];
    const victim = startCrystal(['run', '--resume', id, 'second'], home.path);
    await until(() => fake.requests.length === 2);
    const lock = join(home.path, 'sessions', `${id}.lock`);
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: victim.child.pid, surface: 'crystal run' });
    victim.child.kill('SIGKILL');
    await victim.closed;
    expect(existsSync(lock)).toBe(true);

    const next = await runCrystal(['run', '--resume', id, 'third'], { home: home.path });
    expect(next.stderr).not.toContain('open in another process');
    expect(next.code).toBe(0);
    expect(existsSync(lock)).toBe(false);
    expect(userTexts(home.path, id).at(-1)).toBe('third');
  });

  it('REL-2 /resume of a session held by another process is refused in the terminal session, and /fork of it works', async () => {
    const fake = await fakeWithSlowRequest(2);
    const home = track(tempHome(fakeConfig(fake.baseUri))) as TempHome;
    expect((await runCrystal(['run', 'first'], { home: home.path })).code).toBe(0);
    const [id] = sessionIds(home.path) as [string];
    const holder = startCrystal(['run', '--resume', id, 'second'], home.path);
    cleanups.push(() => void holder.child.kill('SIGKILL'));
    await until(() => fake.requests.length === 2);

    const other = startCrystal([], home.path);
    cleanups.push(() => void other.child.kill('SIGKILL'));
    other.child.stdin.write(`/resume ${id}\n`);
    await other.waitFor(`Session ${id} is open in another process (crystal run, pid ${holder.child.pid}`);
    other.child.stdin.write(`/fork ${id}\n`);
    await other.waitFor(/Forked to (\S+); the source session is unchanged/);
    other.child.stdin.end();
    expect((await other.closed).code).toBe(0);
    holder.child.kill('SIGTERM');
    await holder.closed;
  });
});

describe('REL-3 save errors are never swallowed', () => {
  const noMount = mountUnavailable();

  it('REL-3 disk full during a crystal run turn: path and reason on stderr, exit 2, no "saved", no temp files', async () => {
    if (noMount) return void console.warn(`REL-3 tmpfs test not run: ${noMount}`);
    const disk = track(mountTmpfs(64));
    let filler = '';
    const fake = track(
      await FakeProvider.start({
        replyFor: () => {
          filler = fillDisk(disk.path);
          return { text: 'an answer that cannot be saved' };
        },
      }),
    );
    writeHomeConfig(disk.path, fakeConfig(fake.baseUri));
    const result = await runCrystal(['run', 'hello'], { home: disk.path });
    expect(result.stderr).toContain('was not saved');
    expect(result.stderr).toContain(join(disk.path, 'sessions'));
    expect(result.stderr).toMatch(/disk is full.*ENOSPC/);
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(result.stdout).not.toMatch(/Session \S+ saved/);
    expect(result.code).toBe(2);
    expect(readdirSync(join(disk.path, 'sessions')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(filler).not.toBe('');
  });

  it('REL-3 the terminal session keeps a turn a full disk refused and writes it at the next save that can; /quit says saved only then', async () => {
    if (noMount) return void console.warn(`REL-3 tmpfs test not run: ${noMount}`);
    const disk = track(mountTmpfs(64));
    let n = 0;
    const fake = track(
      await FakeProvider.start({
        replyFor: () => {
          n++;
          if (n === 1) fillDisk(disk.path);
          return { text: `answer ${n}` };
        },
      }),
    );
    writeHomeConfig(disk.path, fakeConfig(fake.baseUri));
    const session = startCrystal([], disk.path);
    cleanups.push(() => void session.child.kill('SIGKILL'));
    session.child.stdin.write('one\n');
    await session.waitFor(/error: Session \S+ was not saved: .*disk is full/);
    expect(session.stdout).toContain(join(disk.path, 'sessions'));
    rmSync(join(disk.path, 'filler.bin'));
    session.child.stdin.write('two\n');
    await session.waitFor('answer 2');
    session.child.stdin.end();
    const { code } = await session.closed;
    expect(session.stdout).toMatch(/note: Session \S+ is saved again/);
    expect(session.stdout).toMatch(/Session (\S+) saved\. Continue it with/);
    expect(code).toBe(0);
    const [id] = sessionIds(disk.path) as [string];
    expect(userTexts(disk.path, id)).toEqual(['one', 'two']);
  });

  it('REL-3 /quit on a disk that stays full does not claim "saved" and exits 1 naming the path', async () => {
    if (noMount) return void console.warn(`REL-3 tmpfs test not run: ${noMount}`);
    const disk = track(mountTmpfs(64));
    const fake = track(
      await FakeProvider.start({
        replyFor: () => {
          fillDisk(disk.path);
          return { text: 'lost answer' };
        },
      }),
    );
    writeHomeConfig(disk.path, fakeConfig(fake.baseUri));
    const session = startCrystal([], disk.path);
    cleanups.push(() => void session.child.kill('SIGKILL'));
    session.child.stdin.write('one\n');
    await session.waitFor('lost answer');
    session.child.stdin.end('/quit\n');
    const { code } = await session.closed;
    expect(session.stdout).not.toMatch(/Session \S+ saved\./);
    expect(session.stderr).toMatch(/session \S+ was NOT saved to .*sessions.*disk is full/);
    expect(code).toBe(1);
    expect(readdirSync(join(disk.path, 'sessions')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('REL-3 a read-only Home is a clear error before the request is sent', async () => {
    if (noMount) return void console.warn(`REL-3 read-only mount test not run: ${noMount}`);
    const fake = track(await FakeProvider.start({ replies: [{ text: 'never' }] }));
    const home = track(tempHome(fakeConfig(fake.baseUri))) as TempHome;
    const ro = track(mountReadOnly(home.path));
    const result = await runCrystal(['run', 'hello'], { home: ro.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^crystal: Could not create the sessions folder \(.*\): the file system is read-only.*\[EROFS\]\.\n$/,
    );
    expect(fake.requests).toHaveLength(0);
  });
});

describe('REL-3 permissions (chmod, run as an unprivileged user)', () => {
  const nobody = unprivilegedUid();

  it('REL-3 a Home the user cannot write (chmod 0500) is a clear error before the request is sent', async () => {
    if (typeof nobody === 'string') return void console.warn(`REL-3 chmod test not run: ${nobody}`);
    const fake = track(await FakeProvider.start({ replies: [{ text: 'never' }] }));
    const home = tempDir('crystal-ro-home-');
    writeHomeConfig(home, fakeConfig(fake.baseUri));
    chownSync(home, nobody, nobody);
    chmodSync(home, 0o500);
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const ws = tempDir('crystal-ws-');
    chownSync(ws, nobody, nobody);
    const result = await runCrystalAs(nobody, ['run', 'hello'], home, ws);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `crystal: Could not create the sessions folder (${join(home, 'sessions')}): permission denied; fix the permissions of that path or use another Home with --home [EACCES].\n`,
    );
    expect(fake.requests).toHaveLength(0);
  });

  it('REL-3 a sessions folder made read-only during the turn: the save error names the path, exit 2, nothing claims saved', async () => {
    if (typeof nobody === 'string') return void console.warn(`REL-3 chmod test not run: ${nobody}`);
    const home = tempDir('crystal-chmod-home-');
    const sessions = join(home, 'sessions');
    const fake = track(
      await FakeProvider.start({
        replyFor: () => {
          chmodSync(sessions, 0o500);
          return { text: 'an answer' };
        },
      }),
    );
    writeHomeConfig(home, fakeConfig(fake.baseUri));
    chownSync(home, nobody, nobody);
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const ws = tempDir('crystal-ws-');
    chownSync(ws, nobody, nobody);
    const result = await runCrystalAs(nobody, ['run', 'hello'], home, ws);
    expect(result.stderr).toMatch(
      /was not saved: Could not save session \S+ \(.*sessions\/\S+\.json\): permission denied.*\[EACCES\]/,
    );
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(result.stdout).not.toMatch(/Session \S+ saved/);
    expect(result.code).toBe(2);
    chmodSync(sessions, 0o700);
    expect(readdirSync(sessions).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('SEC-8 and REL-4 on the command line', () => {
  it('SEC-8 --resume ../x, export ../x and /resume ../x are refused before any path is built', async () => {
    const fake = track(await FakeProvider.start({ replies: [{ text: 'never' }] }));
    const home = track(tempHome(fakeConfig(fake.baseUri))) as TempHome;
    // A session-shaped file outside sessions/: the old code loaded it and saved beside it.
    const outside = join(home.path, 'x.json');
    const body = JSON.stringify({ id: 'x', workspace: '/w', items: [{ role: 'user', content: 'planted' }] });
    writeFileSync(outside, body);
    const run = await runCrystal(['run', '--resume', '../x', 'hello'], { home: home.path });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `crystal: "../x" is not a session id (letters, digits, '-' and '_' only, as 'crystal sessions' lists them).\n`,
    );
    const exported = await runCrystal(['export', '../x'], { home: home.path });
    expect(exported.code).toBe(1);
    expect(exported.stderr).toContain('"../x" is not a session id');
    const session = startCrystal([], home.path);
    cleanups.push(() => void session.child.kill('SIGKILL'));
    session.child.stdin.end('/resume ../x\n');
    await session.closed;
    expect(session.stdout).toContain('error: "../x" is not a session id');
    expect(fake.requests).toHaveLength(0);
    expect(readFileSync(outside, 'utf8')).toBe(body);
    expect(readdirSync(home.path).filter((f) => f.includes('.jsonl'))).toEqual([]);
  });

  it('REL-4 crystal sessions lists a session whose head is damaged, with its note, and --resume rebuilds it', async () => {
    const fake = track(await FakeProvider.start({ replies: [{ text: 'one' }, { text: 'two' }] }));
    const home = track(tempHome(fakeConfig(fake.baseUri))) as TempHome;
    const ws = tempDir('crystal-ws-');
    expect((await runCrystal(['run', 'first'], { home: home.path, cwd: ws })).code).toBe(0);
    const [id] = sessionIds(home.path) as [string];
    const head = join(home.path, 'sessions', `${id}.json`);
    writeFileSync(head, readFileSync(head, 'utf8').slice(0, 90));
    const listed = await runCrystal(['sessions', '--all'], { home: home.path, cwd: ws });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('[damaged: the session file is damaged; it is rebuilt from its transcript files on resume]');
    const resumed = await runCrystal(['run', '--resume', id, 'second'], { home: home.path, cwd: ws });
    expect(resumed.stderr).toMatch(/was damaged; it was rebuilt from its transcript files \(2 messages\)/);
    expect(resumed.code).toBe(0);
    expect(userTexts(home.path, id)).toEqual(['first', 'second']);
  });
});
