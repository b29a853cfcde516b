import { cpSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  discoverToolSets,
  type ExternalToolContext,
  externalToolFacts,
  externalToolsFor,
  homeToolsDir,
  loadExternalTools,
  projectToolsDir,
} from '../src/external-tools/index.js';

function dirs(): { home: string; ws: string } {
  const base = mkdtempSync(join(tmpdir(), 'crystal-discover-'));
  const home = join(base, 'home');
  const ws = join(base, 'ws');
  mkdirSync(home);
  mkdirSync(ws);
  return { home, ws };
}

function writeSet(root: string, name: string, manifest: unknown): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'tools.json');
  writeFileSync(file, typeof manifest === 'string' ? manifest : JSON.stringify(manifest, null, 2));
  return file;
}

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} tool`,
  schema: { type: 'object', properties: {} },
  ...extra,
});

const context = (ws: string): ExternalToolContext => ({
  workspace: ws,
  sessionId: () => 's1',
  approvalMode: () => 'default',
  imageInput: false,
  projectCode: { home: ws, workspace: ws, granted: true },
});

describe('external tool discovery', () => {
  it('TOOLS-4 finds home and project sets; a project set replaces the home set of the same name', async () => {
    const { home, ws } = dirs();
    writeSet(homeToolsDir(home), 'shared', { runner: 'exec', command: ['echo'], tools: [tool('from_home')] });
    writeSet(homeToolsDir(home), 'homeonly', { runner: 'exec', command: ['echo'], tools: [tool('home_tool')] });
    writeSet(projectToolsDir(ws), 'shared', { runner: 'exec', command: ['echo'], tools: [tool('from_project')] });
    const discovery = await discoverToolSets({ home, workspace: ws });
    expect(discovery.notes).toEqual([]);
    expect(discovery.sets.map((s) => [s.name, s.source])).toEqual([
      ['homeonly', 'home'],
      ['shared', 'project'],
    ]);
    const { tools } = await loadExternalTools(discovery, context(ws));
    expect(tools.map((t) => t.name)).toEqual(['home_tool', 'from_project']);
  });

  it('TOOLS-4 an invalid project set still replaces the home set, and is skipped with a note', async () => {
    const { home, ws } = dirs();
    writeSet(homeToolsDir(home), 'shared', { runner: 'exec', command: ['echo'], tools: [tool('from_home')] });
    const file = writeSet(projectToolsDir(ws), 'shared', { runner: 'exec', command: ['echo'], tools: [tool('bad name')] });
    const discovery = await discoverToolSets({ home, workspace: ws });
    expect(discovery.sets).toEqual([]);
    expect(discovery.notes).toHaveLength(1);
    expect(discovery.notes[0]).toContain(file);
    expect(discovery.notes[0]).toContain('tools.0.name: expected a tool name');
    expect(discovery.notes[0]).toContain('the project tool set shared was skipped');
  });

  it('TOOLS-4 enabled:false omits a set silently, even when the rest is invalid', async () => {
    const { home, ws } = dirs();
    writeSet(homeToolsDir(home), 'off', { runner: 'exec', enabled: false, command: ['echo'], tools: [tool('off_tool')] });
    writeSet(projectToolsDir(ws), 'offbroken', { enabled: false, runner: 'nonsense' });
    expect(await discoverToolSets({ home, workspace: ws })).toEqual({ sets: [], notes: [] });
  });

  it('TOOLS-4 an invalid manifest names the file, the line, the key path and what is expected; start-up goes on', async () => {
    const { home, ws } = dirs();
    const cases: Array<[string, unknown, RegExp]> = [
      ['syntax', '{ "runner": "exec", ', /tools\.json:1: is not valid JSON/],
      ['runner', { runner: 'dotnet' }, /runner: expected "exec" or "plugin"/],
      [
        'timeout',
        { runner: 'exec', command: ['x'], timeoutSeconds: 0, tools: [tool('t')] },
        /:\d+: timeoutSeconds: expected a positive whole number of seconds or "unlimited"/,
      ],
      [
        'timeoutbig',
        { runner: 'exec', command: ['x'], timeoutSeconds: 4294967, tools: [tool('t')] },
        /timeoutSeconds: expected at most 2147483 seconds/,
      ],
      [
        'catalogs',
        { runner: 'exec', command: ['x'], catalogs: [], tools: [tool('t')] },
        /catalogs: expected a non-empty list of "plan" and\/or "work"/,
      ],
      [
        'catalogsbad',
        { runner: 'exec', command: ['x'], catalogs: ['review'], tools: [tool('t')] },
        /catalogs\.0: expected "plan" or "work"/,
      ],
      ['nocommand', { runner: 'exec', tools: [tool('t')] }, /tools\.0\.command: expected a command/],
      [
        'noschema',
        { runner: 'exec', command: ['x'], tools: [{ name: 't', description: 'd' }] },
        /tools\.0\.schema: expected an object/,
      ],
      [
        'mixed',
        { runner: 'exec', command: ['x'], description: 'd', tools: [tool('t')] },
        /description: the shorthand form .* cannot be mixed/,
      ],
      ['dup', { runner: 'exec', command: ['x'], tools: [tool('t'), tool('t')] }, /tools\.1\.name: the tool name t is used twice/],
      [
        'output',
        { runner: 'exec', command: ['x'], tools: [tool('t', { output: 'html' })] },
        /tools\.0\.output: expected "text" or "content"/,
      ],
      ['plugin', { runner: 'plugin' }, /module: expected a string/],
      ['shorthand.dots', { runner: 'exec', command: ['x'], description: 'd', schema: {} }, /shorthand\.dots is not a tool name/],
    ];
    for (const [name, manifest] of cases) writeSet(homeToolsDir(home), name, manifest);
    mkdirSync(join(homeToolsDir(home), 'empty'));
    writeSet(homeToolsDir(home), '9lives', { runner: 'exec', command: ['x'], tools: [tool('nine')] });
    writeSet(homeToolsDir(home), '9off', { runner: 'exec', enabled: false });
    writeSet(homeToolsDir(home), 'good', { runner: 'exec', command: ['echo'], tools: [tool('good_tool')] });
    const discovery = await discoverToolSets({ home, workspace: ws });
    expect(discovery.sets.map((s) => s.name)).toEqual(['good']);
    for (const [name, , pattern] of cases) {
      const note = discovery.notes.find((n) => n.includes(join(homeToolsDir(home), name, 'tools.json')));
      expect(note, name).toMatch(pattern);
      expect(note, name).toContain(`the home tool set ${name} was skipped`);
    }
    expect(discovery.notes.find((n) => n.includes(join('tools', 'empty', 'tools.json')))).toMatch(/expected a tools\.json file/);
    expect(discovery.notes.find((n) => n.includes(join('tools', '9lives')))).toMatch(
      /directory name has 1-64 characters, a letter first/,
    );
    expect(discovery.notes.some((n) => n.includes('9off'))).toBe(false);
    expect(discovery.notes).toHaveLength(cases.length + 2);
  });

  it('TOOLS-4 the shorthand form names its one tool after the directory and applies the defaults', async () => {
    const { home, ws } = dirs();
    writeSet(homeToolsDir(home), 'weather', {
      runner: 'exec',
      command: ['node', 'weather.mjs'],
      description: 'Weather',
      schema: { type: 'object' },
    });
    const discovery = await discoverToolSets({ home, workspace: ws });
    const set = discovery.sets[0];
    expect(set?.manifest).toEqual({
      runner: 'exec',
      timeoutSeconds: 120,
      tools: [
        {
          name: 'weather',
          description: 'Weather',
          parameters: { type: 'object' },
          command: ['node', 'weather.mjs'],
          stdin: true,
          argv: [],
          pathArguments: [],
          output: 'text',
          approval: 'inherit',
          catalogs: ['plan', 'work'],
        },
      ],
    });
  });

  it('BASH-3 an exec set keeps its own timeoutSeconds: 120 by default, "unlimited" allowed', async () => {
    const { home, ws } = dirs();
    writeSet(homeToolsDir(home), 'a', { runner: 'exec', command: ['x'], tools: [tool('a1')] });
    writeSet(homeToolsDir(home), 'b', { runner: 'exec', command: ['x'], timeoutSeconds: 'unlimited', tools: [tool('b1')] });
    writeSet(homeToolsDir(home), 'c', { runner: 'exec', command: ['x'], timeoutSeconds: 7, tools: [tool('c1')] });
    const discovery = await discoverToolSets({ home, workspace: ws });
    expect(discovery.sets.map((s) => s.manifest.timeoutSeconds)).toEqual([120, null, 7]);
  });

  it('TOOLS-4 catalogs: a tool value replaces the set value; the catalog filter follows it', async () => {
    const { home, ws } = dirs();
    writeSet(homeToolsDir(home), 'set', {
      runner: 'exec',
      command: ['x'],
      catalogs: ['work'],
      tools: [tool('work_only'), tool('both', { catalogs: ['plan', 'work'] }), tool('plan_only', { catalogs: ['plan'] })],
    });
    const { tools } = await loadExternalTools(await discoverToolSets({ home, workspace: ws }), context(ws));
    expect(externalToolsFor(tools, 'plan').map((t) => t.name)).toEqual(['both', 'plan_only']);
    expect(externalToolsFor(tools, 'work').map((t) => t.name)).toEqual(['work_only', 'both']);
  });

  it('TOOLS-4 a built-in name wins (registered this turn or not) and a later duplicate is dropped, each with a note', async () => {
    const { home, ws } = dirs();
    writeSet(homeToolsDir(home), 'alpha', {
      runner: 'exec',
      command: ['x'],
      tools: [tool('bash'), tool('view_image'), tool('describe_thing'), tool('fmt')],
    });
    writeSet(homeToolsDir(home), 'beta', { runner: 'exec', command: ['x'], tools: [tool('fmt'), tool('lint')] });
    const { tools, notes } = await loadExternalTools(await discoverToolSets({ home, workspace: ws }), context(ws), [
      'describe_thing',
    ]);
    expect(tools.map((t) => `${t.set}/${t.name}`)).toEqual(['alpha/fmt', 'beta/lint']);
    expect(notes).toEqual([
      'The tool bash of the home tool set alpha was left out: a built-in tool already has that name.',
      'The tool view_image of the home tool set alpha was left out: a built-in tool already has that name.',
      'The tool describe_thing of the home tool set alpha was left out: a built-in tool already has that name.',
      'The tool fmt of the home tool set beta was left out: the tool set alpha already has that name.',
    ]);
  });

  it('TOOLS-4 an author always is honoured for home sets and ignored for project sets by default', async () => {
    const { home, ws } = dirs();
    writeSet(homeToolsDir(home), 'h', {
      runner: 'exec',
      command: ['x'],
      approval: 'always',
      tools: [tool('h1'), tool('h2', { approval: 'inherit' })],
    });
    writeSet(projectToolsDir(ws), 'p', {
      runner: 'exec',
      command: ['x'],
      tools: [tool('p1', { approval: 'always', pathArguments: ['file'] })],
    });
    const facts = externalToolFacts(
      (await loadExternalTools(await discoverToolSets({ home, workspace: ws }), context(ws))).tools,
    );
    expect(facts('h1')).toEqual({ pathArguments: [], automatic: true });
    expect(facts('h2')).toEqual({ pathArguments: [], automatic: false });
    expect(facts('p1')).toEqual({ pathArguments: ['file'], automatic: false });
    const trusting = await discoverToolSets({ home, workspace: ws, approvalSources: { project: 'author', home: 'host' } });
    const trusted = externalToolFacts((await loadExternalTools(trusting, context(ws))).tools);
    expect(trusted('p1')?.automatic).toBe(true);
    expect(trusted('h1')?.automatic).toBe(false);
  });

  it("TOOLS-4 SEC-1 a workspace whose .crystal is Home itself (or a link to it) has home sets, even untrusted; a copy of Home's sets in an untrusted workspace is left out", async () => {
    const { ws } = dirs();
    const untrusted = { home: join(ws, '.crystal'), workspace: ws, granted: false };
    // Home is the workspace's .crystal.
    const home = join(ws, '.crystal');
    writeSet(homeToolsDir(home), 'mine', { runner: 'exec', command: ['echo'], tools: [tool('mine')] });
    const same = await discoverToolSets({ home, workspace: ws, projectCode: untrusted });
    expect(same.sets.map((s) => [s.name, s.source])).toEqual([['mine', 'home']]);
    expect(same.untrusted ?? []).toEqual([]);
    // Home reached through a symbolic link to that folder.
    const linked = join(dirs().home, 'linked-home');
    symlinkSync(home, linked);
    const viaLink = await discoverToolSets({ home: linked, workspace: ws, projectCode: { ...untrusted, home: linked } });
    expect(viaLink.sets.map((s) => [s.name, s.source])).toEqual([['mine', 'home']]);
    expect(viaLink.untrusted ?? []).toEqual([]);
    // Another folder with the same sets is not Home: the workspace's set is project code, left out.
    const other = dirs().home;
    cpSync(homeToolsDir(home), homeToolsDir(other), { recursive: true });
    const copy = await discoverToolSets({ home: other, workspace: ws, projectCode: { ...untrusted, home: other } });
    expect(copy.sets.map((s) => [s.name, s.source])).toEqual([['mine', 'home']]);
    expect(copy.untrusted).toEqual([join(projectToolsDir(ws), 'mine')]);
  });
});
