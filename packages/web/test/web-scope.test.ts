/**
 * What version one of the Web surface leaves out on purpose (WEB-5, 6, 7, 9, 12), asserted on
 * the real host, CLI and engine so that adding one of them is a visible decision.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, estimateTokens, parseSessionImageRecords, SessionController } from '@crystal/engine';
import { FakeProvider, fakeConfig, runCrystal, tempHome } from '@crystal/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebHost, type WebHost } from '../src/index.js';

let fake: FakeProvider;
let controller: SessionController;
let host: WebHost;
beforeAll(async () => {
  fake = await FakeProvider.start({ replies: [{ text: 'ok' }] });
  const home = mkdtempSync(join(tmpdir(), 'crystal-web-scope-'));
  controller = await SessionController.open({ home, workspace: home, config: fakeConfig(fake.baseUri) as Config, env: {} });
  host = await startWebHost({ controller });
});
afterAll(async () => {
  await host?.close();
  await controller?.close();
  await fake?.close();
});

describe('the Web surface, version one', () => {
  it('WEB-5 WEB-11 the conversation face is the input registry plus scoped send, cancel and history: no transaction, rollback or policy snapshot', () => {
    const face = host.conversation as unknown as Record<string, unknown>;
    const methods = ['inputs', 'send', 'cancel', 'history'];
    for (const name of methods) expect(typeof face[name]).toBe('function');
    const proto = Object.getPrototypeOf(face) as object;
    const publicMethods = Object.getOwnPropertyNames(proto).filter(
      (n) => n !== 'constructor' && typeof Object.getOwnPropertyDescriptor(proto, n)?.value === 'function',
    );
    expect(publicMethods).toEqual(expect.arrayContaining(methods));
    for (const name of publicMethods) expect(name).not.toMatch(/transaction|rollback|commit|snapshot|policy/i);
  });

  it('WEB-6 provider and model stay configuration: crystal web takes no image-specific selection flag', async () => {
    const home = tempHome(fakeConfig(fake.baseUri));
    for (const flag of ['--image-model', '--image-provider', '--vision-model']) {
      const result = await runCrystal(['web', flag, 'x'], { home: home.path });
      expect(result.code, flag).toBe(1);
      expect(result.stderr).toContain(flag);
    }
    home.dispose();
  });

  it('WEB-7 WEB-9 the model facts that admission uses are the input modalities; images add no provider-neutral token estimate', () => {
    expect(Object.keys(controller.session.modelInfo).sort()).toEqual(['contextWindow', 'efforts', 'thinking']);
    expect(controller.session.imageInput).toBe(false);
    const text = { role: 'user' as const, content: [{ type: 'text' as const, text: 'describe these' }] };
    const withImages = {
      role: 'user' as const,
      content: [...text.content, { type: 'image' as const, mime: 'image/png', data: 'iVBORw0KGgo'.repeat(1000) }],
    };
    expect(estimateTokens([withImages])).toBe(estimateTokens([text]));
  });

  it('WEB-12 an image block has no alt-text field: its display name is the accessible text (WEB-8)', () => {
    const { records } = parseSessionImageRecords([
      { number: 1, mimeType: 'image/png', contentHash: 'a'.repeat(64), name: 'chart.png', alt: 'a chart' },
    ]);
    expect(records[0]).toEqual({ number: 1, mimeType: 'image/png', contentHash: 'a'.repeat(64), name: 'chart.png' });
    expect(Object.keys(records[0] ?? {})).not.toContain('alt');
  });
});
