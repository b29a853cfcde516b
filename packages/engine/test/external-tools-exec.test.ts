import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ImagePart, type ParsedToolCall, ToolExecutor, type ToolResultContent } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { createApprovalPolicy } from '../src/approval/index.js';
import {
  discoverToolSets,
  type ExternalTool,
  type ExternalToolContext,
  externalToolFacts,
  homeToolsDir,
  loadExternalTools,
  TEXT_ONLY_IMAGE_ERROR,
} from '../src/external-tools/index.js';

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const never = new AbortController().signal;

interface Fixture {
  home: string;
  ws: string;
  base: string;
}

function fixture(): Fixture {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-exec-')));
  const home = join(base, 'home');
  const ws = join(base, 'ws');
  mkdirSync(home);
  mkdirSync(join(ws, 'src'), { recursive: true });
  writeFileSync(join(ws, 'src', 'a.ts'), 'x');
  return { home, ws, base };
}

/** Writes a tool set with executable scripts into `<home>/tools/<name>`. */
function writeSet(f: Fixture, name: string, manifest: Record<string, unknown>, scripts: Record<string, string>): string {
  const dir = join(homeToolsDir(f.home), name);
  mkdirSync(dir, { recursive: true });
  for (const [file, body] of Object.entries(scripts)) {
    writeFileSync(join(dir, file), body);
    chmodSync(join(dir, file), 0o755);
  }
  writeFileSync(join(dir, 'tools.json'), JSON.stringify(manifest));
  return dir;
}

/** A node script that reports what it received: stdin, argv, cwd and the CRYSTAL_ variables. */
const REPORT = `#!/usr/bin/env node
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  process.stderr.write('note on stderr\\n');
  process.stdout.write(JSON.stringify({
    stdin: input,
    argv: process.argv.slice(2),
    cwd: process.cwd(),
    workspace: process.env.CRYSTAL_WORKSPACE,
    session: process.env.CRYSTAL_SESSION,
    approval: process.env.CRYSTAL_APPROVAL,
    home: process.env.CRYSTAL_HOME ?? null,
  }));
});
`;

/** A node script that writes the `out` and `err` of its JSON input and exits with `code`. */
const SCRIPTED = `#!/usr/bin/env node
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  const { out = '', err = '', code = 0, repeat = 1 } = JSON.parse(input);
  process.stderr.write(err);
  process.stdout.write(out.repeat(repeat), () => process.exit(code));
});
`;

function context(f: Fixture, extra: Partial<ExternalToolContext> = {}): ExternalToolContext {
  return {
    workspace: f.ws,
    sessionId: () => 'session-1',
    approvalMode: () => 'edit',
    imageInput: true,
    env: { ...process.env, CRYSTAL_HOME: '/should/not/pass' },
    killGraceMs: 200,
    projectCode: { home: f.home, workspace: f.ws, granted: true },
    ...extra,
  };
}

async function load(f: Fixture, extra: Partial<ExternalToolContext> = {}): Promise<Map<string, ExternalTool>> {
  const { tools, notes } = await loadExternalTools(await discoverToolSets({ home: f.home, workspace: f.ws }), context(f, extra));
  expect(notes).toEqual([]);
  return new Map(tools.map((t) => [t.name, t]));
}

async function run(
  tool: ExternalTool | undefined,
  input: unknown,
  signal = never,
): Promise<string | readonly ToolResultContent[]> {
  if (!tool) throw new Error('tool missing');
  return tool.execute(input, { signal, callId: 'call-1' });
}

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the call to fail');
}

function scriptedSet(f: Fixture, extra: Record<string, unknown> = {}): void {
  writeSet(
    f,
    'scripted',
    {
      runner: 'exec',
      command: ['scripted.mjs'],
      tools: [
        { name: 'text_tool', description: 'text', schema: { type: 'object' } },
        { name: 'content_tool', description: 'content', schema: { type: 'object' }, output: 'content' },
      ],
      ...extra,
    },
    { 'scripted.mjs': SCRIPTED },
  );
}

describe('exec tools', () => {
  it('TOOLS-4 runs the argv in the workspace with the JSON arguments on stdin and the CRYSTAL_ variables, never CRYSTAL_HOME', async () => {
    const f = fixture();
    writeSet(
      f,
      'reporter',
      {
        runner: 'exec',
        command: ['report.mjs', '--fixed'],
        tools: [{ name: 'report', description: 'Report', schema: { type: 'object' } }],
      },
      { 'report.mjs': REPORT },
    );
    const tools = await load(f);
    const output = (await run(tools.get('report'), { q: 'é ✓', n: 1 })) as string;
    const [json, stderr] = [output.slice(0, output.lastIndexOf('}') + 1), output.slice(output.lastIndexOf('}') + 1)];
    expect(JSON.parse(json)).toEqual({
      stdin: '{"q":"é ✓","n":1}',
      argv: ['--fixed'],
      cwd: f.ws,
      workspace: f.ws,
      session: 'session-1',
      approval: 'edit',
      home: null,
    });
    // stdout then stderr.
    expect(stderr).toBe('\nnote on stderr\n');
  });

  it('TOOLS-4 argv maps properties to flags in map order; arrays repeat the flag; objects and nulls fail the call', async () => {
    const f = fixture();
    writeSet(
      f,
      'flags',
      {
        runner: 'exec',
        command: ['report.mjs'],
        stdin: false,
        tools: [
          {
            name: 'flags',
            description: 'Flags',
            schema: { type: 'object' },
            argv: { name: '--name', tags: '--tag', count: '-n', dry: '--dry-run' },
          },
        ],
      },
      { 'report.mjs': REPORT },
    );
    const tool = (await load(f)).get('flags');
    const output = (await run(tool, { count: 3, tags: ['a', 'b'], name: 'x y', other: 'ignored', dry: false })) as string;
    const report = JSON.parse(output.slice(0, output.lastIndexOf('}') + 1));
    expect(report.argv).toEqual(['--name', 'x y', '--tag', 'a', '--tag', 'b', '-n', '3', '--dry-run', 'false']);
    expect(report.stdin).toBe('');
    expect(await failure(run(tool, { name: { a: 1 } }))).toMatch(/The argument name maps to --name and must be a string/);
    expect(await failure(run(tool, { tags: ['a', 1] }))).toMatch(/The argument tags maps to --tag/);
    expect(await failure(run(tool, { name: null }))).toMatch(/The argument name/);
  });

  it('TOOLS-4 pathArguments reach the tool as absolute paths through the fence, links followed', async () => {
    const f = fixture();
    symlinkSync(join(f.ws, 'src'), join(f.ws, 'link'));
    writeSet(
      f,
      'paths',
      {
        runner: 'exec',
        command: ['report.mjs'],
        tools: [{ name: 'paths', description: 'Paths', schema: { type: 'object' }, pathArguments: ['file', 'more'] }],
      },
      { 'report.mjs': REPORT },
    );
    const tool = (await load(f)).get('paths');
    expect(tool?.facts).toEqual({ pathArguments: ['file', 'more'], automatic: false });
    const output = (await run(tool, { file: 'link/a.ts', more: ['../x', 'src'], keep: 'src/a.ts' })) as string;
    const report = JSON.parse(output.slice(0, output.lastIndexOf('}') + 1));
    expect(JSON.parse(report.stdin)).toEqual({
      file: join(f.ws, 'src', 'a.ts'),
      more: [join(f.base, 'x'), join(f.ws, 'src')],
      keep: 'src/a.ts',
    });
    expect(await failure(run(tool, { file: 42 }))).toMatch(/The path argument file must be a string/);
  });

  it('TOOLS-4 a non-zero exit fails the call with the exit code, stdout then stderr', async () => {
    const f = fixture();
    scriptedSet(f);
    const tool = (await load(f)).get('text_tool');
    expect(await failure(run(tool, { out: 'partial\n', err: 'broken\n', code: 3 }))).toBe('exit 3\npartial\nbroken\n');
    expect(await run(tool, { out: 'fine', err: 'warn' })).toBe('fine\nwarn');
  });

  it('TOOLS-4 text output is capped at 100,000 characters with the truncation note', async () => {
    const f = fixture();
    scriptedSet(f);
    const output = (await run((await load(f)).get('text_tool'), { out: 'abcde', repeat: 30_000 })) as string;
    expect(output).toBe(`${'abcde'.repeat(20_000)}\n[truncated to 100000 characters]`);
  });

  it('TOOLS-4 a bare command that is neither in the set nor on PATH fails the call clearly', async () => {
    const f = fixture();
    writeSet(
      f,
      'missing',
      { runner: 'exec', command: ['no-such-program-crystal'], tools: [{ name: 'missing', description: 'm', schema: {} }] },
      {},
    );
    expect(await failure(run((await load(f)).get('missing'), {}))).toBe('Cannot start no-such-program-crystal: not found.');
  });

  it('TOOLS-4 a bare command resolves through PATH when the set has no such file', async () => {
    const f = fixture();
    writeSet(
      f,
      'pathcmd',
      { runner: 'exec', command: ['sh', '-c', 'pwd; cat'], tools: [{ name: 'pathcmd', description: 'p', schema: {} }] },
      {},
    );
    expect(await run((await load(f)).get('pathcmd'), { a: 1 })).toBe(`${f.ws}\n{"a":1}`);
  });

  it('IMG-18 output content returns text and image parts from base64 and from a workspace path; stderr is appended', async () => {
    const f = fixture();
    writeFileSync(join(f.ws, 'shot.png'), Buffer.from(PNG_BASE64, 'base64'));
    scriptedSet(f);
    const tool = (await load(f)).get('content_tool');
    const out = JSON.stringify({
      text: 'Two images',
      images: [
        { mimeType: 'image/png', base64: PNG_BASE64 },
        { mimeType: 'image/png', path: 'shot.png' },
      ],
    });
    const parts = (await run(tool, { out, err: 'rendered in 3 ms' })) as ToolResultContent[];
    expect(parts).toEqual([
      { type: 'text', text: 'Two images\nrendered in 3 ms' },
      { type: 'image', mime: 'image/png', data: PNG_BASE64 },
      { type: 'image', mime: 'image/png', data: PNG_BASE64, name: 'shot.png' },
    ]);
    const only = (await run(tool, {
      out: JSON.stringify({ images: [{ mimeType: 'image/png', base64: PNG_BASE64 }] }),
    })) as ImagePart[];
    expect(only.map((p) => p.type)).toEqual(['image']);
  });

  it('IMG-19 a text-only turn refuses an exec tool image result with a clear error instead of dropping it', async () => {
    const f = fixture();
    scriptedSet(f);
    const tool = (await load(f, { imageInput: false })).get('content_tool');
    const out = JSON.stringify({ text: 'one image', images: [{ mimeType: 'image/png', base64: PNG_BASE64 }] });
    expect(await failure(run(tool, { out }))).toBe(TEXT_ONLY_IMAGE_ERROR);
    expect(TEXT_ONLY_IMAGE_ERROR).toBe('This model cannot accept tool images.');
    // Text alone is fine on a text-only turn.
    expect(await run(tool, { out: JSON.stringify({ text: 'just text' }) })).toEqual([{ type: 'text', text: 'just text' }]);
  });

  it('IMG-19 the image check follows the current model when imageInput is a function', async () => {
    const f = fixture();
    scriptedSet(f);
    let images = false;
    const tool = (await load(f, { imageInput: () => images })).get('content_tool');
    const out = JSON.stringify({ images: [{ mimeType: 'image/png', base64: PNG_BASE64 }] });
    expect(await failure(run(tool, { out }))).toBe(TEXT_ONLY_IMAGE_ERROR);
    images = true;
    expect(((await run(tool, { out })) as ToolResultContent[])[0]?.type).toBe('image');
  });

  it('TOOLS-4 output content rules: bytes match the MIME type, at most 8 images, paths are regular workspace files', async () => {
    const f = fixture();
    writeFileSync(join(f.base, 'outside.png'), Buffer.from(PNG_BASE64, 'base64'));
    writeFileSync(join(f.ws, 'fake.png'), 'not an image');
    mkdirSync(join(f.ws, 'dir.png'));
    mkdirSync(join(f.ws, '.ssh'));
    writeFileSync(join(f.ws, '.ssh', 'key.png'), Buffer.from(PNG_BASE64, 'base64'));
    execFileSync('mkfifo', [join(f.ws, 'pipe.png')]);
    scriptedSet(f);
    const tool = (await load(f)).get('content_tool');
    const fails = async (images: unknown[]): Promise<string> => failure(run(tool, { out: JSON.stringify({ images }) }));
    expect(await fails([{ mimeType: 'image/jpeg', base64: PNG_BASE64 }])).toBe(
      'images[0]: the bytes are image/png, not image/jpeg.',
    );
    expect(await fails([{ mimeType: 'image/bmp', base64: PNG_BASE64 }])).toMatch(
      /images\.0\.mimeType: expected "image\/png" or "image\/jpeg"/,
    );
    expect(await fails([{ mimeType: 'image/png', path: 'fake.png' }])).toMatch(
      /images\[0\]: the bytes are not a PNG, JPEG, GIF or WebP image/,
    );
    expect(await fails([{ mimeType: 'image/png', path: '../outside.png' }])).toMatch(/is outside the workspace/);
    expect(await fails([{ mimeType: 'image/png', path: 'dir.png' }])).toMatch(/is not a regular file/);
    expect(await fails([{ mimeType: 'image/png', path: 'pipe.png' }])).toMatch(/is not a regular file/);
    expect(await fails([{ mimeType: 'image/png', path: '.ssh/key.png' }])).toMatch(/is a credential path/);
    expect(await fails([{ mimeType: 'image/png', path: 'none.png' }])).toMatch(/does not exist/);
    expect(await fails([{ mimeType: 'image/png', base64: PNG_BASE64, path: 'x.png' }])).toMatch(
      /expected exactly one of base64 or path/,
    );
    expect(await fails([{ mimeType: 'image/png', base64: 'not base64!' }])).toMatch(/base64 is not valid base64/);
    const nine = Array.from({ length: 9 }, () => ({ mimeType: 'image/png', base64: PNG_BASE64 }));
    expect(await fails(nine)).toMatch(/images: expected at most 8 images/);
    const eight = (await run(tool, { out: JSON.stringify({ images: nine.slice(1) }) })) as ToolResultContent[];
    expect(eight).toHaveLength(8);
  });

  it('TOOLS-4 output content over 20 MiB per image is refused', async () => {
    const f = fixture();
    const big = Buffer.alloc(20 * 1024 * 1024 + 1);
    Buffer.from(PNG_BASE64, 'base64').copy(big);
    writeFileSync(join(f.ws, 'big.png'), big);
    scriptedSet(f);
    const tool = (await load(f)).get('content_tool');
    expect(await failure(run(tool, { out: JSON.stringify({ images: [{ mimeType: 'image/png', path: 'big.png' }] }) }))).toMatch(
      /has 20971521 bytes; the limit is 20971520 bytes \(20 MiB\)/,
    );
  });

  it('TOOLS-4 invalid content JSON fails with a stdout preview; a non-zero exit attaches no images', async () => {
    const f = fixture();
    scriptedSet(f);
    const tool = (await load(f)).get('content_tool');
    expect(await failure(run(tool, { out: 'this is not json' }))).toMatch(
      /^The tool's output is not valid JSON \(.*\)\. Output: this is not json$/,
    );
    expect(await failure(run(tool, { out: '[1,2]' }))).toMatch(/must be one JSON object .*Output: \[1,2\]/);
    const out = JSON.stringify({ text: 'img', images: [{ mimeType: 'image/png', base64: PNG_BASE64 }] });
    const message = await failure(run(tool, { out, code: 2 }));
    expect(message).toMatch(/^exit 2\n/);
  });

  it('BASH-3 the set timeout kills a forking child that ignores SIGTERM, whatever any bash timer says', async () => {
    const f = fixture();
    const marker = `sleep 4${process.pid % 10}.${Date.now() % 100000}`;
    writeSet(
      f,
      'slow',
      { runner: 'exec', command: ['hang.sh'], timeoutSeconds: 1, tools: [{ name: 'slow', description: 'Slow', schema: {} }] },
      {
        'hang.sh': `#!/bin/sh\ntrap '' TERM\n(trap '' TERM; exec ${marker}1) &\n${marker}2 &\necho started\nwait\n`,
      },
    );
    const tool = (await load(f)).get('slow');
    const running = failure(run(tool, {}));
    for (let i = 0; i < 100 && alive(marker).length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(marker).length).toBe(2);
    expect(await running).toBe('The tool timed out after 1 seconds.');
    expect(await waitGone(marker)).toEqual([]);
  });

  it('BASH-2 a cancel stops the exec tool and its whole process group', async () => {
    const f = fixture();
    const marker = `sleep 5${process.pid % 10}.${Date.now() % 100000}`;
    writeSet(
      f,
      'cancel',
      {
        runner: 'exec',
        command: ['hang.sh'],
        timeoutSeconds: 'unlimited',
        tools: [{ name: 'cancel', description: 'c', schema: {} }],
      },
      { 'hang.sh': `#!/bin/sh\n(trap '' TERM; exec ${marker}1) &\n${marker}2 &\nwait\n` },
    );
    const tool = (await load(f)).get('cancel');
    const controller = new AbortController();
    const running = failure(run(tool, {}, controller.signal));
    for (let i = 0; i < 100 && alive(marker).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(marker).length).toBe(2);
    controller.abort();
    expect(await running).toBe('The tool was cancelled.');
    expect(await waitGone(marker)).toEqual([]);
  });

  it('CORE-5 through the ToolExecutor and the policy: an exec tool failure reaches the model through the exception mapper', async () => {
    const f = fixture();
    scriptedSet(f);
    const tools = [...(await load(f)).values()];
    const policy = createApprovalPolicy({
      mode: 'full',
      plan: () => false,
      workspace: f.ws,
      home: f.home,
      externalTool: externalToolFacts(tools),
    });
    const executor = new ToolExecutor({ tools, policy });
    const calls: ParsedToolCall[] = [
      { id: 'a', name: 'text_tool', arguments: '{"out":"ok"}', input: { out: 'ok' } },
      { id: 'b', name: 'text_tool', arguments: '{"out":"x","code":4}', input: { out: 'x', code: 4 } },
    ];
    const results = await executor.runBatch(calls, never);
    expect(results.map((r) => [r.isError, r.content])).toEqual([
      [false, [{ type: 'text', text: 'ok' }]],
      [true, [{ type: 'text', text: "Tool 'text_tool' failed: exit 4\nx" }]],
    ]);
  });
});

/** Processes still alive whose command line contains `marker`. */
function alive(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

async function waitGone(marker: string): Promise<string[]> {
  for (let i = 0; i < 50 && alive(marker).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  return alive(marker);
}
