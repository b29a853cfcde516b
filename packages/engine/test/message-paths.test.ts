/**
 * Every path of a user message follows one admission rule (issue 14 items 1-3): the message
 * that starts a turn, a follow-up sent after a tool batch, and a queued message that starts the
 * next turn. Real controller, real fake provider over HTTP, real media store on disk.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolDefinition } from '@crystal/core';
import { FakeProvider, type FakeReply, fakeConfig } from '@crystal/testkit';
import sharp from 'sharp';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Config, type ControllerEvent, imageMarker, SessionController } from '../src/index.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  await fake?.close();
  fake = undefined;
  controller = undefined;
});

let png: Buffer;
beforeAll(async () => {
  png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#0f0' } })
    .png()
    .toBuffer();
});

/** A tool that runs until the test opens its gate, so input can arrive during the batch. */
function gateTool(): { tool: ToolDefinition; open(): void; started: Promise<void> } {
  let release = (): void => {};
  let markStarted = (): void => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    tool: {
      name: 'gate',
      description: 'Waits for the test',
      parameters: { type: 'object', properties: {} },
      execute: async () => {
        markStarted();
        await gate;
        return 'gate opened';
      },
    },
    open: () => release(),
    started,
  };
}

async function open(replies: FakeReply[], options: { imageInput: boolean; tools?: ToolDefinition[]; home?: string }) {
  fake = await FakeProvider.start({ wire: 'anthropic', replies, whenExhausted: 'error' });
  const config = fakeConfig(fake.baseUriFor('anthropic'), {}, 'anthropic') as Config;
  const model = config.providers?.fake?.models['fake-model'];
  if (model) Object.assign(model, { imageInput: options.imageInput });
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'crystal-paths-'));
  controller = await SessionController.open({ home, workspace: home, config, env: {}, extraTools: options.tools ?? [] });
  controller.on((e) => {
    if (e.type === 'approval-requested') controller?.answerApproval(e.prompt.id, 'once');
  });
  const events: ControllerEvent[] = [];
  controller.on((e) => events.push(e));
  return { fake, controller, events, home, config };
}

const imagesIn = (body: unknown): number => (JSON.stringify(body).match(/"type":"image"/g) ?? []).length;
const headImages = (home: string, id: string) =>
  (JSON.parse(readFileSync(join(home, 'sessions', `${id}.json`), 'utf8')).images as Array<{ number: number }>).map(
    (r) => r.number,
  );
const callGate: FakeReply = { toolCalls: [{ id: 'g1', name: 'gate', arguments: {} }] };

describe('a follow-up sent after a tool batch is admitted like the message that starts a turn', () => {
  it('IMG-12 an image pasted into a follow-up reaches the model and is saved with the session, so a resume keeps it', async () => {
    const gate = gateTool();
    const first = await open([callGate, { text: 'a green box' }], { imageInput: true, tools: [gate.tool] });
    const { home } = first;
    let { controller } = first;
    controller.submit('start');
    await gate.started;
    const attached = await controller.attachments.attach(png, { name: 'green.png' });
    const text = `look at ${imageMarker(attached.number)}`;
    controller.submit(text, [{ start: 8, number: attached.number }]);
    expect(controller.queue.map((q) => q.kind)).toEqual(['message']);
    gate.open();
    await controller.whenIdle();
    expect(first.fake.requests).toHaveLength(2);
    expect(imagesIn(first.fake.requests[1]?.body)).toBe(1);
    const id = controller.session.id;
    expect(headImages(home, id)).toEqual([attached.number]);

    // After a resume the image is still there: the next request carries it again.
    await controller.close();
    await first.fake.close();
    const next = await FakeProvider.start({ wire: 'anthropic', replies: [{ text: 'still green' }], whenExhausted: 'error' });
    fake = next;
    const again = fakeConfig(next.baseUriFor('anthropic'), {}, 'anthropic') as Config;
    Object.assign(again.providers?.fake?.models['fake-model'] ?? {}, { imageInput: true });
    controller = await SessionController.open({ home, workspace: home, config: again, env: {}, resume: id });
    const notes: string[] = [];
    controller.on((e) => {
      if (e.type === 'note') notes.push(e.text);
    });
    controller.submit('and now?');
    await controller.whenIdle();
    expect(imagesIn(next.requests[0]?.body)).toBe(1);
    expect(notes.filter((n) => n.includes('is not sent'))).toEqual([]);
  });

  it('MODEL-1 a text-only model refuses a follow-up with an image before any request carries it, with a clear error', async () => {
    const gate = gateTool();
    const { controller, fake, events } = await open([callGate, { text: 'done' }], { imageInput: false, tools: [gate.tool] });
    controller.submit('start');
    await gate.started;
    const attached = await controller.attachments.attach(png, { name: 'green.png' });
    controller.submit(`look at ${imageMarker(attached.number)}`, [{ start: 8, number: attached.number }]);
    gate.open();
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(2);
    const second = JSON.stringify(fake.requests[1]?.body);
    expect(second).not.toContain('look at');
    const errors = events.filter((e) => e.type === 'error').map((e) => (e as { message: string }).message);
    expect(errors).toEqual([expect.stringContaining('does not accept images')]);
    expect(errors[0]).toContain(`[Image #${attached.number}]`);
  });
});

describe('the message that starts a turn', () => {
  it('MODEL-1 a text-only model refuses a message with an attached image at submit: an error naming it, no request', async () => {
    const { controller, fake, events } = await open([{ text: 'never' }], { imageInput: false });
    const attached = await controller.attachments.attach(png, { name: 'green.png' });
    controller.submit(`look at ${imageMarker(attached.number)}`, [{ start: 8, number: attached.number }]);
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(0);
    const errors = events.filter((e) => e.type === 'error').map((e) => (e as { message: string }).message);
    expect(errors).toEqual([expect.stringContaining(`does not accept images`)]);
    expect(controller.session.history()).toEqual([]);
  });

  it('IMG-7 an unsent image deleted from the composer while idle is discarded at once', async () => {
    const { controller, fake, events } = await open([{ text: 'nothing to see' }], { imageInput: true });
    const attached = await controller.attachments.attach(png, { name: 'gone.png' });
    controller.composerImages([attached.number]);
    controller.composerImages([]);
    await controller.whenIdle();
    // Typed back by hand, the marker finds no image: nothing is sent, and one note says why.
    controller.submit(`${imageMarker(attached.number)} here?`, [{ start: 0, number: attached.number }]);
    await controller.whenIdle();
    expect(imagesIn(fake.requests[0]?.body)).toBe(0);
    const notes = events.filter((e) => e.type === 'note').map((e) => (e as { text: string }).text);
    expect(notes).toContainEqual(expect.stringContaining(`[Image #${attached.number}] is not sent`));
  });
});

describe('IMG-7 a queued message discards only the images deleted from the composer', () => {
  it("IMG-7 an image pasted into the composer while a queued message waits survives that message's turn and is sent with the next", async () => {
    const { controller, fake, events } = await open(
      [{ textTokens: 40, delayMs: 10 }, { text: 'queued answer' }, { text: 'saw it' }],
      { imageInput: true },
    );
    controller.submit('first');
    for (let i = 0; i < 400 && controller.activity === 'idle'; i++) await new Promise((r) => setTimeout(r, 5));
    controller.submit('queued one');
    const attached = await controller.attachments.attach(png, { name: 'next.png' });
    controller.composerImages([attached.number]);
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(2);
    // Enter sends the composer; then the surface reports it empty.
    controller.submit(`${imageMarker(attached.number)} what is this`, [{ start: 0, number: attached.number }]);
    controller.composerImages([]);
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(3);
    expect(imagesIn(fake.requests[2]?.body)).toBe(1);
    const notes = events.filter((e) => e.type === 'note').map((e) => (e as { text: string }).text);
    expect(notes.filter((n) => n.includes('is not sent'))).toEqual([]);
  });

  it('IMG-7 an image deleted from the composer during a turn is discarded when the next message is admitted', async () => {
    const { controller, fake, events } = await open(
      [{ textTokens: 40, delayMs: 10 }, { text: 'queued answer' }, { text: 'late' }],
      { imageInput: true },
    );
    controller.submit('first');
    for (let i = 0; i < 400 && controller.activity === 'idle'; i++) await new Promise((r) => setTimeout(r, 5));
    const attached = await controller.attachments.attach(png, { name: 'gone.png' });
    controller.composerImages([attached.number]);
    controller.submit('queued one');
    controller.composerImages([]);
    await controller.whenIdle();
    expect(fake.requests).toHaveLength(2);
    // The deleted draft is gone: a marker typed later for it sends nothing and says why once.
    controller.submit(`${imageMarker(attached.number)} again`, [{ start: 0, number: attached.number }]);
    await controller.whenIdle();
    expect(imagesIn(fake.requests[2]?.body)).toBe(0);
    const notes = events.filter((e) => e.type === 'note').map((e) => (e as { text: string }).text);
    expect(notes).toContainEqual(expect.stringContaining(`[Image #${attached.number}] is not sent`));
  });
});
