/**
 * Image limits (IMG-8, WEB-1): `config.json` → `images`. The lead hands the parsed object in;
 * an omitted key keeps its default.
 *
 * - `maxImageBytes` 20 MiB: the reference's host cap (`ImageFile.MaximumBytes`, IMG-8).
 * - `maxPixels` 50 megapixels, counted over every frame of an animation. Full-resolution
 *   phone photos reach 48-50 MP (8064×6048) and an 8K screenshot is 33 MP, so real images
 *   pass; a decompression bomb (a few KiB of PNG declaring 30000×30000) is refused before it
 *   is decoded. Validation decodes the whole image, so this also bounds the decode buffer
 *   (50 MP × 4 channels = 200 MB at most, freed at once). sharp's own default, 268 MP, would
 *   allow a 1 GB buffer.
 * - `maxImagesPerMessage` 20: Anthropic lowers its per-image side limit to 2000 px above 20
 *   images in one request, and no shipped provider refuses 20.
 * - `maxBatchBytes` 50 MiB: OpenAI's documented image bytes per request (50 MB); also the
 *   Web host's request buffering bound (WEB-4).
 */
import { UsageError } from '../errors.js';

export const MIB = 1024 * 1024;

export interface ImageLimits {
  /** Per-image byte cap (IMG-8). */
  readonly maxImageBytes: number;
  /** Per-image decoded pixels, width × height × frames (WEB-1). */
  readonly maxPixels: number;
  /** Images in one message (WEB-1). */
  readonly maxImagesPerMessage: number;
  /** Bytes of all images in one message (WEB-1). */
  readonly maxBatchBytes: number;
}

/** The shape of `config.json` → `images`, every key optional. */
export type ImageLimitsConfig = { readonly [K in keyof ImageLimits]?: ImageLimits[K] | undefined };

export const DEFAULT_IMAGE_LIMITS: ImageLimits = Object.freeze({
  maxImageBytes: 20 * MIB,
  maxPixels: 50_000_000,
  maxImagesPerMessage: 20,
  maxBatchBytes: 50 * MIB,
});

/** Limits from `config.json` → `images`; each value must be a positive integer. */
export function imageLimitsFrom(config: ImageLimitsConfig | undefined = undefined): ImageLimits {
  const pick = (key: keyof ImageLimits): number => {
    const value = config?.[key];
    if (value === undefined) return DEFAULT_IMAGE_LIMITS[key];
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new UsageError(`config.json → images.${key} must be a positive whole number (got ${String(value)}).`);
    }
    return value;
  };
  return Object.freeze({
    maxImageBytes: pick('maxImageBytes'),
    maxPixels: pick('maxPixels'),
    maxImagesPerMessage: pick('maxImagesPerMessage'),
    maxBatchBytes: pick('maxBatchBytes'),
  });
}

/** `20 MiB`, `512 KiB`, `1000 bytes`: a limit as the operator wrote it, or a size rounded to one decimal. */
export function formatBytes(bytes: number): string {
  if (bytes >= MIB) return bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${(bytes / MIB).toFixed(1)} MiB`;
  if (bytes >= 1024) return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/** `50 megapixels`, `1.2 megapixels`, `4000 pixels`. */
export function formatPixels(pixels: number): string {
  if (pixels < 100_000) return `${pixels} pixels`;
  const mp = pixels / 1_000_000;
  return `${Number.isInteger(mp) ? mp : mp.toFixed(1)} megapixels`;
}
