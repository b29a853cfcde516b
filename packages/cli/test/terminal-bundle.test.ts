/**
 * The terminal-first bundle (issue 22: TUI ready within 1.5x a bare Node): a terminal session
 * starts from `dist/terminal.cjs` (@crystal/tui and the first frame's code), which paints and
 * takes keys before the main bundle `dist/crystal.cjs` is even read, then loads it and hands the
 * frame over. To hold a start at a known point, a preloaded probe records every bundle read and
 * holds the read of the main bundle until the test creates a file: everything typed before that
 * is typed before the main bundle exists in the process.
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { crystalBin, tempDir } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { PtySession, type Scenario, scenario, userTexts } from './pty-harness.js';

/** A preload that logs the bundles and chunks read (in order) and holds the main bundle's read until `release()`. */
function bundleProbe(hold: boolean): {
  env: Record<string, string>;
  reads: () => string[];
  asked: () => boolean;
  release: () => void;
} {
  const dir = tempDir('crystal-bundle-probe-');
  const probe = join(dir, 'probe.cjs');
  const log = join(dir, 'reads.txt');
  const askedFile = join(dir, 'asked');
  const go = join(dir, 'go');
  writeFileSync(log, '');
  writeFileSync(
    probe,
    `
const fs = require('node:fs');
// Every bundle and chunk in dist/ but the bin's own two files (launch.cjs, fast-path.cjs).
const bundle = (file) => { const name = typeof file === 'string' ? /\\/dist\\/([\\w-]+\\.cjs)$/.exec(file)?.[1] : undefined; return name === 'launch.cjs' || name === 'fast-path.cjs' ? undefined : name; };
// The bin opens a bundle with openSync (launch.ts), Node's loader through readFileSync (which opens it itself).
const readFileSync = fs.readFileSync;
let reading = false;
fs.readFileSync = function (file, ...rest) {
  const name = bundle(file);
  if (name) fs.appendFileSync(${JSON.stringify(log)}, name + '\\n');
  reading = true;
  try { return readFileSync.call(this, file, ...rest); } finally { reading = false; }
};
const opened = new Map();
const openSync = fs.openSync;
fs.openSync = function (file, ...rest) {
  const name = reading ? undefined : bundle(file);
  if (name) fs.appendFileSync(${JSON.stringify(log)}, name + '\\n');
  const fd = openSync.call(this, file, ...rest);
  if (name) opened.set(fd, name);
  return fd;
};
const closeSync = fs.closeSync;
fs.closeSync = function (fd, ...rest) {
  opened.delete(fd);
  return closeSync.call(this, fd, ...rest);
};
// ... and reads the main bundle off the main thread with fs.read: the first such read is held.
const read = fs.read;
let held = false;
fs.read = function (fd, ...rest) {
  if (${hold} && !held && opened.get(fd) === 'crystal.cjs') {
    held = true;
    fs.writeFileSync(${JSON.stringify(askedFile)}, '');
    const wait = () => (fs.existsSync(${JSON.stringify(go)}) ? read.call(this, fd, ...rest) : setTimeout(wait, 5));
    wait();
    return;
  }
  return read.call(this, fd, ...rest);
};
`,
  );
  return {
    env: { NODE_OPTIONS: `--require ${probe}` },
    reads: () => readFileSync(log, 'utf8').split('\n').filter(Boolean),
    asked: () => existsSync(askedFile),
    release: () => writeFileSync(go, ''),
  };
}

/** The scenario's dispose, for a session started again on its Home (the first one has exited). */
function disposeWith(scenario: Scenario, session: PtySession): () => Promise<void> {
  return async () => {
    session.kill();
    await session.exited;
    await scenario.dispose();
  };
}

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('issue 22: the terminal starts from its own small bundle', () => {
  for (const view of ['inline', 'fullscreen'] as const) {
    it(`TUI-1 CLI-1 (issue 22, ${view}) keys typed before the main bundle is read are all kept, in order, and Enter sends once`, async () => {
      const probe = bundleProbe(true);
      current = await scenario({ replies: [{ text: 'Reply after the main bundle.' }], args: [`--${view}`], env: probe.env });
      const { session, fake } = current;
      const first = await session.waitFor('Type a message');
      expect(first).toMatch(/Work │ Default │ fake\/fake-model │/);
      await session.type('typed before');
      await session.waitFor('Work › typed before');
      // Still held: the frame and the echo came from the terminal bundle alone.
      expect(probe.asked()).toBe(true);
      expect(probe.reads()).toEqual(['terminal.cjs', 'crystal.cjs']);
      expect(fake.requests).toHaveLength(0);
      session.write(' the load');
      probe.release();
      await session.type(', and after');
      session.write('\r');
      await session.waitFor('Reply after the main bundle.');
      // One welcome: the main bundle took the frame over instead of painting its own.
      expect(session.bufferLines().filter((l) => l.includes('Working in'))).toHaveLength(1);
      expect(userTexts(fake).filter((t) => t.length > 0)).toEqual([['typed before the load, and after']]);
      // Each bundle was read once, then the session's chunk, and zod's when the new config.json was validated.
      expect(probe.reads()).toEqual(['terminal.cjs', 'crystal.cjs', 'interactive.cjs', 'zod.cjs']);
    });
  }

  for (const args of [[], ['--continue']]) {
    it(`TUI-2 (issue 22${args.length ? ', --continue' : ''}) the terminal module exists once: a reply the main bundle streams is laid out as Markdown by the terminal bundle's lexer`, async () => {
      // A first session, so that --continue has one to open (it paints no early frame).
      current = await scenario({ replies: [{ text: 'plain first' }, { text: 'A **loud** word and `code`.' }] });
      let { session } = current;
      const { home, workspace } = current;
      if (args.length > 0) {
        await session.waitFor('CTX 0%');
        await session.type('one');
        session.write('\r');
        await session.waitFor('plain first');
        await session.waitIdle();
        session.write('\x03');
        await session.waitFor('Press Ctrl+C again to exit.');
        session.write('\x03');
        await session.exited;
        session = PtySession.start({ home: home.path, cwd: workspace, args });
        current = { ...current, session, dispose: disposeWith(current, session) };
        await session.waitFor('plain first');
      } else {
        await session.waitFor('CTX 0%');
        await session.type('one');
        session.write('\r');
        await session.waitFor('plain first');
      }
      await session.type('two');
      session.write('\r');
      const screen = await session.waitFor('A loud word and code.');
      expect(screen).not.toContain('**loud**');
      const loud = session.find('loud') as { row: number; col: number };
      expect(session.isBold(loud.row, loud.col)).toBe(true);
    });
  }

  it('TUI-2 (issue 22) with CRYSTAL_COMPILE_CACHE=off Node requires both bundles (as on Node 22): one terminal module, keys kept, Markdown laid out', async () => {
    current = await scenario({ replies: [{ text: 'A **loud** word.' }], env: { CRYSTAL_COMPILE_CACHE: 'off' } });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    await session.type('no cache');
    session.write('\r');
    const screen = await session.waitFor('A loud word.');
    expect(screen).not.toContain('**loud**');
    const loud = session.find('loud') as { row: number; col: number };
    expect(session.isBold(loud.row, loud.col)).toBe(true);
    expect(session.bufferLines().filter((l) => l.includes('Working in'))).toHaveLength(1);
    expect(userTexts(fake).filter((t) => t.length > 0)).toEqual([['no cache']]);
  });

  for (const cache of ['on', 'off'] as const) {
    it(`TUI-2 MCP-3 (issue 22, code cache ${cache}) a terminal session with an MCP server reads the terminal bundle, the main bundle, the session's chunk and then the SDK chunk (dist/mcp-sdk.cjs), each once, and the server's tool answers`, async () => {
      const everything = join(
        dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
        'dist',
        'index.js',
      );
      const probe = bundleProbe(false);
      current = await scenario({
        replies: [
          { toolCalls: [{ id: 'e', name: 'mcp__everything__echo', arguments: { message: 'from the chunk' } }] },
          { text: 'The echo came back.' },
        ],
        config: { mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'], trust: true } } },
        env: { ...probe.env, ...(cache === 'off' ? { CRYSTAL_COMPILE_CACHE: 'off' } : {}) },
      });
      const { session, fake } = current;
      await session.waitFor('Type a message');
      // The server comes up in the background; /mcp says when.
      let screen = '';
      for (let i = 0; i < 60 && !/everything {2}ready/.test(screen); i++) {
        await session.type('/mcp');
        session.write('\r');
        screen = await session.waitFor(/everything {2}ready/, 1000).catch(() => screen);
      }
      expect(screen).toMatch(/everything {2}ready {2}stdio/);
      await session.type('echo it');
      session.write('\r');
      await session.waitFor('The echo came back.');
      expect(JSON.stringify(fake.requests[1]?.body)).toContain('Echo: from the chunk');
      // zod's chunk validated the new config.json; the SDK has its own zod.
      expect(probe.reads()).toEqual(['terminal.cjs', 'crystal.cjs', 'interactive.cjs', 'zod.cjs', 'mcp-sdk.cjs']);
    });
  }

  it('CLI-1 (issue 22) a main bundle that cannot be compiled (a broken install) gives the terminal back before its message, exit 1', async () => {
    // A copy of the bin and its bundles whose main bundle is damaged.
    const copy = tempDir('crystal-broken-install-');
    cpSync(join(crystalBin, '..'), join(copy, 'bin'), { recursive: true });
    mkdirSync(join(copy, 'dist'));
    for (const name of ['fast-path.cjs', 'launch.cjs', 'terminal.cjs'])
      copyFileSync(join(crystalBin, '../../dist', name), join(copy, 'dist', name));
    writeFileSync(join(copy, 'dist', 'crystal.cjs'), 'this is not JavaScript (\n');
    current = await scenario({ replies: [] });
    const { home, workspace } = current;
    current.session.kill();
    await current.session.exited;
    const session = PtySession.start({ bin: join(copy, 'bin', 'crystal.js'), home: home.path, cwd: workspace });
    const { exitCode } = await session.exited;
    expect(exitCode).toBe(1);
    // The terminal bundle painted, then took its frame back; the message is what is left.
    expect(session.output).toContain('Working in');
    const screen = session.lines().join('\n');
    expect(screen).not.toContain('Type a message');
    expect(screen).toMatch(/crystal: internal error: \S*crystal\.cjs[\s\S]*SyntaxError/);
  });

  it('CLI-1 (issue 22) a bad flag on a terminal is one line from the main bundle, exit 1, and no frame', async () => {
    current = await scenario({ replies: [], args: ['--no-such-flag'] });
    const { session } = current;
    const { exitCode } = await session.exited;
    expect(exitCode).toBe(1);
    expect(session.output).not.toContain('\x1b[?2026h');
    expect(session.output.trim().split(/\r?\n/)).toEqual([
      expect.stringMatching(/^crystal: Unknown option '--no-such-flag'\..*Run 'crystal --help' for the options\.$/),
    ]);
  });

  it('CLI-1 (issue 22) a start that cannot paint early (--continue) still starts from the terminal bundle, each bundle read once, and shows the transcript', async () => {
    const probe = bundleProbe(false);
    current = await scenario({ replies: [{ text: 'first' }] });
    const { session, home, workspace, fake } = current;
    await session.waitFor('Type a message');
    await session.type('hello');
    session.write('\r');
    await session.waitFor('first');
    await session.waitIdle();
    session.write('\x03');
    await session.waitFor('Press Ctrl+C again to exit.');
    session.write('\x03');
    await session.exited;
    const resumed = PtySession.start({ home: home.path, cwd: workspace, args: ['--continue'], env: probe.env });
    try {
      await resumed.waitFor('Type a message');
      await resumed.waitFor('first');
      // The configuration was remembered by the first start: no zod.
      expect(probe.reads()).toEqual(['terminal.cjs', 'crystal.cjs', 'interactive.cjs']);
      expect(fake.requests).toHaveLength(1);
    } finally {
      resumed.kill();
      await resumed.exited;
    }
  });
});
