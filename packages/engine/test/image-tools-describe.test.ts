/**
 * `describe_image` (IMG-23, IMG-25, IMG-26, MODEL-1) against the real fake provider: the side
 * client comes from `imageModelClient` (catalog, credentials, `createChatClient`), and every
 * assertion about the side request is made on what really went over the wire.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolDefinition } from '@crystal/core';
import { FakeProvider, type FakeReply } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../src/config/schema.js';
import {
  createImageTools,
  describeImageTool,
  IMAGE_SYSTEM_PROMPT,
  imageModelClient,
  imageUserText,
  lazyImageClient,
  multimodalToolsFor,
} from '../src/tools/image-tools.js';
import { type Harness, openSession } from './helpers.js';
import { limits, makeImage } from './images-fixtures.js';

const context = { signal: new AbortController().signal, callId: 'd1' };
const fakes: FakeProvider[] = [];
let session: Harness | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
  for (const fake of fakes.splice(0)) await fake.close();
});

interface Side {
  readonly fake: FakeProvider;
  readonly home: string;
  readonly ws: string;
  readonly config: Config;
}

async function side(
  replies: FakeReply[],
  options: {
    model?: Record<string, unknown>;
    imageModel?: Partial<NonNullable<Config['imageModel']>>;
    apiKey?: string | null;
  } = {},
): Promise<Side> {
  const fake = await FakeProvider.start({ replies, whenExhausted: 'error' });
  fakes.push(fake);
  const home = mkdtempSync(join(tmpdir(), 'crystal-describe-home-'));
  const ws = mkdtempSync(join(tmpdir(), 'crystal-describe-ws-'));
  const apiKey = options.apiKey === undefined ? 'vision-key' : options.apiKey;
  const config = {
    providers: {
      vision: {
        protocol: 'openai',
        baseUri: fake.baseUri,
        ...(apiKey === null ? {} : { apiKey }),
        models: { 'see-1': { contextWindow: 100000, imageInput: true, thinking: true, ...(options.model ?? {}) } },
      },
    },
    imageModel: { provider: 'vision', model: 'see-1', ...(options.imageModel ?? {}) },
  } as Config;
  return { fake, home, ws, config };
}

function tool(s: Side, env: NodeJS.ProcessEnv = {}): ToolDefinition {
  return describeImageTool({
    workspace: s.ws,
    limits: limits(),
    createImageClient: () => imageModelClient(s.home, s.config, env),
    imageModelThinking: s.config.imageModel?.thinkingEffort,
  });
}

async function failure(t: ToolDefinition, input: Record<string, unknown>): Promise<string> {
  const error = await t.execute(input, context).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).name).toBe('ToolFailure');
  return (error as Error).message;
}

interface WireMessage {
  readonly role: string;
  readonly content: string | readonly { type: string; text?: string; image_url?: { url: string } }[];
}

function body(s: Side, index = 0): { messages: WireMessage[]; tools?: unknown; reasoning_effort?: string; model: string } {
  return s.fake.requests[index]?.body as never;
}

describe('describe_image', () => {
  it('IMG-23 sends the image byte for byte with the description prompt and no tools, and returns the reply', async () => {
    const s = await side([{ text: 'A blue rectangle, 40 by 30 pixels.' }]);
    const png = await makeImage('png', 40, 30);
    mkdirSync(join(s.ws, 'img'));
    writeFileSync(join(s.ws, 'img', 'shot.png'), png);
    const output = await tool(s).execute({ path: 'img/shot.png' }, context);
    expect(output).toBe('A blue rectangle, 40 by 30 pixels.');

    expect(s.fake.requests).toHaveLength(1);
    const sent = body(s);
    expect(sent.model).toBe('see-1');
    expect(sent.tools).toBeUndefined();
    expect(sent.messages).toHaveLength(2);
    expect(sent.messages[0]).toEqual({ role: 'system', content: IMAGE_SYSTEM_PROMPT });
    const user = sent.messages[1] as WireMessage;
    expect(user.role).toBe('user');
    const parts = user.content as readonly { type: string; text?: string; image_url?: { url: string } }[];
    expect(parts.map((p) => p.type)).toEqual(['image_url', 'text']);
    expect(parts[1]?.text).toBe('Describe this image.');
    const url = parts[0]?.image_url?.url as string;
    expect(url.startsWith('data:image/png;base64,')).toBe(true);
    expect(Buffer.from(url.slice('data:image/png;base64,'.length), 'base64').equals(png)).toBe(true);
    // The side model's own key went to the side endpoint.
    expect(s.fake.requests[0]?.headers.authorization).toBe('Bearer vision-key');
  });

  it('IMG-23 a question becomes "Question: <q>"', async () => {
    const s = await side([{ text: 'Red.' }]);
    writeFileSync(join(s.ws, 'a.jpg'), await makeImage('jpeg', 10, 10));
    expect(await tool(s).execute({ path: 'a.jpg', question: '  What colour is it? ' }, context)).toBe('Red.');
    const parts = body(s).messages[1]?.content as readonly { type: string; text?: string; image_url?: { url: string } }[];
    expect(parts[1]?.text).toBe('Question: What colour is it?');
    expect(parts[0]?.image_url?.url.startsWith('data:image/jpeg;base64,')).toBe(true);
    expect(imageUserText(undefined)).toBe('Describe this image.');
    expect(imageUserText('   ')).toBe('Describe this image.');
  });

  it('IMG-23 applies imageModel.thinkingEffort through the adapter gear mapping', async () => {
    const high = await side([{ text: 'ok' }], { imageModel: { thinkingEffort: 'high' } });
    writeFileSync(join(high.ws, 'a.png'), await makeImage('png', 4, 4));
    await tool(high).execute({ path: 'a.png' }, context);
    expect(body(high).reasoning_effort).toBe('high');

    const maximum = await side([{ text: 'ok' }], { imageModel: { thinkingEffort: 'maximum' } });
    writeFileSync(join(maximum.ws, 'a.png'), await makeImage('png', 4, 4));
    await tool(maximum).execute({ path: 'a.png' }, context);
    expect(body(maximum).reasoning_effort).toBe('xhigh');

    const none = await side([{ text: 'ok' }]);
    writeFileSync(join(none.ws, 'a.png'), await makeImage('png', 4, 4));
    await tool(none).execute({ path: 'a.png' }, context);
    expect(body(none).reasoning_effort).toBeUndefined();
  });

  it('IMG-26 a missing key fails only the call, with a message naming the fix; the client is made at the first call', async () => {
    const s = await side([{ text: 'never sent' }], { apiKey: null });
    writeFileSync(join(s.ws, 'a.png'), await makeImage('png', 4, 4));
    let created = 0;
    const tools = createImageTools({
      workspace: s.ws,
      limits: limits(),
      createImageClient: () => {
        created++;
        return imageModelClient(s.home, s.config, {});
      },
    });
    // Registration never touches credentials.
    expect(multimodalToolsFor({ imageInput: false, imageModel: s.config.imageModel, tools }).map((t) => t.name)).toEqual([
      'describe_image',
    ]);
    expect(created).toBe(0);
    const describe = tools.describeImage as ToolDefinition;
    const message = await failure(describe, { path: 'a.png' });
    expect(message).toMatch(/^The image model failed: No API key for provider 'vision'\. Set VISION_API_KEY or CRYSTAL_API_KEY/);
    expect(s.fake.requests).toHaveLength(0);
    // A failed attempt is not kept: the next call tries again (and fails again the same way).
    await failure(describe, { path: 'a.png' });
    expect(created).toBe(2);
  });

  it('IMG-26 a session with an unusable image model starts, and a turn that calls describe_image finishes', async () => {
    const s = await side([], { apiKey: null });
    writeFileSync(join(s.ws, 'a.png'), await makeImage('png', 4, 4));
    session = await openSession(
      [{ toolCalls: [{ id: 'd1', name: 'describe_image', arguments: { path: 'a.png' } }] }, { text: 'I could not see it.' }],
      { tools: [tool(s)] },
    );
    const result = await session.session.send('Describe a.png');
    expect(result.error).toBeUndefined();
    expect(result.text).toBe('I could not see it.');
    const toolMessage = session.session.history().find((m) => m.role === 'tool');
    expect(JSON.stringify(toolMessage)).toContain('The image model failed: No API key for provider');
    expect(session.session.history().at(-1)).toMatchObject({ role: 'assistant' });
    expect(s.fake.requests).toHaveLength(0);
  });

  it('IMG-23 the side request is not written to the transcript; only the reply text is the tool result', async () => {
    const s = await side([{ text: 'A cat on a keyboard.' }]);
    const png = await makeImage('png', 6, 6);
    writeFileSync(join(s.ws, 'cat.png'), png);
    session = await openSession(
      [{ toolCalls: [{ id: 'd1', name: 'describe_image', arguments: { path: 'cat.png' } }] }, { text: 'It is a cat.' }],
      { tools: [tool(s)] },
    );
    await session.session.send('What is in cat.png?');
    const history = JSON.stringify(session.session.history());
    expect(history).toContain('A cat on a keyboard.');
    expect(history).not.toContain(IMAGE_SYSTEM_PROMPT.slice(0, 40));
    expect(history).not.toContain('Describe this image.');
    expect(history).not.toContain(png.toString('base64'));
    // The main model's second request carries the description as a tool result, not the image.
    const second = JSON.stringify(session.fake.requests[1]?.body);
    expect(second).toContain('A cat on a keyboard.');
    expect(second).not.toContain('image_url');
    expect(s.fake.requests).toHaveLength(1);
  });

  it('MODEL-1 an imageModel without imageInput is refused before any request, naming the config key', async () => {
    const s = await side([{ text: 'never' }], { model: { imageInput: false } });
    writeFileSync(join(s.ws, 'a.png'), await makeImage('png', 4, 4));
    const message = await failure(tool(s), { path: 'a.png' });
    expect(message).toBe(
      'The image model failed: config.json → imageModel names vision/see-1, which does not accept images. Set "imageInput": true in providers.vision.models.see-1 if it does, or name an image-capable model in imageModel.',
    );
    expect(s.fake.requests).toHaveLength(0);
  });

  it('MODEL-1 an imageModel naming an unknown provider or model fails the call with the key', async () => {
    const s = await side([{ text: 'never' }], { imageModel: { provider: 'nowhere' } });
    writeFileSync(join(s.ws, 'a.png'), await makeImage('png', 4, 4));
    expect(await failure(tool(s), { path: 'a.png' })).toMatch(
      /^The image model failed: config\.json → imageModel\.provider names 'nowhere', which is not in the catalog/,
    );
    const m = await side([{ text: 'never' }], { imageModel: { model: 'blind-9' } });
    writeFileSync(join(m.ws, 'a.png'), await makeImage('png', 4, 4));
    expect(await failure(tool(m), { path: 'a.png' })).toMatch(
      /^The image model failed: config\.json → imageModel: Model 'blind-9' is not in the catalog of provider 'vision'/,
    );
  });

  it('IMG-23 an empty reply is "The image model returned no description."', async () => {
    const s = await side([{ reasoning: 'thinking only', text: '   ' }]);
    writeFileSync(join(s.ws, 'a.png'), await makeImage('png', 4, 4));
    expect(await failure(tool(s), { path: 'a.png' })).toBe('The image model returned no description.');
  });

  it('IMG-23 a provider error is "The image model failed: …"', async () => {
    const s = await side([{ error: { status: 400, message: 'image too small for this model' } }]);
    writeFileSync(join(s.ws, 'a.png'), await makeImage('png', 4, 4));
    const message = await failure(tool(s), { path: 'a.png' });
    expect(message).toMatch(/^The image model failed: .*image too small for this model/);
  });

  it('IMG-23 the reply is capped at 100,000 characters', async () => {
    const long = 'x'.repeat(120_000);
    const s = await side([{ text: [long] }]);
    writeFileSync(join(s.ws, 'a.png'), await makeImage('png', 4, 4));
    const output = (await tool(s).execute({ path: 'a.png' }, context)) as string;
    expect(output).toBe(`${'x'.repeat(100_000)}\n[truncated to 100000 characters]`);
  });

  it('IMG-25 a credential path, a non-image and an oversized file are refused before any request', async () => {
    const s = await side([{ text: 'never' }]);
    mkdirSync(join(s.ws, '.ssh'));
    writeFileSync(join(s.ws, '.ssh', 'id.png'), await makeImage('png', 4, 4));
    writeFileSync(join(s.ws, 'notes.png'), 'text, not an image');
    writeFileSync(join(s.ws, 'big.png'), await makeImage('png', 200, 200, { noise: true }));
    const t = tool(s);
    expect(await failure(t, { path: '.ssh/id.png' })).toBe('.ssh/id.png is a credentials path; reading it is refused.');
    expect(await failure(t, { path: 'notes.png' })).toBe('notes.png: the file is not a supported PNG, JPEG, GIF, or WebP image.');
    const small = describeImageTool({
      workspace: s.ws,
      limits: limits({ maxImageBytes: 2048 }),
      createImageClient: () => imageModelClient(s.home, s.config, {}),
    });
    expect(await failure(small, { path: 'big.png' })).toMatch(/^big\.png: the image file exceeds the 2 KiB host limit/);
    expect(s.fake.requests).toHaveLength(0);
  });

  it('IMG-25 an outside path is read by the tool once approval let it through', async () => {
    const s = await side([{ text: 'Outside image.' }]);
    const outside = mkdtempSync(join(tmpdir(), 'crystal-describe-outside-'));
    writeFileSync(join(outside, 'o.png'), await makeImage('png', 4, 4));
    expect(await tool(s).execute({ path: join(outside, 'o.png') }, context)).toBe('Outside image.');
  });

  it('IMG-26 lazyImageClient makes the client once and keeps it', async () => {
    let made = 0;
    const s = await side([{ text: 'one' }, { text: 'two' }]);
    const lazy = lazyImageClient(() => {
      made++;
      return imageModelClient(s.home, s.config, {});
    });
    expect(made).toBe(0);
    const [a, b] = await Promise.all([lazy(), lazy()]);
    expect(a).toBe(b);
    expect(made).toBe(1);
  });
});
