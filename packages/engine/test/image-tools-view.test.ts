/**
 * `view_image` (IMG-24, IMG-25) and the image tools' registration (IMG-22, MODEL-2): real files
 * in temp folders, the real approval policy and executor, and a real session turn against the
 * fake provider to show the model receives the image on its next round.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParsedToolCall, type ToolDefinition, ToolExecutor } from '@crystal/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type ApprovalRequest, classify, createApprovalPolicy } from '../src/approval/index.js';
import { builtinExceptionMapper } from '../src/tools/builtin/index.js';
import { catalogFor } from '../src/tools/catalog.js';
import {
  createImageTools,
  type ImageTools,
  multimodalToolsFor,
  VIEW_IMAGE_LOADED,
  viewImageTool,
} from '../src/tools/image-tools.js';
import { type Harness, openSession } from './helpers.js';
import { cut, limits, makeImage } from './images-fixtures.js';

const signal = new AbortController().signal;
const context = { signal, callId: 'c1' };

function workspace(): string {
  return mkdtempSync(join(tmpdir(), 'crystal-view-'));
}

function call(name: string, input: Record<string, unknown>, id = 'c1'): ParsedToolCall {
  return { id, name, arguments: JSON.stringify(input), input };
}

async function failure(tool: ToolDefinition, input: Record<string, unknown>): Promise<string> {
  const error = await tool.execute(input, context).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).name).toBe('ToolFailure');
  return (error as Error).message;
}

/** Every `image_url.url` (Chat Completions) anywhere in a request body. */
function imageUrls(body: unknown): string[] {
  const out: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      const url = (record.image_url as { url?: unknown } | undefined)?.url;
      if (record.type === 'image_url' && typeof url === 'string') out.push(url);
      Object.values(record).forEach(walk);
    }
  };
  walk(body);
  return out;
}

describe('view_image', () => {
  it('IMG-24 returns "Image loaded." and the image content byte for byte', async () => {
    const ws = workspace();
    const png = await makeImage('png', 30, 20);
    mkdirSync(join(ws, 'shots'));
    writeFileSync(join(ws, 'shots', 'a.png'), png);
    const output = await viewImageTool({ workspace: ws, limits: limits() }).execute({ path: 'shots/a.png' }, context);
    expect(output).toEqual([
      { type: 'text', text: 'Image loaded.' },
      { type: 'image', mime: 'image/png', data: png.toString('base64'), name: 'a.png' },
    ]);
    expect(VIEW_IMAGE_LOADED).toBe('Image loaded.');
  });

  it('IMG-24 accepts JPEG, GIF and WebP by signature, whatever the extension says', async () => {
    const ws = workspace();
    const tool = viewImageTool({ workspace: ws, limits: limits() });
    for (const [format, mime] of [
      ['jpeg', 'image/jpeg'],
      ['gif', 'image/gif'],
      ['webp', 'image/webp'],
    ] as const) {
      writeFileSync(join(ws, `${format}.bin`), await makeImage(format, 8, 8));
      const output = (await tool.execute({ path: `${format}.bin` }, context)) as readonly { type: string; mime?: string }[];
      expect(output[1]?.mime).toBe(mime);
    }
  });

  it('IMG-24 refuses a truncated image', async () => {
    const ws = workspace();
    writeFileSync(join(ws, 'cut.png'), cut(await makeImage('png', 64, 64, { noise: true }), 0.6));
    const message = await failure(viewImageTool({ workspace: ws, limits: limits() }), { path: 'cut.png' });
    expect(message).toMatch(/^cut\.png: the PNG image is truncated or damaged and cannot be decoded/);
  });

  it('IMG-24 refuses a non-image, an empty file, a folder and a missing file', async () => {
    const ws = workspace();
    writeFileSync(join(ws, 'notes.txt'), 'just text');
    writeFileSync(join(ws, 'empty.png'), '');
    mkdirSync(join(ws, 'dir'));
    const tool = viewImageTool({ workspace: ws, limits: limits() });
    expect(await failure(tool, { path: 'notes.txt' })).toBe(
      'notes.txt: the file is not a supported PNG, JPEG, GIF, or WebP image.',
    );
    expect(await failure(tool, { path: 'empty.png' })).toBe('empty.png: the image file is empty.');
    expect(await failure(tool, { path: 'dir' })).toBe('dir is a folder, not an image.');
    expect(await failure(tool, { path: 'nope.png' })).toBe('File not found: nope.png.');
    expect(await failure(tool, {})).toContain("Missing argument 'path' for 'view_image'");
  });

  it('IMG-24 refuses a file over the image size cap before reading it', async () => {
    const ws = workspace();
    const png = await makeImage('png', 100, 100, { noise: true });
    writeFileSync(join(ws, 'big.png'), png);
    const tool = viewImageTool({ workspace: ws, limits: limits({ maxImageBytes: 1024 }) });
    expect(await failure(tool, { path: 'big.png' })).toMatch(/^big\.png: the image file exceeds the 1 KiB host limit \(it is /);
  });

  it('IMG-25 refuses credential paths even when approved', async () => {
    const ws = workspace();
    const png = await makeImage('png', 8, 8);
    mkdirSync(join(ws, '.ssh'));
    writeFileSync(join(ws, '.ssh', 'key.png'), png);
    writeFileSync(join(ws, '.env'), png);
    const tool = viewImageTool({ workspace: ws, limits: limits() });
    expect(await failure(tool, { path: '.ssh/key.png' })).toBe('.ssh/key.png is a credentials path; reading it is refused.');
    expect(await failure(tool, { path: '.env' })).toBe('.env is a credentials path; reading it is refused.');
    // The approval classifier calls it Forbidden; an operator's "once" still meets the tool's refusal.
    expect(classify(call('view_image', { path: '.ssh/key.png' }), { workspace: ws }).risk).toBe('forbidden');
    const policy = createApprovalPolicy({
      mode: 'full',
      plan: () => false,
      workspace: ws,
      home: workspace(),
      ask: async () => 'once',
    });
    const executor = new ToolExecutor({ tools: [tool], policy, mapException: builtinExceptionMapper });
    const [result] = await executor.runBatch([call('view_image', { path: '.ssh/key.png' })], signal);
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: '.ssh/key.png is a credentials path; reading it is refused.' }],
    });
  });

  it('IMG-25 an outside path is classified like read and asked; denied it never runs, approved the tool reads it', async () => {
    const ws = workspace();
    const outside = workspace();
    const png = await makeImage('png', 12, 12);
    writeFileSync(join(outside, 'o.png'), png);
    symlinkSync(join(outside, 'o.png'), join(ws, 'link.png'));
    for (const path of [join(outside, 'o.png'), 'link.png', `../${join(outside, 'o.png').split('/').at(-2)}/o.png`]) {
      expect(classify(call('view_image', { path }), { workspace: ws })).toMatchObject({
        risk: 'read',
        authority: 'outside_workspace',
        summary: 'View image outside workspace',
      });
    }
    const asked: ApprovalRequest[] = [];
    let answer: 'deny' | 'once' = 'deny';
    const policy = createApprovalPolicy({
      mode: 'default',
      plan: () => false,
      workspace: ws,
      home: workspace(),
      ask: async (request) => {
        asked.push(request);
        return answer;
      },
    });
    const executor = new ToolExecutor({
      tools: [viewImageTool({ workspace: ws, limits: limits() })],
      policy,
      mapException: builtinExceptionMapper,
    });
    const [denied] = await executor.runBatch([call('view_image', { path: join(outside, 'o.png') })], signal);
    expect(denied?.isError).toBe(true);
    expect(denied?.content[0]).toMatchObject({ type: 'text' });
    expect(JSON.stringify(denied?.content)).not.toContain(png.toString('base64'));
    answer = 'once';
    const [allowed] = await executor.runBatch([call('view_image', { path: join(outside, 'o.png') }, 'c2')], signal);
    expect(allowed).toMatchObject({
      isError: false,
      content: [
        { type: 'text', text: 'Image loaded.' },
        { type: 'image', data: png.toString('base64') },
      ],
    });
    expect(asked).toHaveLength(2);
    // A workspace image is a plain read: not asked.
    writeFileSync(join(ws, 'in.png'), png);
    await executor.runBatch([call('view_image', { path: 'in.png' }, 'c3')], signal);
    expect(asked).toHaveLength(2);
  });
});

describe('view_image in a session', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('IMG-24 the image reaches the model on its next round, byte for byte', async () => {
    const png = await makeImage('png', 16, 16, { colour: '#ff0000' });
    const ws = mkdtempSync(join(tmpdir(), 'crystal-view-session-'));
    writeFileSync(join(ws, 'red.png'), png);
    h = await openSession(
      [{ toolCalls: [{ id: 'v1', name: 'view_image', arguments: { path: 'red.png' } }] }, { text: 'It is red.' }],
      { imageInput: true, tools: [viewImageTool({ workspace: ws, limits: limits() })] },
    );
    await h.session.send('What colour is red.png?');
    expect(h.fake.requests).toHaveLength(2);
    expect(imageUrls(h.fake.requests[0]?.body)).toEqual([]);
    expect(imageUrls(h.fake.requests[1]?.body)).toEqual([`data:image/png;base64,${png.toString('base64')}`]);
  });
});

describe('registration of the image tools', () => {
  const tools: ImageTools = createImageTools({
    workspace: tmpdir(),
    limits: limits(),
    createImageClient: async () => {
      throw new Error('not used here');
    },
  });
  const names = (list: readonly ToolDefinition[]): string[] => list.map((t) => t.name);
  const imageModel = { provider: 'fake', model: 'vision' };

  it('IMG-22 IMG-24 view_image only when the selected model accepts images', () => {
    expect(names(multimodalToolsFor({ imageInput: true, tools }))).toEqual(['view_image']);
    expect(names(multimodalToolsFor({ imageInput: false, tools }))).toEqual([]);
  });

  it('IMG-22 MODEL-2 a declared audioInput or videoInput does not keep view_image', () => {
    expect(names(multimodalToolsFor({ imageInput: false, audioInput: true, videoInput: true, tools }))).toEqual([]);
  });

  it('IMG-23 describe_image only when imageModel is configured, also for a text-only model', () => {
    expect(names(multimodalToolsFor({ imageInput: false, imageModel, tools }))).toEqual(['describe_image']);
    expect(names(multimodalToolsFor({ imageInput: true, imageModel, tools }))).toEqual(['describe_image', 'view_image']);
    const withoutClient = createImageTools({ workspace: tmpdir(), limits: limits() });
    expect(names(multimodalToolsFor({ imageInput: false, imageModel, tools: withoutClient }))).toEqual([]);
  });

  it('IMG-23 both tools stay in Plan and in Work, after the built-ins', () => {
    const builtins: ToolDefinition[] = ['read', 'list', 'edit', 'bash'].map((name) => ({
      name,
      description: name,
      parameters: {},
      execute: async () => '',
    }));
    const round = [...builtins, ...multimodalToolsFor({ imageInput: true, imageModel, tools })];
    expect(names(catalogFor('plan', round))).toEqual(['read', 'list', 'describe_image', 'view_image']);
    expect(names(catalogFor('work', round))).toEqual(['read', 'list', 'edit', 'bash', 'describe_image', 'view_image']);
  });
});
