/**
 * Start-up (issue 22 item 4): the Node built-ins `crystal run` loads are the ones its turn uses.
 * The bundle used to load every built-in the engine barrel imports when its modules initialised:
 * node:tls and node:https for an http:// provider, node:zlib for a reply nobody compressed,
 * node:child_process before any command, node:crypto to name a temp file. A preloaded probe
 * writes `process.moduleLoadList` (every built-in Node loaded) when the process exits.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  crystalBin,
  FakeProvider,
  type FakeProviderOptions,
  fakeConfig,
  runCrystal,
  type TempHome,
  tempDir,
  tempHome,
} from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const dist = join(crystalBin, '../../dist');
/** The chunks next to the main bundle (scripts/bundle.mjs): third-party code a plain turn never runs. */
const CHUNKS = ['zod.cjs', 'mcp-sdk.cjs', 'web.cjs', 'tools-vendor.cjs', 'interactive.cjs', 'commands.cjs'];
const everythingRoot = dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json'));
const EVERYTHING = { command: process.execPath, args: [join(everythingRoot, 'dist', 'index.js'), 'stdio'], trust: true };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
/** A fake provider started with `options` and a Home configured for it (`extra` joins the config); both go after the test. */
async function providerAndHome(
  options: FakeProviderOptions,
  extra?: Record<string, unknown>,
): Promise<{ fake: FakeProvider; home: TempHome }> {
  const fake = await FakeProvider.start(options);
  cleanups.push(() => fake.close());
  const home = tempHome(fakeConfig(fake.baseUri, extra));
  cleanups.push(() => home.dispose());
  return { fake, home };
}

/**
 * A session's second `crystal run` under `builtinsProbe`, after a first that answered `first` (the first
 * start of a build validates config.json and writes its memo and code cache, so the second is a warm start).
 */
async function probedSecondRun(args: string[]): Promise<{
  home: TempHome;
  probe: ReturnType<typeof builtinsProbe>;
  result: Awaited<ReturnType<typeof runCrystal>>;
}> {
  const { home } = await providerAndHome({ replies: [{ text: 'first' }, { text: 'second' }] });
  const cwd = tempDir('crystal-ws-');
  const first = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path, cwd });
  expect(first.code, first.stderr).toBe(0);
  const probe = builtinsProbe();
  const result = await runCrystal(args, { home: home.path, cwd, env: probe.env });
  expect(result.code, result.stderr).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'second' });
  return { home, probe, result };
}

/**
 * A preload that writes the public built-ins loaded (`node:x` names) to `report` at exit, and the
 * CLI bundles read (dist/*.cjs, by Node's loader or the bin's) to `bundles`; and whether zod had
 * initialised (its core module sets `globalThis.__zod_globalConfig`) at the first request and at exit.
 */
function builtinsProbe(): {
  env: Record<string, string>;
  loaded: () => string[];
  beforeRequest: () => string[];
  bundles: () => string[];
  zod: () => { atRequest: boolean; atExit: boolean };
  cold: () => { throws: string[]; isoCalls: number; streams: string[] };
} {
  const dir = tempDir('crystal-builtins-probe-');
  const probe = join(dir, 'probe.cjs');
  const report = join(dir, 'loaded.txt');
  const before = join(dir, 'before-request.txt');
  const bundles = join(dir, 'bundles.txt');
  const zod = join(dir, 'zod.json');
  const cold = join(dir, 'cold.json');
  writeFileSync(bundles, '');
  writeFileSync(
    probe,
    [
      "const fs = require('node:fs');",
      // Every synchronous fs call that threw (what and where), and every call of Date's toISOString.
      'const throws = [];',
      "for (const name of Object.keys(fs)) { if (!name.endsWith('Sync') || typeof fs[name] !== 'function') continue; const call = fs[name]; fs[name] = function (...args) { try { return call.apply(this, args); } catch (error) { throws.push(name + ' ' + error.code + ' ' + String(args[0])); throw error; } }; }",
      // Which of process.stdout and process.stderr were made (their getters make them).
      'const streams = [];',
      "for (const name of ['stdout', 'stderr']) { const d = Object.getOwnPropertyDescriptor(process, name); Object.defineProperty(process, name, { configurable: true, enumerable: d.enumerable, get() { if (!streams.includes(name)) streams.push(name); return d.get.call(process); } }); }",
      'let isoCalls = 0;',
      'const toISOString = Date.prototype.toISOString;',
      'Date.prototype.toISOString = function () { isoCalls++; return toISOString.call(this); };',
      `const note = (file) => { if (typeof file === 'string' && /\\/dist\\/[^/]+\\.cjs$/.test(file)) fs.appendFileSync(${JSON.stringify(bundles)}, file.split('/').pop() + '\\n'); };`,
      // The bin reads a bundle through openSync (launch.ts), Node's loader through readFileSync (which opens it itself).
      'const readFileSync = fs.readFileSync;',
      'let reading = false;',
      'fs.readFileSync = function (file, ...rest) { note(file); reading = true; try { return readFileSync.call(this, file, ...rest); } finally { reading = false; } };',
      'const openSync = fs.openSync;',
      'fs.openSync = function (file, ...rest) { if (!reading) note(file); return openSync.call(this, file, ...rest); };',
      // fs.promises is patched when first asked for, so the probe itself does not load node:fs/promises.
      "const lazy = Object.getOwnPropertyDescriptor(fs, 'promises');",
      'let patched = false;',
      "Object.defineProperty(fs, 'promises', { configurable: true, enumerable: true, get() {",
      '  const fsp = lazy.get.call(fs);',
      '  if (!patched) { patched = true; const readFile = fsp.readFile; fsp.readFile = function (file, ...rest) { note(file); return readFile.call(this, file, ...rest); }; const open = fsp.open; fsp.open = function (file, ...rest) { note(file); return open.call(this, file, ...rest); }; }',
      '  return fsp;',
      '} });',
      "const names = () => process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join('\\n');",
      // What was loaded when the first HTTP request was written (diagnostics_channel is loaded at start-up already).
      "const request = require('node:diagnostics_channel').channel('http.client.request.start');",
      'const zodAt = {};',
      'const zodNow = () => globalThis.__zod_globalConfig !== undefined;',
      `const first = () => { request.unsubscribe(first); zodAt.atRequest = zodNow(); fs.writeFileSync(${JSON.stringify(before)}, names()); };`,
      'request.subscribe(first);',
      `process.on('exit', () => { fs.writeFileSync(${JSON.stringify(report)}, names()); zodAt.atExit = zodNow(); fs.writeFileSync(${JSON.stringify(zod)}, JSON.stringify(zodAt)); fs.writeFileSync(${JSON.stringify(cold)}, JSON.stringify({ throws, isoCalls, streams })); });`,
      '',
    ].join('\n'),
  );
  return {
    env: { NODE_OPTIONS: `--require ${probe}` },
    loaded: () => readFileSync(report, 'utf8').split('\n'),
    beforeRequest: () => readFileSync(before, 'utf8').split('\n'),
    bundles: () => readFileSync(bundles, 'utf8').split('\n').filter(Boolean),
    zod: () => JSON.parse(readFileSync(zod, 'utf8')) as { atRequest: boolean; atExit: boolean },
    cold: () => JSON.parse(readFileSync(cold, 'utf8')) as { throws: string[]; isoCalls: number; streams: string[] },
  };
}

const NETWORK_AND_PROCESS = ['tls', 'https', '_tls_wrap', 'zlib', 'child_process', 'dgram'];

describe('CLI-2 crystal run loads only the built-ins its turn uses (issue 22 item 4)', () => {
  it("CLI-2 a turn that only talks to an http:// provider never loads node:tls, node:https, node:zlib, node:child_process, node:crypto, node:perf_hooks or Node's rimraf, nor node:fs/promises or parseArgs before its request", async () => {
    const { home } = await providerAndHome({ replies: [{ text: 'done' }] });
    const probe = builtinsProbe();
    const result = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path, env: probe.env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'done' });
    const loaded = probe.loaded();
    // The probe sees what was loaded: the request went over node:http.
    expect(loaded).toContain('http');
    // perf_hooks: the stream watchdog and the read window time themselves with process.uptime (monotonicMs);
    // internal/fs/rimraf: the session lock removes its temp file with unlinkSync, not rmSync.
    for (const name of [...NETWORK_AND_PROCESS, 'crypto', 'perf_hooks', 'internal/fs/rimraf'])
      expect(loaded, `node:${name} was loaded`).not.toContain(name);
    // node:fs/promises (~1.5 ms) is not loaded before the first request: a turn that mentions no
    // file and finds no tool set reads nothing through it (the daily checkpoint prune may load it later).
    const beforeRequest = probe.beforeRequest();
    expect(beforeRequest).toContain('_http_client');
    expect(beforeRequest, 'node:fs/promises was loaded before the first request').not.toContain('internal/fs/promises');
    // `--format json hi` is read without node:util's parseArgs (~0.5 ms at its first call).
    expect(beforeRequest, "node:util's parseArgs was loaded before the first request").not.toContain(
      'internal/util/parse_args/parse_args',
    );
  }, 30_000);

  it("CLI-2 (issue 22) a warm plain turn pays no first-use costs it can avoid: node:module is never loaded (~0.4 ms with its source-map module), no missing optional file is looked for by catching an exception (~15 us each, the first ~0.3 ms), Date's toISOString is never called (0.6-1.6 ms at its first call), and neither process.stdout nor process.stderr is made (~1.2 ms for pipes)", async () => {
    const { home, probe } = await probedSecondRun(['run', '--format', 'json', 'hi again']);
    const loaded = probe.loaded();
    expect(loaded).toContain('http');
    for (const name of ['module', 'internal/source_map/source_map'])
      expect(loaded, `node:${name} was loaded`).not.toContain(name);
    // The turn looked for instructions, settings, .mcp.json, permissions.json, skills, a sandbox on PATH...: none of it threw.
    // And its reply went to descriptor 1 without a process.stdout (~1 ms for a pipe) or a process.stderr made for it.
    expect(probe.cold()).toEqual({ throws: [], isoCalls: 0, streams: [] });
    // What it wrote carries its times, written by isoTime.
    const sessions = readdirSync(join(home.path, 'sessions')).filter((name) => name.endsWith('.json'));
    const head = JSON.parse(readFileSync(join(home.path, 'sessions', sessions[0] as string), 'utf8')) as { updatedUtc: string };
    expect(head.updatedUtc).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }, 30_000);

  it("CLI-2 (issue 22) zod initialises at the first schema built, not at start: with its configuration remembered, crystal run makes its request before zod loads; a bad tool argument then gets zod's English message", async () => {
    const { fake, home } = await providerAndHome({
      replies: [
        { text: 'first' },
        { toolCalls: [{ id: 'r', name: 'read', arguments: { path: 'notes.md', offset: 0 } }] },
        { text: 'read it' },
      ],
      whenExhausted: 'error',
    });
    const cwd = tempDir('crystal-ws-');
    writeFileSync(join(cwd, 'notes.md'), 'one\n');
    // The first start of a build validates config.json (zod, before the request) and remembers it.
    const first = builtinsProbe();
    const validated = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path, cwd, env: first.env });
    expect(validated.code, validated.stderr).toBe(0);
    expect(first.zod()).toEqual({ atRequest: true, atExit: true });
    const probe = builtinsProbe();
    const result = await runCrystal(['run', '--format', 'json', 'read the notes'], { home: home.path, cwd, env: probe.env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'read it' });
    expect(probe.zod()).toEqual({ atRequest: false, atExit: true });
    // The read's arguments were checked by its schema, built then, with zod's English messages.
    const toolResult = JSON.stringify(fake.requests[2]?.body);
    expect(toolResult).toContain("Invalid argument 'offset' for 'read': expected number to be >=1");
  }, 30_000);

  it("CLI-2 (issue 22) crystal run reads only the main bundle: never the terminal bundle (dist/terminal.cjs) nor a chunk next to it (zod, the MCP SDK, the Web host, the tools' libraries, the terminal session, the other commands)", async () => {
    // The third-party code a plain turn never runs is in chunks of its own, not in the main bundle.
    for (const chunk of CHUNKS) expect(existsSync(join(dist, chunk)), `dist/${chunk}`).toBe(true);
    const { home } = await providerAndHome({ replies: [{ text: 'first' }, { text: 'done' }] });
    // The first start of this build in the Home validates config.json with zod (its chunk) and
    // remembers the result; the start after it, a user's every day, validates nothing.
    expect((await runCrystal(['run', 'hi'], { home: home.path })).code).toBe(0);
    const probe = builtinsProbe();
    const result = await runCrystal(['run', '--format', 'json', 'hi'], { home: home.path, env: probe.env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'done' });
    // The probe sees the bundles read: the main bundle was, once; the terminal bundle and the chunks never.
    expect(probe.bundles().filter((name) => name !== 'fast-path.cjs' && name !== 'launch.cjs')).toEqual(['crystal.cjs']);
  }, 30_000);

  for (const cache of ['on', 'off'] as const) {
    it(`CLI-1 (issue 22, code cache ${cache}) an install that lost a chunk (dist/zod.cjs, read when config.json is first validated) says so in one line that names the file and the fix, exit 1`, async () => {
      const copy = tempDir('crystal-partial-install-');
      cpSync(join(crystalBin, '..'), join(copy, 'bin'), { recursive: true });
      cpSync(dist, join(copy, 'dist'), { recursive: true });
      rmSync(join(copy, 'dist', 'zod.cjs'));
      const { fake, home } = await providerAndHome({ replies: [{ text: 'never sent' }] });
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: home.path,
        CRYSTAL_HOME: home.path,
        CRYSTAL_COMPILE_CACHE: cache === 'off' ? 'off' : join(tempDir('crystal-cc-'), 'compile'),
      };
      const child = spawn(process.execPath, [join(copy, 'bin', 'crystal.js'), 'run', 'hi'], { cwd: tempDir('crystal-ws-'), env });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(1);
      expect(stderr).toBe(
        `crystal: this installation is incomplete: ${join(copy, 'dist', 'zod.cjs')} is missing (the command reads it when it first needs it). Install Crystal Code again (in a checkout: npm run build).\n`,
      );
      expect(fake.requests).toHaveLength(0);
    }, 30_000);
  }

  for (const cache of ['on', 'off'] as const) {
    it(`CLI-2 MCP-3 (issue 22, code cache ${cache}${cache === 'off' ? ": Node's own require, as on Node 22" : ''}) crystal run with an MCP server reads the MCP SDK chunk (dist/mcp-sdk.cjs) once, no other but zod's for the new config.json, and the server's tool works`, async () => {
      const { fake, home } = await providerAndHome(
        {
          replies: [
            { toolCalls: [{ id: 'e', name: 'mcp__everything__echo', arguments: { message: 'from the chunk' } }] },
            { text: 'echoed' },
          ],
          whenExhausted: 'error',
        },
        { mcpServers: { everything: EVERYTHING } },
      );
      const probe = builtinsProbe();
      const env = { ...probe.env, CRYSTAL_COMPILE_CACHE: cache === 'off' ? 'off' : join(tempDir('crystal-cc-'), 'compile') };
      const result = await runCrystal(['run', '--format', 'json', 'use the MCP tool'], { home: home.path, env });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'echoed' });
      // The tool was offered with its schema (the SDK's zod and ajv ran) and called.
      const tools = (fake.requests[0]?.body as { tools: { function: { name: string; parameters: unknown } }[] }).tools;
      expect(tools.find((t) => t.function.name === 'mcp__everything__echo')?.function.parameters).toMatchObject({
        type: 'object',
        properties: { message: { type: 'string' } },
      });
      expect(JSON.stringify(fake.requests[1]?.body)).toContain('Echo: from the chunk');
      // zod's chunk validated the new config.json; the SDK has its own zod.
      expect(probe.bundles().filter((name) => name !== 'fast-path.cjs' && name !== 'launch.cjs')).toEqual([
        'crystal.cjs',
        'zod.cjs',
        'mcp-sdk.cjs',
      ]);
    }, 30_000);
  }

  it('CLI-2 a second turn of the session (a context to record) still loads no node:tls, node:https, node:zlib or node:child_process', async () => {
    const { home, probe, result: second } = await probedSecondRun(['run', '--continue', '--format', 'json', 'again']);
    const loaded = probe.loaded();
    expect(loaded).toContain('http');
    for (const name of NETWORK_AND_PROCESS) expect(loaded, `node:${name} was loaded`).not.toContain(name);
    // Both turns were recorded for rewind, the second with the first turn's context.
    const { sessionId } = JSON.parse(second.stdout) as { sessionId: string };
    const log = JSON.parse(readFileSync(join(home.path, 'checkpoints', 'sessions', `${sessionId}.json`), 'utf8')) as {
      records: { kind: string; context?: string }[];
    };
    const turns = log.records.filter((record) => record.kind === 'turn');
    expect(turns).toHaveLength(2);
    expect(turns[1]?.context).toMatch(/^[0-9a-f]{64}$/);
    expect(turns[1]?.context).not.toBe(turns[0]?.context);
  }, 30_000);

  for (const cache of ['on', 'off'] as const) {
    it(`CLI-2 (issue 22, code cache ${cache}) a turn that writes and lists files reads the tools' chunk (dist/tools-vendor.cjs: diff, picomatch) once, then, and the tools work`, async () => {
      const { fake, home } = await providerAndHome({
        replies: [
          { toolCalls: [{ id: 'w', name: 'write', arguments: { path: 'notes/a.md', contents: 'one\n' } }] },
          { toolCalls: [{ id: 'g', name: 'glob', arguments: { pattern: '**/*.md' } }] },
          { text: 'listed' },
        ],
        whenExhausted: 'error',
      });
      const cwd = tempDir('crystal-ws-');
      writeFileSync(join(cwd, '.gitignore'), 'ignored.md\n');
      writeFileSync(join(cwd, 'ignored.md'), 'hidden\n');
      const probe = builtinsProbe();
      const env = { ...probe.env, CRYSTAL_COMPILE_CACHE: cache === 'off' ? 'off' : join(tempDir('crystal-cc-'), 'compile') };
      const result = await runCrystal(['run', '--approval', 'full', '--format', 'json', 'write and list'], {
        home: home.path,
        cwd,
        env,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'listed' });
      expect(readFileSync(join(cwd, 'notes/a.md'), 'utf8')).toBe('one\n');
      const listed = JSON.stringify(fake.requests[2]?.body);
      expect(listed).toContain('notes/a.md');
      expect(listed).not.toContain('ignored.md');
      // zod's chunk validated the new config.json and the tools' arguments.
      expect(probe.bundles().filter((name) => name !== 'fast-path.cjs' && name !== 'launch.cjs')).toEqual([
        'crystal.cjs',
        'zod.cjs',
        'tools-vendor.cjs',
      ]);
    }, 30_000);
  }

  it('CLI-2 a turn that runs a command loads node:child_process then (the lazy load still runs bash)', async () => {
    const { fake, home } = await providerAndHome({
      replies: [{ toolCalls: [{ name: 'bash', arguments: { command: 'echo lazy-$((40+2))' } }] }, { text: 'ran it' }],
    });
    const probe = builtinsProbe();
    const result = await runCrystal(['run', '--approval', 'full', '--format', 'json', 'run it'], {
      home: home.path,
      env: { ...probe.env, CRYSTAL_BWRAP: '' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ stopReason: 'completed', text: 'ran it' });
    expect(JSON.stringify(fake.requests.at(-1)?.body)).toContain('lazy-42');
    expect(probe.loaded()).toContain('child_process');
  }, 30_000);
});
