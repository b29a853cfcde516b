import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolResultContent } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import {
  discoverToolSets,
  type ExternalToolContext,
  externalToolsFor,
  loadExternalTools,
  projectToolsDir,
  TEXT_ONLY_IMAGE_ERROR,
} from '../src/external-tools/index.js';

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const never = new AbortController().signal;

function fixture(): { home: string; ws: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-plugin-')));
  const home = join(base, 'home');
  const ws = join(base, 'ws');
  mkdirSync(home);
  mkdirSync(join(ws, 'src'), { recursive: true });
  return { home, ws };
}

function writePluginSet(ws: string, name: string, manifest: Record<string, unknown>, source: string): string {
  const dir = join(projectToolsDir(ws), name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tool.mjs'), source);
  writeFileSync(join(dir, 'tools.json'), JSON.stringify({ runner: 'plugin', module: './tool.mjs', ...manifest }));
  return join(dir, 'tools.json');
}

const PLUGIN = `
const PNG = '${PNG_BASE64}';
export default [
  {
    name: 'snap',
    description: 'Take a snapshot',
    parameters: { type: 'object', properties: { file: { type: 'string' } } },
    async execute(input, context) {
      return [
        { type: 'text', text: 'ws=' + context.workspace + ' session=' + context.sessionId + ' call=' + context.callId + ' file=' + input.file },
        { type: 'image', mime: 'image/png', data: PNG, name: 'snap.png' },
      ];
    },
  },
  {
    name: 'wrong_mime',
    description: 'Claims JPEG, sends PNG',
    parameters: { type: 'object' },
    execute: () => [{ type: 'image', mime: 'image/jpeg', data: PNG }],
  },
  {
    name: 'say',
    description: 'Text only',
    parameters: { type: 'object' },
    execute: (input) => 'x'.repeat(input.n ?? 3),
  },
  {
    name: 'stubborn',
    description: 'Ignores its signal',
    parameters: { type: 'object' },
    execute: (input, context) => {
      globalThis.__crystalStubbornSignal = context.signal;
      return new Promise(() => {});
    },
  },
];
`;

function context(ws: string, imageInput: boolean): ExternalToolContext {
  return {
    workspace: ws,
    sessionId: () => 'session-9',
    approvalMode: () => 'default',
    imageInput,
    projectCode: { home: join(ws, '..', 'home'), workspace: ws, granted: true },
  };
}

async function load(home: string, ws: string, imageInput = true) {
  return loadExternalTools(await discoverToolSets({ home, workspace: ws }), context(ws, imageInput));
}

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the call to fail');
}

describe('plugin tools', () => {
  it('IMG-18 an in-process plugin tool returns text and image parts; path arguments arrive through the fence', async () => {
    const { home, ws } = fixture();
    writePluginSet(ws, 'camera', { tools: { snap: { pathArguments: ['file'], catalogs: ['work'] } } }, PLUGIN);
    const { tools, notes } = await load(home, ws);
    expect(notes).toEqual([]);
    expect(tools.map((t) => t.name)).toEqual(['snap', 'wrong_mime', 'say', 'stubborn']);
    const snap = tools.find((t) => t.name === 'snap');
    expect(snap).toMatchObject({
      runner: 'plugin',
      set: 'camera',
      source: 'project',
      facts: { pathArguments: ['file'], automatic: false },
    });
    expect(externalToolsFor(tools, 'plan').map((t) => t.name)).not.toContain('snap');
    const parts = (await snap?.execute({ file: 'src/x.png' }, { signal: never, callId: 'call-7' })) as ToolResultContent[];
    expect(parts).toEqual([
      { type: 'text', text: `ws=${ws} session=session-9 call=call-7 file=${join(ws, 'src', 'x.png')}` },
      { type: 'image', mime: 'image/png', data: PNG_BASE64, name: 'snap.png' },
    ]);
  });

  it('IMG-19 a text-only turn refuses a plugin tool image rather than dropping it', async () => {
    const { home, ws } = fixture();
    writePluginSet(ws, 'camera', {}, PLUGIN);
    const { tools } = await load(home, ws, false);
    const snap = tools.find((t) => t.name === 'snap');
    expect(await failure(Promise.resolve(snap?.execute({}, { signal: never, callId: 'c' })))).toBe(TEXT_ONLY_IMAGE_ERROR);
  });

  it('IMG-18 plugin images follow the tool-image rules; text is capped', async () => {
    const { home, ws } = fixture();
    writePluginSet(ws, 'camera', {}, PLUGIN);
    const { tools } = await load(home, ws);
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(await failure(Promise.resolve(byName.get('wrong_mime')?.execute({}, { signal: never, callId: 'c' })))).toBe(
      'part [0]: the bytes are image/png, not image/jpeg.',
    );
    const said = await byName.get('say')?.execute({ n: 100_001 }, { signal: never, callId: 'c' });
    expect(said).toBe(`${'x'.repeat(100_000)}\n[truncated to 100000 characters]`);
  });

  it('BASH-3 the set timeout fails a plugin call that ignores its signal, and aborts that signal', async () => {
    const { home, ws } = fixture();
    writePluginSet(ws, 'camera', { timeoutSeconds: 1 }, PLUGIN);
    const { tools } = await load(home, ws);
    const stubborn = tools.find((t) => t.name === 'stubborn');
    expect(await failure(Promise.resolve(stubborn?.execute({}, { signal: never, callId: 'c' })))).toBe(
      'The tool timed out after 1 seconds.',
    );
    expect((globalThis as { __crystalStubbornSignal?: AbortSignal }).__crystalStubbornSignal?.aborted).toBe(true);
  });

  it('TOOLS-4 a cancel fails a plugin call at once', async () => {
    const { home, ws } = fixture();
    writePluginSet(ws, 'camera', { timeoutSeconds: 'unlimited' }, PLUGIN);
    const { tools } = await load(home, ws);
    const controller = new AbortController();
    const running = failure(
      Promise.resolve(tools.find((t) => t.name === 'stubborn')?.execute({}, { signal: controller.signal, callId: 'c' })),
    );
    controller.abort();
    expect(await running).toBe('The tool was cancelled.');
  });

  it('TOOLS-4 a plugin module that cannot be used skips its set with a note; other sets still load', async () => {
    const { home, ws } = fixture();
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['syntax', {}, 'export default {', /module: .*tool\.mjs cannot be loaded/],
      ['noexport', {}, 'export const x = 1;', /exports no tool; export default \{ name, description, parameters, execute \}/],
      [
        'noexec',
        {},
        "export default { name: 'a', description: 'd', parameters: {} };",
        /export default: execute: expected a function/,
      ],
      [
        'badname',
        {},
        "export default { name: 'a b', description: 'd', parameters: {}, execute() {} };",
        /name: expected a tool name/,
      ],
      ['override', { tools: { ghost: { catalogs: ['plan'] } } }, PLUGIN, /tools\.ghost: the module exports no tool named ghost/],
      ['missing', { module: './nope.mjs' }, PLUGIN, /module: .*nope\.mjs is not a file/],
    ];
    const files = cases.map(([name, manifest, source]) => writePluginSet(ws, name, manifest, source));
    writePluginSet(ws, 'good', {}, PLUGIN);
    const { tools, notes } = await load(home, ws);
    expect(new Set(tools.map((t) => t.set))).toEqual(new Set(['good']));
    cases.forEach(([name, , , pattern], i) => {
      const note = notes.find((n) => n.startsWith(`${files[i]}:`));
      expect(note, name).toMatch(pattern);
      expect(note, name).toContain(`the project tool set ${name} was skipped`);
    });
  });
});
