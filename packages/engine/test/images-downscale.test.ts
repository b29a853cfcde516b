import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROTOCOLS, type Protocol } from '@crystal/providers';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import {
  AttachmentService,
  DEFAULT_IMAGE_LIMITS,
  fitScale,
  MediaStore,
  MIB,
  PreparedImageCache,
  PROVIDER_IMAGE_RULES,
  prepareForProvider,
} from '../src/images/index.js';
import { makeImage, tempHome } from './images-fixtures.js';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

async function facts(data: string): Promise<{ width: number; height: number; pages: number; format: string }> {
  const meta = await sharp(Buffer.from(data, 'base64')).metadata();
  return { width: meta.width ?? 0, height: meta.height ?? 0, pages: meta.pages ?? 1, format: meta.format ?? '' };
}

describe('provider image fitting', () => {
  it('every wire has rules that name their source, accept JPEG, and cap sides and bytes', () => {
    expect(Object.keys(PROVIDER_IMAGE_RULES).sort()).toEqual([...PROTOCOLS].sort());
    for (const protocol of PROTOCOLS) {
      const rules = PROVIDER_IMAGE_RULES[protocol];
      expect(rules.formats).toContain('image/jpeg');
      expect(rules.source.length).toBeGreaterThan(40);
      expect(rules.maxLongSide).toBeGreaterThan(0);
    }
    expect(PROVIDER_IMAGE_RULES.anthropic).toMatchObject({ maxLongSide: 1568, maxBytes: 3.75 * MIB });
    expect(PROVIDER_IMAGE_RULES.gemini.formats).not.toContain('image/gif');
  });

  it("a large photo is shrunk to each provider's limits and decodes to the size it reports", async () => {
    const photo = await makeImage('jpeg', 4000, 1000, { noise: true });
    for (const protocol of PROTOCOLS) {
      const rules = PROVIDER_IMAGE_RULES[protocol];
      const prepared = await prepareForProvider({ bytes: photo }, protocol);
      const decoded = await facts(prepared.data);
      expect(prepared.changed, protocol).toBe(true);
      expect(Math.max(decoded.width, decoded.height), protocol).toBeLessThanOrEqual(rules.maxLongSide);
      if (rules.maxPixels) expect(decoded.width * decoded.height, protocol).toBeLessThanOrEqual(rules.maxPixels);
      expect(prepared.bytes, protocol).toBeLessThanOrEqual(rules.maxBytes);
      expect(rules.formats, protocol).toContain(prepared.mime);
      expect([decoded.width, decoded.height]).toEqual([prepared.width, prepared.height]);
      expect(Math.abs(decoded.width / decoded.height - 4), protocol).toBeLessThan(0.02);
    }
  });

  it('an image that already fits is sent byte for byte', async () => {
    const small = await makeImage('png', 300, 200, { noise: true });
    for (const protocol of PROTOCOLS) {
      const prepared = await prepareForProvider({ bytes: small, mime: 'image/png' }, protocol);
      expect(prepared).toMatchObject({ changed: false, mime: 'image/png', width: 300, height: 200, bytes: small.length });
      expect(prepared.data).toBe(small.toString('base64'));
    }
  });

  it('a type the provider does not take is re-encoded: GIF for Gemini, WebP and GIF for Ollama', async () => {
    const gif = await makeImage('gif', 64, 64);
    const webp = await makeImage('webp', 64, 64);
    const cases: [Uint8Array, Protocol][] = [
      [gif, 'gemini'],
      [gif, 'ollama'],
      [webp, 'ollama'],
    ];
    for (const [bytes, protocol] of cases) {
      const prepared = await prepareForProvider({ bytes }, protocol);
      expect(prepared.changed).toBe(true);
      expect(PROVIDER_IMAGE_RULES[protocol].formats).toContain(prepared.mime);
      expect(await facts(prepared.data)).toMatchObject({ width: 64, height: 64 });
    }
    expect((await prepareForProvider({ bytes: gif }, 'anthropic')).changed).toBe(false);
  });

  it('an animation becomes its first frame for every provider (OpenAI takes only non-animated GIF)', async () => {
    const animation = await makeImage('gif', 40, 30, { frames: 3, noise: true });
    for (const protocol of PROTOCOLS) {
      const prepared = await prepareForProvider({ bytes: animation }, protocol);
      expect(await facts(prepared.data), protocol).toMatchObject({ width: 40, height: 30, pages: 1 });
    }
  });

  it("a PNG over Anthropic's Base64 byte cap falls back to JPEG until it fits", async () => {
    const noisy = await makeImage('png', 1500, 1000, { noise: true, alpha: true });
    expect(noisy.length).toBeGreaterThan(PROVIDER_IMAGE_RULES.anthropic.maxBytes);
    const prepared = await prepareForProvider({ bytes: noisy }, 'ollama');
    expect(prepared.mime).toBe('image/png');
    const anthropic = await prepareForProvider({ bytes: noisy }, 'anthropic');
    expect(anthropic.mime).toBe('image/jpeg');
    expect(anthropic.bytes).toBeLessThanOrEqual(PROVIDER_IMAGE_RULES.anthropic.maxBytes);
    expect(anthropic.data.length).toBeLessThanOrEqual(5 * MIB);
  });

  it('a rotated JPEG is re-encoded upright when it must be shrunk', async () => {
    const rotated = await sharp({ create: { width: 3000, height: 1000, channels: 3, background: '#0f0' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const prepared = await prepareForProvider({ bytes: rotated }, 'anthropic');
    const decoded = await facts(prepared.data);
    expect(decoded.height).toBeGreaterThan(decoded.width);
    expect(decoded.height).toBeLessThanOrEqual(1568);
  });

  it('rounding never pushes a side or the area over the limit', () => {
    for (const [w, h] of [
      [3137, 3136],
      [1569, 1],
      [4000, 2999],
      [1093, 1093],
    ] as const) {
      for (const protocol of PROTOCOLS) {
        const rules = PROVIDER_IMAGE_RULES[protocol];
        const s = fitScale(w, h, rules);
        const [rw, rh] = [Math.max(1, Math.round(w * s)), Math.max(1, Math.round(h * s))];
        expect(Math.max(rw, rh)).toBeLessThanOrEqual(rules.maxLongSide);
        if (rules.maxPixels) expect(rw * rh).toBeLessThanOrEqual(rules.maxPixels);
      }
    }
  });

  it('the stored original stays untouched: fitting reads it and sends a new buffer', async () => {
    const home = tempHome();
    const attachments = new AttachmentService({ store: MediaStore.forHome(home, DEFAULT_IMAGE_LIMITS) });
    const original = await makeImage('png', 4000, 400, { noise: true });
    const attachment = await attachments.attach(original, { draft: false });
    for (const protocol of PROTOCOLS) {
      const { images } = await attachments.imagesForRequest([attachment.number], protocol);
      const part = images.get(attachment.number);
      expect(part?.data && Buffer.from(part.data, 'base64').length, protocol).toBeLessThan(original.length);
    }
    const stored = readFileSync(join(home, 'media', attachment.hash));
    expect(sha256(stored)).toBe(attachment.hash);
    expect(stored.equals(original)).toBe(true);
  });

  it('prepared images are cached by hash and protocol', async () => {
    const cache = new PreparedImageCache();
    const bytes = await makeImage('png', 2000, 100);
    let loads = 0;
    const load = async () => {
      loads++;
      return { bytes };
    };
    const first = await cache.get('h', 'anthropic', load);
    expect(await cache.get('h', 'anthropic', load)).toBe(first);
    await cache.get('h', 'gemini', load);
    expect(loads).toBe(2);
  });
});
