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
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { homeConfigMemo, loadConfig } from '@crystal/engine';
import { crystalBin, FakeProvider, fakeConfig, repoRoot, runCrystal, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { PtySession, type Scenario, scenario, scenarioOf } from './pty-harness.js';

const bundle = join(crystalBin, '../../dist/crystal.cjs');
const terminalBundle = join(crystalBin, '../../dist/terminal.cjs');
const sdkChunk = join(crystalBin, '../../dist/mcp-sdk.cjs');
const zodChunk = join(crystalBin, '../../dist/zod.cjs');
const interactiveChunk = join(crystalBin, '../../dist/interactive.cjs');
/** Whether a file only re-exports other modules (the build copies such a file into each chunk that imports it). */
const { reexportsOnly } = (await import(join(repoRoot, 'scripts/bundle-chunks.mjs'))) as {
  reexportsOnly: (path: string) => boolean;
};
const everythingRoot = dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json'));

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

/** A Home configured for a fake provider with `replies` answers and a new cache folder; `run` is one `crystal run hi` there that must succeed. */
async function inRunHome(
  replies: number,
  test: (context: { run: () => Promise<void>; home: string; dir: string; fake: FakeProvider }) => Promise<void>,
): Promise<void> {
  const fake = await FakeProvider.start({ replies: Array.from({ length: replies }, (_, i) => ({ text: `reply ${i + 1}` })) });
  const home = tempHome(fakeConfig(fake.baseUri));
  const dir = join(tempDir('crystal-ccache-'), 'compile');
  const run = async (): Promise<void> => {
    const result = await runCrystal(['run', 'hi'], { home: home.path, env: { CRYSTAL_COMPILE_CACHE: dir } });
    expect(result.code, result.stderr).toBe(0);
  };
  try {
    await test({ run, home: home.path, dir, fake });
  } finally {
    await fake.close();
    home.dispose();
  }
}

/** A file's content hash as the build names it (scripts/bundle.mjs): the first 16 hex digits of its SHA-256. */
function contentHash(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16);
}

/**
 * What a user's earlier start of this build leaves in `home`: its config.json validated and the
 * result remembered (packages/cli/src/build.ts `configMemo`), here by the engine's own loader.
 * The next start recalls it, does no one-off work, and so writes its code cache; the first start
 * of a build in a Home writes none (the test "a start that validates config.json ...").
 */
function rememberConfig(home: string): void {
  const build = contentHash(bundle);
  loadConfig(home, homeConfigMemo(home, build));
  expect(readdirSync(join(home, 'cache')).filter((f) => f.startsWith('validated-config-'))).toEqual([
    `validated-config-${build}.json`,
  ]);
}

/**
 * A cache an attacker made: the code of `evil` padded to the length of the text the bin compiles
 * for the bundle, compiled by a plain node, its data written where the loader looks. V8 accepts
 * it for the real bundle.
 */
function plantEvilCache(file: string, marker: string, target = bundle): void {
  const script = `
    const { Script } = require('node:vm');
    // The bin compiles the bundle's text as the file holds it (the wrapper function already, the
    // main bundle's padded with spaces by the build): V8 checks the length alone.
    const length = ${statSync(target).size};
    let evil = '(function () {' + ${JSON.stringify(`process.stdout.write(${JSON.stringify(marker)}); process.exit(0);`)} + '\\n})';
    evil = evil.slice(0, -2) + ' '.repeat(length - evil.length) + evil.slice(-2);
    if (evil.length !== length) throw new Error('length');
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
    rememberConfig(home.path);
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

  it('issue 22 item 4 a start that validates config.json (one-off work: the next start of this build recalls the result) writes no cache, which would carry the validation code every later start deserialises; the next start writes it, the one after reads it', async () => {
    await inRunHome(3, async ({ run, home, dir, fake }) => {
      await run();
      expect(readdirSync(join(home, 'cache')).filter((f) => f.startsWith('validated-config-'))).toHaveLength(1);
      expect(cacheFiles(dir)).toEqual([]);
      await run();
      const name = cacheName(bundle, 'run');
      expect(cacheFiles(dir)).toEqual([name]);
      const written = statSync(join(dir, name));
      await run();
      expect(statSync(join(dir, name)).ino).toBe(written.ino);
      expect(statSync(join(dir, name)).mtimeMs).toBe(written.mtimeMs);
      expect(fake.requests).toHaveLength(3);
    });
  });

  it('issue 22 item 4 only the first start of a build in a Home leaves the cache to the next: a start after config.json was edited validates and writes it (a file rewritten before every start would otherwise never get one)', async () => {
    await inRunHome(2, async ({ run, home, dir, fake }) => {
      await run();
      expect(cacheFiles(dir)).toEqual([]);
      // The same settings in another text: the memo holds the old text, so this start validates.
      const file = join(home, 'config.json');
      writeFileSync(file, JSON.stringify(JSON.parse(readFileSync(file, 'utf8')), null, 4));
      await run();
      // It validated with zod, so the zod chunk's cache is written beside the main bundle's.
      expect(cacheFiles(dir).sort()).toEqual([cacheName(bundle, 'run'), cacheName(zodChunk, 'run')].sort());
      expect(fake.requests).toHaveLength(2);
    });
  });

  it('issue 22 item 4 a Home that cannot keep the validated configuration (a file where its cache folder goes) validates at every start, so its first start writes the cache', async () => {
    await inRunHome(1, async ({ run, home, dir }) => {
      writeFileSync(join(home, 'cache'), 'not a folder');
      await run();
      expect(cacheFiles(dir).sort()).toEqual([cacheName(bundle, 'run'), cacheName(zodChunk, 'run')].sort());
    });
  });

  it('issue 22 item 4 the bundle (and each bundle and chunk next to it) is pure ASCII, so Node holds its source as a one-byte string (a non-ASCII byte doubles it)', () => {
    const dist = join(crystalBin, '../../dist');
    for (const name of readdirSync(dist).filter((f) => f.endsWith('.cjs'))) {
      const bytes = readFileSync(join(dist, name));
      const at = bytes.findIndex((b) => b > 0x7f);
      expect(at === -1 ? 'ascii' : bytes.subarray(Math.max(0, at - 40), at + 10).toString('utf8'), name).toBe('ascii');
    }
  });

  it("issue 22 item 4 the main bundle's text is compiled as the build wrote it, all of it and nothing added (no padding: with the commands' code and zod in chunks, padding it to Node's EXTERN_APEX cost a run ~240 fresh pages), and the second start takes the cache", async () => {
    const dir = tempDir('crystal-cc-extern-');
    const probe = join(dir, 'probe.cjs');
    const report = join(dir, 'scripts.jsonl');
    // Each Script the bin makes: its text's length and tail, whether the text starts with the file,
    // and whether V8 took the cache.
    writeFileSync(
      probe,
      [
        "const fs = require('node:fs'); const vm = require('node:vm');",
        'const Script = vm.Script;',
        'vm.Script = class extends Script {',
        '  constructor(source, options) {',
        '    super(source, options);',
        "    const text = fs.readFileSync(options.filename, 'latin1');",
        `    fs.appendFileSync(${JSON.stringify(report)}, JSON.stringify({ file: options.filename, length: source.length, size: text.length, same: source.startsWith(text), tail: source.slice(text.length).trim(), rejected: this.cachedDataRejected }) + '\\n');`,
        '  }',
        '};',
      ].join('\n'),
    );
    const env = { CRYSTAL_COMPILE_CACHE: join(dir, 'compile'), NODE_OPTIONS: `--require ${probe}` };
    await start(env);
    await start(env);
    const scripts = readFileSync(report, 'utf8')
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            file: string;
            length: number;
            size: number;
            same: boolean;
            tail: string;
            rejected?: boolean;
          },
      );
    expect(scripts.map((s) => s.file)).toEqual([bundle, bundle]);
    const text = readFileSync(bundle, 'latin1');
    for (const script of scripts) {
      // The text compiled is the file, all of it, and nothing more.
      expect(script).toMatchObject({ length: text.length, size: text.length, same: true, tail: '' });
    }
    // The first start wrote the cache, the second took it.
    expect(scripts[1]?.rejected).toBe(false);
    // The file ends at the source map's comment: the build writes no padding after it.
    expect(text).toMatch(/\n\/\/# sourceMappingURL=crystal\.cjs\.map\n$/);
    expect(readFileSync(terminalBundle, 'latin1').endsWith('.map\n')).toBe(true);
  });

  it('issue 22 item 4 crystal run reads the main bundle off the main thread while the main thread loads node:http (its first step): the read costs the start nothing; another command reads it on the main thread', async () => {
    const dir = tempDir('crystal-cc-read-');
    const probe = join(dir, 'probe.cjs');
    const report = join(dir, 'reads.json');
    // Each read of the main bundle: on the main thread (readSync) or off it (fs.read, and when its
    // callback ran), with whether node:http was loaded then.
    writeFileSync(
      probe,
      [
        "const fs = require('node:fs');",
        "const http = () => process.moduleLoadList.includes('NativeModule http');",
        'const reads = []; const bundle = new Set();',
        'const openSync = fs.openSync;',
        `fs.openSync = function (file, ...rest) { const fd = openSync.call(this, file, ...rest); if (file === ${JSON.stringify(bundle)}) bundle.add(fd); return fd; };`,
        'const closeSync = fs.closeSync;',
        'fs.closeSync = function (fd, ...rest) { bundle.delete(fd); return closeSync.call(this, fd, ...rest); };',
        'const readSync = fs.readSync;',
        "fs.readSync = function (fd, ...rest) { if (bundle.has(fd)) reads.push({ read: 'main thread', http: http() }); return readSync.call(this, fd, ...rest); };",
        'const read = fs.read;',
        'fs.read = function (fd, buffer, offset, length, position, callback) {',
        '  if (!bundle.has(fd)) return read.call(this, fd, buffer, offset, length, position, callback);',
        "  const entry = { read: 'thread pool', http: http() }; reads.push(entry);",
        '  return read.call(this, fd, buffer, offset, length, position, (...args) => { entry.httpWhenRead = http(); callback(...args); });',
        '};',
        `process.on('exit', () => fs.writeFileSync(${JSON.stringify(report)}, JSON.stringify(reads)));`,
      ].join('\n'),
    );
    await inRunHome(1, async ({ home, dir: cache }) => {
      const result = await runCrystal(['run', 'hi'], {
        home,
        env: { CRYSTAL_COMPILE_CACHE: cache, NODE_OPTIONS: `--require ${probe}` },
      });
      expect(result.code, result.stderr).toBe(0);
      // One read of the whole file, started before node:http loaded; its callback waited for it.
      expect(JSON.parse(readFileSync(report, 'utf8'))).toEqual([{ read: 'thread pool', http: false, httpWhenRead: true }]);
    });
    await start({ CRYSTAL_COMPILE_CACHE: join(dir, 'compile'), NODE_OPTIONS: `--require ${probe}` });
    expect(JSON.parse(readFileSync(report, 'utf8'))).toEqual([{ read: 'main thread', http: false }]);
  });

  it('issue 22 item 4 a cache folder that cannot be made (a file in its place) costs nothing but the cache', async () => {
    const blocker = join(tempDir('crystal-cc-'), 'not-a-folder');
    writeFileSync(blocker, 'x');
    await start({ CRYSTAL_COMPILE_CACHE: join(blocker, 'compile') });
    expect(readFileSync(blocker, 'utf8')).toBe('x');
  });
});

/** The cache file name of `file` for a kind of command: its own content hash, this Node, the kind. */
function cacheName(file: string, kind: string): string {
  return `${contentHash(file)}-${process.version}-${process.arch}-${kind}.v8`;
}

/** The cache file name of `file` for a terminal session. */
const tuiCacheName = (file: string): string => cacheName(file, 'tui');

/** `crystal run` with server-everything configured (its SDK chunk loads when the server connects) and the cache in `dir`. */
async function mcpRun(dir: string) {
  const fake = await FakeProvider.start({ replies: [{ text: 'done' }] });
  const everything = { command: process.execPath, args: [join(everythingRoot, 'dist', 'index.js'), 'stdio'] };
  const home = tempHome(fakeConfig(fake.baseUri, { mcpServers: { everything } }));
  rememberConfig(home.path);
  try {
    const result = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path, env: { CRYSTAL_COMPILE_CACHE: dir } });
    // The server was up and its tools offered: the chunk ran.
    const tools = (fake.requests[0]?.body as { tools?: { function: { name: string } }[] } | undefined)?.tools ?? [];
    return { ...result, offered: tools.some((t) => t.function.name === 'mcp__everything__echo') };
  } finally {
    await fake.close();
    home.dispose();
  }
}

/** The source files a bundle holds, from its source map (paths relative to the repository). */
function sourcesOf(file: string): string[] {
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources
    .filter((source) => !source.includes(':') && !source.endsWith('-entry.js'))
    .map((source) => relative(repoRoot, join(dirname(file), source)));
}

describe('issue 22: the chunks next to the main bundle, each with its own cache', () => {
  it("CLI-2 (issue 22) each third-party module is in its chunk and not in the main bundle: the MCP SDK, ajv, hono, diff, picomatch and zod; what a chunk shares with the main bundle (eventsource-parser) is the main bundle's alone; zod is the one module with two copies, the engine's (zod.cjs) and the SDK's own", () => {
    const dist = join(crystalBin, '../../dist');
    const main = new Set(sourcesOf(bundle));
    const names = ['zod.cjs', 'mcp-sdk.cjs', 'web.cjs', 'tools-vendor.cjs', 'interactive.cjs', 'commands.cjs'];
    const chunks = Object.fromEntries(names.map((name) => [name, sourcesOf(join(dist, name))]));
    const held = (sources: Iterable<string>, pkg: string) =>
      [...sources].some((source) => source.startsWith(`node_modules/${pkg}/`));
    for (const [name, packages] of Object.entries({
      'zod.cjs': ['zod'],
      'mcp-sdk.cjs': ['@modelcontextprotocol/sdk', 'ajv', 'fast-uri', 'ajv-formats', 'eventsource', 'cross-spawn', 'zod'],
      'web.cjs': ['hono', '@hono/node-server'],
      'tools-vendor.cjs': ['diff', 'picomatch'],
    })) {
      for (const pkg of packages) {
        expect(held(chunks[name] as string[], pkg), `${pkg} in ${name}`).toBe(true);
        expect(held(main, pkg), `${pkg} in crystal.cjs`).toBe(false);
      }
    }
    // No file is in two of them, but for zod's (the SDK's own copy) and a package's index, which
    // only re-exports (a stateless copy in each chunk that uses it).
    const copied = (source: string) =>
      source.startsWith('node_modules/zod/') || (source.startsWith('packages/') && reexportsOnly(join(repoRoot, source)));
    const seen = new Map<string, string>([...main].map((source) => [source, 'crystal.cjs']));
    for (const [name, sources] of Object.entries(chunks)) {
      for (const source of sources) {
        if (!copied(source)) expect(seen.get(source), `${source} in ${name}`).toBeUndefined();
        seen.set(source, name);
      }
    }
    // The SDK's zod API is in its chunk with the core it uses; the engine's functions are zod.cjs's.
    const sdk = chunks['mcp-sdk.cjs'] as string[];
    expect(sdk.some((source) => source.startsWith('node_modules/zod/v4/classic/'))).toBe(true);
    for (const core of ['core.js', 'schemas.js']) {
      expect(sdk, core).toContain(`node_modules/zod/v4/core/${core}`);
      expect(chunks['zod.cjs'], core).toContain(`node_modules/zod/v4/core/${core}`);
    }
    expect(chunks['zod.cjs']?.some((source) => source.startsWith('node_modules/zod/v4/classic/'))).toBe(false);
    // eventsource-parser's parser is the providers' (main bundle); its stream wrapper, the SDK's alone.
    expect(main.has('node_modules/eventsource-parser/src/parse.ts')).toBe(true);
    expect(sdk).not.toContain('node_modules/eventsource-parser/src/parse.ts');
    // Our own code for other commands is in theirs: the Web host, the session view, the fake provider.
    for (const [name, source] of [
      ['web.cjs', 'packages/web/src/host.ts'],
      ['interactive.cjs', 'packages/cli/src/interactive/session-view.ts'],
      // Only Ctrl+V reads the clipboard: the engine's packages declare no side effects
      // ("sideEffects": false), so a file the engine's index re-exports but no run code uses is left out.
      ['interactive.cjs', 'packages/engine/src/images/clipboard/macos.ts'],
      ['commands.cjs', 'packages/testkit/src/fake-provider.ts'],
      ['commands.cjs', 'packages/cli/src/mcp-command.ts'],
    ] as const) {
      expect(chunks[name], `${source} in ${name}`).toContain(source);
      expect(main.has(source), `${source} in crystal.cjs`).toBe(false);
    }
  });

  it("CLI-2 MCP-3 (issue 22) crystal run with an MCP server writes a private cache file for the SDK chunk (dist/mcp-sdk.cjs), named for the chunk's own content hash, beside the main bundle's; the next run reads both; another build's file is removed", async () => {
    const dir = join(tempDir('crystal-cc-'), 'compile');
    const first = await mcpRun(dir);
    expect(first.code, first.stderr).toBe(0);
    expect(first.offered).toBe(true);
    const main = cacheName(bundle, 'run');
    const chunk = cacheName(sdkChunk, 'run');
    expect(chunk).not.toBe(main);
    expect(cacheFiles(dir).sort()).toEqual([main, chunk].sort());
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const name of [main, chunk]) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    const kept = statSync(join(dir, main));
    // The chunk's file is gone and another build's is there: the next run writes the chunk's again,
    // removes the other build's, and leaves the main bundle's as it was (V8 took it).
    rmSync(join(dir, chunk));
    const stale = `0123456789abcdef-${process.version}-${process.arch}-run.v8`;
    writeFileSync(join(dir, stale), 'another build', { mode: 0o600 });
    const second = await mcpRun(dir);
    expect(second.code, second.stderr).toBe(0);
    expect(cacheFiles(dir).sort()).toEqual([main, chunk].sort());
    expect(statSync(join(dir, main)).ino).toBe(kept.ino);
    expect(statSync(join(dir, main)).mtimeMs).toBe(kept.mtimeMs);
    // Both are read and accepted: a third run rewrites neither.
    const written = statSync(join(dir, chunk));
    const third = await mcpRun(dir);
    expect(third.code, third.stderr).toBe(0);
    expect(third.offered).toBe(true);
    expect(statSync(join(dir, chunk)).ino).toBe(written.ino);
    expect(statSync(join(dir, chunk)).mtimeMs).toBe(written.mtimeMs);
    // A plain turn (no server) reads no chunk and writes no file for one.
    const plain = join(tempDir('crystal-cc-'), 'compile');
    const fake = await FakeProvider.start({ replies: [{ text: 'done' }] });
    const home = tempHome(fakeConfig(fake.baseUri));
    rememberConfig(home.path);
    try {
      const result = await runCrystal(['run', 'hi'], { home: home.path, env: { CRYSTAL_COMPILE_CACHE: plain } });
      expect(result.code, result.stderr).toBe(0);
    } finally {
      await fake.close();
      home.dispose();
    }
    expect(cacheFiles(plain)).toEqual([main]);
  }, 60_000);

  it('CLI-2 MCP-3 (issue 22) a planted cache of the SDK chunk is never read from a folder others can write, nor from a file others can write (in our own folder it would run)', async () => {
    const name = cacheName(sdkChunk, 'run');
    // The hazard is real for a chunk too: in a folder only we can write, the planted code runs
    // when the server connects.
    const ours = join(tempDir('crystal-cc-'), 'compile');
    mkdirSync(ours, { mode: 0o700 });
    plantEvilCache(join(ours, name), 'PLANTED', sdkChunk);
    const ran = await mcpRun(ours);
    expect(ran.stdout).toBe('PLANTED');

    const shared = join(tempDir('crystal-cc-'), 'compile');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    plantEvilCache(join(shared, name), 'PLANTED', sdkChunk);
    const planted = readFileSync(join(shared, name));
    const safe = await mcpRun(shared);
    expect(safe.code, safe.stderr).toBe(0);
    expect(safe.stdout).not.toContain('PLANTED');
    expect(safe.offered).toBe(true);
    // Not read, and not written either (the folder is not ours alone).
    expect(readFileSync(join(shared, name)).equals(planted)).toBe(true);

    const folder = join(tempDir('crystal-cc-'), 'compile');
    mkdirSync(folder, { mode: 0o700 });
    plantEvilCache(join(folder, name), 'PLANTED', sdkChunk);
    chmodSync(join(folder, name), 0o666);
    const file = await mcpRun(folder);
    expect(file.code, file.stderr).toBe(0);
    expect(file.stdout).not.toContain('PLANTED');
  }, 60_000);
});

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

/** A terminal session on a pty with the cache in `dir`: opened (the cache is worth keeping), then Ctrl+C twice. */
async function terminalSession(dir: string): Promise<string> {
  const fake = await FakeProvider.start({ replies: [], whenExhausted: 'error' });
  const home = tempHome(fakeConfig(fake.baseUri));
  rememberConfig(home.path);
  const workspace = tempDir('crystal-ws-');
  const env = { CRYSTAL_COMPILE_CACHE: dir };
  current = scenarioOf(fake, home, workspace, PtySession.start({ home: home.path, cwd: workspace, env }));
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
  it("issue 22 a terminal session writes one cache file per bundle it read (the terminal bundle, the main bundle, the session's chunk), each named for its own content hash; writing one keeps the other and removes another build's", async () => {
    const dir = join(tempDir('crystal-cc-'), 'compile');
    await terminalSession(dir);
    const main = tuiCacheName(bundle);
    const terminal = tuiCacheName(terminalBundle);
    const session = tuiCacheName(interactiveChunk);
    expect(new Set([main, terminal, session]).size).toBe(3);
    expect(cacheFiles(dir).sort()).toEqual([main, terminal, session].sort());
    for (const name of [main, terminal, session]) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    const kept = statSync(join(dir, terminal));
    // The main bundle's file is gone and another build's is there: the next start writes the main
    // bundle's again, removes the other build's, and leaves the terminal bundle's as it was.
    rmSync(join(dir, main));
    const stale = `0123456789abcdef-${process.version}-${process.arch}-tui.v8`;
    writeFileSync(join(dir, stale), 'another build', { mode: 0o600 });
    await terminalSession(dir);
    expect(cacheFiles(dir).sort()).toEqual([main, terminal, session].sort());
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
