import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeProvider, fakeConfig } from '@crystal/testkit';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, imageMarker, SessionController, SessionFiles } from '../src/index.js';

let fake: FakeProvider | undefined;
let controller: SessionController | undefined;
afterEach(async () => {
  await controller?.close().catch(() => undefined);
  await fake?.close();
});

const headOf = (home: string, id: string) => JSON.parse(readFileSync(join(home, 'sessions', `${id}.json`), 'utf8'));

describe('images in the session', () => {
  it('HIST-8 IMG-12 an image is kept while either transcript mentions it, and only then', async () => {
    fake = await FakeProvider.start({
      wire: 'anthropic',
      replies: [{ text: 'a red box' }, { text: 'later' }, { text: '## Objective\n- saw a box' }],
    });
    const config = fakeConfig(fake.baseUriFor('anthropic'), {}, 'anthropic') as Config;
    const model = config.providers?.fake?.models['fake-model'];
    if (model) Object.assign(model, { imageInput: true });
    const home = mkdtempSync(join(tmpdir(), 'crystal-img-session-'));
    controller = await SessionController.open({ home, workspace: home, config, env: {} });
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
      .png()
      .toBuffer();
    const attached = await controller.attachments.attach(png, { name: 'box.png' });
    // An attached image that is never sent is not persisted (IMG-7, IMG-12).
    const unsent = await controller.attachments.attach(png, { name: 'unsent.png' });
    controller.submit(`what is this? ${imageMarker(attached.number)}`, [{ start: 14, number: attached.number }]);
    await controller.whenIdle();
    controller.submit('and then?');
    await controller.whenIdle();
    controller.submit('/compact');
    await controller.whenIdle();
    const id = controller.session.id;
    const { state } = SessionFiles.load(home, id);
    expect(JSON.stringify(state.context)).not.toContain(`[Image #${attached.number}]`);
    expect(JSON.stringify(state.archive)).toContain(`[Image #${attached.number}]`);
    const records = headOf(home, id).images as Array<{ number: number; contentHash: string; data?: string }>;
    expect(records.map((r) => r.number)).toEqual([attached.number]);
    expect(records.map((r) => r.number)).not.toContain(unsent.number);
    expect(records[0]?.data).toBeUndefined();
    expect(readdirSync(join(home, 'media'))).toContain(records[0]?.contentHash);
    controller.submit('/clear');
    await controller.whenIdle();
    await controller.session.save();
    expect(headOf(home, controller.session.id).images).toEqual([]);
  });
});
