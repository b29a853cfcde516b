/**
 * Fitting an image to the selected provider before a request. The stored original is never
 * touched: the result is a new buffer used for this request only.
 *
 * The table holds what each wire documents (or, where it documents nothing, the contract it
 * imitates); `source` says which. Side and pixel limits are where the provider would shrink
 * the image itself, so sending more only costs upload time and latency; byte limits are hard
 * refusals. Every provider gets a still image: an animation becomes its first frame, because
 * OpenAI accepts only non-animated GIF, Gemini takes no GIF at all, and the others document
 * still images only.
 *
 * Steps: keep the bytes when type, size and frame count already fit; else decode the first
 * frame with EXIF orientation applied, shrink to fit (never enlarge) and re-encode in the same
 * type when the provider accepts it (GIF becomes PNG, lossless); when that is still over the
 * byte limit, JPEG at falling quality, then smaller sides, until it fits.
 */
import type { Protocol } from '@crystal/providers';
import { formatBytes, MIB } from './limits.js';
import { ImageError, type ImageMime, loadSharp, sniffImageMime } from './validate.js';

export interface ProviderImageRules {
  /** Types sent as they are. JPEG is always among them (the fallback encoding). */
  readonly formats: readonly ImageMime[];
  /** Longest side in pixels after orientation. */
  readonly maxLongSide: number;
  /** Pixels of the image (one frame), when the provider scales by area too. */
  readonly maxPixels?: number;
  /** Raw bytes per image; the Base64 on the wire is a third larger. */
  readonly maxBytes: number;
  /** Where these numbers come from. */
  readonly source: string;
}

const OPENAI: ProviderImageRules = {
  formats: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'],
  maxLongSide: 2048,
  maxBytes: 20_000_000,
  source:
    'OpenAI vision guide: PNG, JPEG, WebP and non-animated GIF, up to 20 MB per image (50 MB per request); ' +
    'high detail fits the image within 2048×2048 before tiling, so a longer side is never seen.',
};

export const PROVIDER_IMAGE_RULES: Readonly<Record<Protocol, ProviderImageRules>> = Object.freeze({
  responses: OPENAI,
  openai: OPENAI,
  deepseek: {
    ...OPENAI,
    source:
      'DeepSeek documents no image limits for its OpenAI-compatible Chat Completions; the OpenAI contract it imitates applies.',
  },
  anthropic: {
    formats: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'],
    maxLongSide: 1568,
    maxPixels: 1_192_464,
    maxBytes: (5 * MIB * 3) / 4,
    source:
      'Anthropic vision guide: JPEG, PNG, GIF, WebP; images over 1568 px on the long side or about 1.15 megapixels ' +
      '(1092×1092) are downscaled by the API (hard limits 8000 px, 2000 px above 20 images); the 5 MB cap applies to ' +
      'the Base64 text, so raw bytes stay under 3.75 MiB.',
  },
  gemini: {
    formats: ['image/png', 'image/jpeg', 'image/webp'],
    maxLongSide: 3072,
    maxBytes: 14 * MIB,
    source:
      'Gemini image understanding: PNG, JPEG, WebP, HEIC, HEIF (no GIF); larger images are scaled to fit 3072×3072; ' +
      'inline data shares a 20 MB request, so one image stays under 14 MiB raw (about 18.7 MiB of Base64).',
  },
  ollama: {
    formats: ['image/png', 'image/jpeg'],
    maxLongSide: 1568,
    maxPixels: 1_192_464,
    maxBytes: 20 * MIB,
    source:
      'Ollama documents no limits; its image decoding reliably reads PNG and JPEG, and local vision encoders ' +
      '(Gemma 3 896 px, Llama 3.2 Vision 1120 px, Qwen2.5-VL about 1 megapixel) see at most about 1 megapixel, ' +
      "so Anthropic's 1568 px / 1.15 megapixel bound keeps local context and upload small without losing detail.",
  },
});

export interface ProviderImageInput {
  readonly bytes: Uint8Array;
  /** The detected type; sniffed when absent. */
  readonly mime?: ImageMime | undefined;
}

export interface PreparedImage {
  readonly mime: ImageMime;
  /** Base64, as `ImagePart.data` carries it. */
  readonly data: string;
  readonly width: number;
  readonly height: number;
  /** Raw byte length of what is sent. */
  readonly bytes: number;
  /** False when the original bytes are sent unchanged. */
  readonly changed: boolean;
}

type SharpFactory = Awaited<ReturnType<typeof loadSharp>>;

/** The image as `protocol` accepts it; throws `ImageError` only when nothing fits the byte limit. */
export async function prepareForProvider(image: ProviderImageInput, protocol: Protocol): Promise<PreparedImage> {
  const rules = PROVIDER_IMAGE_RULES[protocol];
  const mime = image.mime ?? sniffImageMime(image.bytes);
  if (!mime) throw new ImageError('unsupported_type', 'the file is not a supported PNG, JPEG, GIF, or WebP image.');
  const sharp = await loadSharp();
  const meta = await sharp(image.bytes, { limitInputPixels: false }).metadata();
  const frames = meta.pages ?? 1;
  const { width, height } = meta.autoOrient ?? { width: meta.width ?? 0, height: meta.height ?? 0 };
  const scale = fitScale(width, height, rules);
  if (scale === 1 && frames === 1 && rules.formats.includes(mime) && image.bytes.length <= rules.maxBytes) {
    const data = Buffer.from(image.bytes.buffer, image.bytes.byteOffset, image.bytes.byteLength).toString('base64');
    return { mime, data, width, height, bytes: image.bytes.length, changed: false };
  }
  const keep: ImageMime = rules.formats.includes(mime) && mime !== 'image/gif' ? mime : 'image/png';
  const attempts: { mime: ImageMime; scale: number; quality: number }[] = [{ mime: keep, scale, quality: 90 }];
  for (let s = scale, i = 0; i < 8; i++, s *= 0.75)
    for (const quality of [85, 70, 55]) attempts.push({ mime: 'image/jpeg', scale: s, quality });
  let smallest = Number.POSITIVE_INFINITY;
  for (const attempt of attempts) {
    const w = Math.max(1, Math.round(width * attempt.scale));
    const h = Math.max(1, Math.round(height * attempt.scale));
    const out = await encode(sharp, image.bytes, w, h, attempt.mime, attempt.quality);
    if (out.length <= rules.maxBytes)
      return { mime: attempt.mime, data: out.toString('base64'), width: w, height: h, bytes: out.length, changed: true };
    smallest = Math.min(smallest, out.length);
  }
  throw new ImageError(
    'too_large',
    `the image cannot be made smaller than ${formatBytes(smallest)} for ${protocol}, whose limit is ${formatBytes(rules.maxBytes)}.`,
  );
}

/** The factor (≤ 1) that fits the long side and the pixel count. */
export function fitScale(width: number, height: number, rules: ProviderImageRules): number {
  let scale = Math.min(1, rules.maxLongSide / Math.max(width, height, 1));
  if (rules.maxPixels !== undefined && width * height * scale * scale > rules.maxPixels) {
    scale = Math.sqrt(rules.maxPixels / (width * height));
  }
  // Rounding must not push a side or the area back over the limit.
  while (
    scale < 1 &&
    (Math.round(width * scale) > rules.maxLongSide ||
      Math.round(height * scale) > rules.maxLongSide ||
      (rules.maxPixels !== undefined && Math.round(width * scale) * Math.round(height * scale) > rules.maxPixels))
  ) {
    scale *= 0.999;
  }
  return scale;
}

async function encode(
  sharp: SharpFactory,
  bytes: Uint8Array,
  w: number,
  h: number,
  mime: ImageMime,
  quality: number,
): Promise<Buffer> {
  const pipeline = sharp(bytes, { limitInputPixels: false }).autoOrient().resize({ width: w, height: h, fit: 'fill' });
  switch (mime) {
    case 'image/png':
      return pipeline.png().toBuffer();
    case 'image/webp':
      return pipeline.webp({ quality }).toBuffer();
    case 'image/gif':
      return pipeline.gif().toBuffer();
    case 'image/jpeg':
      return pipeline.flatten({ background: '#ffffff' }).jpeg({ quality }).toBuffer();
  }
}

/**
 * Prepared images by content hash and protocol, so a long conversation does not re-encode its
 * images on every model round. Bounded by the Base64 it holds.
 */
export class PreparedImageCache {
  private readonly entries = new Map<string, PreparedImage>();
  private held = 0;

  constructor(private readonly budget = 64 * MIB) {}

  async get(hash: string, protocol: Protocol, load: () => Promise<ProviderImageInput>): Promise<PreparedImage> {
    const key = `${protocol}:${hash}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const prepared = await prepareForProvider(await load(), protocol);
    this.entries.set(key, prepared);
    this.held += prepared.data.length;
    for (const [oldKey, old] of this.entries) {
      if (this.held <= this.budget || oldKey === key) break;
      this.entries.delete(oldKey);
      this.held -= old.data.length;
    }
    return prepared;
  }
}
