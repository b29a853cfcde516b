/**
 * Start-up (issue 22 item 4): the bin compiles the one CommonJS bundle with V8's code cache
 * (packages/cli/src/launch.ts). Proved on the real bin and the real bundle: the cache a first
 * start writes is read by the next, a damaged one is replaced, and — since V8 checks a cache
 * against the source's length only, so a planted cache runs its author's code — a cache is read
 * only from a folder and file that no one but this user can write.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crystalBin, FakeProvider, fakeConfig, runCrystal, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

const bundle = join(crystalBin, '../../dist/crystal.cjs');
const terminalBundle = join(crystalBin, '../../dist/terminal.cjs');

/** `crystal sessions` in an empty Home: it loads and runs the bundle (kind "other") and succeeds. */
async function start(env: Record<string, string | undefined>, home?: string) {
  const result = await runCrystal(['sessions'], { env, ...(home ? { home } : {}) });
  expect(result.stdout).toMatch(/^No saved sessions in /);
  expect(result.code).toBe(0);
  return result;
}

function cacheFiles(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.v8')) : [];
}

/**
 * A cache an attacker made: the code of `evil` padded to the bundle's wrapped length, compiled
 * by a plain node, its data written where the loader looks. V8 accepts it for the real bundle.
 */
function plantEvilCache(file: string, marker: string, target = bundle): void {
  const script = `
    const { Script } = require('node:vm');
    // The bin compiles the bundle's text as it is (it is the wrapper function already).
    const real = require('node:fs').readFileSync(${JSON.stringify(target)}, 'latin1');
    let evil = '(function () {' + ${JSON.stringify(`process.stdout.write(${JSON.stringify(marker)}); process.exit(0);`)} + '\\n})';
    evil = evil.slice(0, -2) + ' '.repeat(real.length - evil.length) + evil.slice(-2);
    if (evil.length !== real.length) throw new Error('length');
    require('node:fs').writeFileSync(${JSON.stringify(file)}, new Script(evil, { filename: ${JSON.stringify(target)} }).createCachedData());
  `;
  const made = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  expect(made.stderr).toBe('');
  expect(made.status).toBe(0);
}

describe('issue 22 item 4: the bundle is compiled with a code cache', () => {
  it('issue 22 item 4 the first start writes a private cache (0700 folder, 0600 file) and the next start reads it without rewriting', async () => {
    const dir = join(tempDir('crystal-cc-'), 'compile');
    await start({ CRYSTAL_COMPILE_CACHE: dir });
    const [name] = cacheFiles(dir);
    expect(name).toMatch(/^[0-9a-f]{16}-v\d+\.\d+\.\d+-\w+-other\.v8$/);
    const file = join(dir, name as string);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const before = statSync(file);
    // V8 took the data: a refused cache would be written again (a new file renamed over it).
    await start({ CRYSTAL_COMPILE_CACHE: dir });
    const after = statSync(file);
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(cacheFiles(dir)).toEqual([name]);
  });

  it('issue 22 item 4 the cache lives in ~/.cache/crystal/compile by default (XDG_CACHE_HOME when set), and CRYSTAL_COMPILE_CACHE=off writes none', async () => {
    const home = tempDir('crystal-cc-home-');
    await start({ CRYSTAL_COMPILE_CACHE: 'off' }, home);
    expect(existsSync(join(home, '.cache'))).toBe(false);
    await start({ CRYSTAL_COMPILE_CACHE: undefined, XDG_CACHE_HOME: undefined }, home);
    expect(cacheFiles(join(home, '.cache', 'crystal', 'compile'))).toHaveLength(1);
    const xdg = tempDir('crystal-cc-xdg-');
    await start({ CRYSTAL_COMPILE_CACHE: undefined, XDG_CACHE_HOME: xdg }, home);
    expect(cacheFiles(join(xdg, 'crystal', 'compile'))).toHaveLength(1);
  });

  it('issue 22 item 4 a damaged cache is refused by V8: the command runs from source and the file is replaced', async () => {
    const dir = join(tempDir('crystal-cc-'), 'compile');
    await start({ CRYSTAL_COMPILE_CACHE: dir });
    const [name] = cacheFiles(dir);
    const file = join(dir, name as string);
    const good = readFileSync(file);
    writeFileSync(file, Buffer.alloc(good.length, 7), { mode: 0o600 });
    await start({ CRYSTAL_COMPILE_CACHE: dir });
    expect(readFileSync(file).equals(Buffer.alloc(good.length, 7))).toBe(false);
    await start({ CRYSTAL_COMPILE_CACHE: dir });
  });

  it('issue 22 item 4 a planted cache in a folder others can write is never read (in our own folder the same file would run)', async () => {
    // The hazard is real: in a folder only we can write, V8 runs the planted code.
    const ours = join(tempDir('crystal-cc-'), 'compile');
    await start({ CRYSTAL_COMPILE_CACHE: ours });
    const [name] = cacheFiles(ours);
    plantEvilCache(join(ours, name as string), 'PLANTED');
    const ran = await runCrystal(['no-such-command'], { env: { CRYSTAL_COMPILE_CACHE: ours } });
    expect(ran.stdout).toBe('PLANTED');

    for (const mode of [0o777, 0o775, 0o1777]) {
      const shared = join(tempDir('crystal-cc-'), 'compile');
      mkdirSync(shared);
      chmodSync(shared, mode);
      plantEvilCache(join(shared, name as string), 'PLANTED');
      const planted = readFileSync(join(shared, name as string));
      await start({ CRYSTAL_COMPILE_CACHE: shared });
      // Not read (the command ran its own code) and not written (the folder is not ours alone).
      expect(readFileSync(join(shared, name as string)).equals(planted)).toBe(true);
    }

    // A file others can write, in our own folder, is not read either.
    const folder = join(tempDir('crystal-cc-'), 'compile');
    mkdirSync(folder, { mode: 0o700 });
    plantEvilCache(join(folder, name as string), 'PLANTED');
    chmodSync(join(folder, name as string), 0o666);
    await start({ CRYSTAL_COMPILE_CACHE: folder });
  });

  it('issue 22 item 4 a command that fails writes no cache (it compiled a fraction of its code, and an accepted cache is never rewritten)', async () => {
    const dir = join(tempDir('crystal-ccache-'), 'compile');
    const failed = await runCrystal(['no-such-command'], { env: { CRYSTAL_COMPILE_CACHE: dir } });
    expect(failed.stderr).toBe("crystal: unknown command 'no-such-command'. Run 'crystal --help' for the commands.\n");
    expect(failed.code).toBe(1);
    expect(cacheFiles(dir)).toEqual([]);
    await start({ CRYSTAL_COMPILE_CACHE: dir });
    expect(cacheFiles(dir)).toHaveLength(1);
  });

  it('issue 22 item 4 a command that opened a session keeps its cache however it ends (a turn refused with 401 exits 1)', async () => {
    const fake = await FakeProvider.start({ replies: [{ error: { status: 401 } }] });
    const home = tempHome(fakeConfig(fake.baseUri));
    try {
      const dir = join(tempDir('crystal-ccache-'), 'compile');
      const result = await runCrystal(['run', '--format', 'json', 'hi'], {
        home: home.path,
        env: { CRYSTAL_COMPILE_CACHE: dir },
      });
      expect(result.code).not.toBe(0);
      expect(fake.requests.length).toBeGreaterThan(0);
      expect(cacheFiles(dir)).toHaveLength(1);
    } finally {
      await fake.close();
      home.dispose();
    }
  });

  it('issue 22 item 4 the bundle is pure ASCII, so Node holds its source as a one-byte string (a non-ASCII byte doubles it)', () => {
    const bytes = readFileSync(bundle);
    const at = bytes.findIndex((b) => b > 0x7f);
    expect(at === -1 ? 'ascii' : bytes.subarray(Math.max(0, at - 40), at + 10).toString('utf8')).toBe('ascii');
  });

  it('issue 22 item 4 a cache folder that cannot be made (a file in its place) costs nothing but the cache', async () => {
    const blocker = join(tempDir('crystal-cc-'), 'not-a-folder');
    writeFileSync(blocker, 'x');
    await start({ CRYSTAL_COMPILE_CACHE: join(blocker, 'compile') });
    expect(readFileSync(blocker, 'utf8')).toBe('x');
  });
});

/** The cache file name of `file` for a terminal session: its own content hash, this Node, kind "tui". */
function tuiCacheName(file: string): string {
  const hash = createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16);
  return `${hash}-${process.version}-${process.arch}-tui.v8`;
}

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

/** A terminal session on a pty with the cache in `dir`: opened (the cache is worth keeping), then Ctrl+C twice. */
async function terminalSession(dir: string): Promise<string> {
  current = await scenario({ replies: [], env: { CRYSTAL_COMPILE_CACHE: dir } });
  const { session } = current;
  await session.waitFor('CTX 0%');
  session.write('\x03');
  await session.waitFor('Press Ctrl+C again to exit.');
  session.write('\x03');
  const { exitCode } = await session.exited;
  expect(exitCode).toBe(0);
  const output = session.output;
  await current.dispose();
  current = undefined;
  return output;
}

describe('issue 22: the terminal bundle and the main bundle each keep their own cache', () => {
  it("issue 22 a terminal session writes one cache file per bundle, each named for its own content hash; writing one keeps the other and removes another build's", async () => {
    const dir = join(tempDir('crystal-cc-'), 'compile');
    await terminalSession(dir);
    const main = tuiCacheName(bundle);
    const terminal = tuiCacheName(terminalBundle);
    expect(main).not.toBe(terminal);
    expect(cacheFiles(dir).sort()).toEqual([main, terminal].sort());
    for (const name of [main, terminal]) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    const kept = statSync(join(dir, terminal));
    // The main bundle's file is gone and another build's is there: the next start writes the main
    // bundle's again, removes the other build's, and leaves the terminal bundle's as it was.
    rmSync(join(dir, main));
    const stale = `0123456789abcdef-${process.version}-${process.arch}-tui.v8`;
    writeFileSync(join(dir, stale), 'another build', { mode: 0o600 });
    await terminalSession(dir);
    expect(cacheFiles(dir).sort()).toEqual([main, terminal].sort());
    const after = statSync(join(dir, terminal));
    expect(after.ino).toBe(kept.ino);
    expect(after.mtimeMs).toBe(kept.mtimeMs);
    // Both are read and accepted: a third start rewrites neither.
    const written = statSync(join(dir, main));
    await terminalSession(dir);
    expect(statSync(join(dir, main)).mtimeMs).toBe(written.mtimeMs);
    expect(statSync(join(dir, main)).ino).toBe(written.ino);
    expect(statSync(join(dir, terminal)).ino).toBe(kept.ino);
  }, 60_000);

  it('issue 22 on the terminal path a planted cache of either bundle is never read from a folder others can write (in our own folder it would run)', async () => {
    for (const target of [bundle, terminalBundle]) {
      // The hazard is real on this path too: in a folder only we can write, the planted code runs.
      const ours = join(tempDir('crystal-cc-'), 'compile');
      mkdirSync(ours, { mode: 0o700 });
      plantEvilCache(join(ours, tuiCacheName(target)), 'PLANTED', target);
      current = await scenario({ replies: [], env: { CRYSTAL_COMPILE_CACHE: ours } });
      await current.session.exited;
      expect(current.session.output).toContain('PLANTED');
      await current.dispose();
      current = undefined;

      const shared = join(tempDir('crystal-cc-'), 'compile');
      mkdirSync(shared);
      chmodSync(shared, 0o777);
      const file = join(shared, tuiCacheName(target));
      plantEvilCache(file, 'PLANTED', target);
      const planted = readFileSync(file);
      const output = await terminalSession(shared);
      expect(output).not.toContain('PLANTED');
      // Not read, and not written either (the folder is not ours alone).
      expect(readFileSync(file).equals(planted)).toBe(true);
    }
  }, 60_000);
});
