import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_IMAGE_LIMITS,
  ImageError,
  imageLimitsFrom,
  MIB,
  mimeFromFileName,
  sniffImageMime,
  validateImage,
} from '../src/images/index.js';
import { UsageError } from '../src/errors.js';
import { cut, FORMATS, limits, MIME, makeImage, pngHeaderOnly } from './images-fixtures.js';

async function refusal(promise: Promise<unknown>): Promise<ImageError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImageError);
  return error as ImageError;
}

describe('image limits', () => {
  it('WEB-1 defaults: 20 MiB per image, 50 megapixels, 20 images and 50 MiB per message', () => {
    expect(imageLimitsFrom(undefined)).toEqual({
      maxImageBytes: 20 * MIB,
      maxPixels: 50_000_000,
      maxImagesPerMessage: 20,
      maxBatchBytes: 50 * MIB,
    });
  });

  it('WEB-1 config.json → images overrides each key; a bad value names its key', () => {
    expect(imageLimitsFrom({ maxImagesPerMessage: 3, maxBatchBytes: 1000 })).toMatchObject({
      maxImageBytes: 20 * MIB,
      maxImagesPerMessage: 3,
      maxBatchBytes: 1000,
    });
    expect(() => imageLimitsFrom({ maxPixels: 0 })).toThrow(UsageError);
    expect(() => imageLimitsFrom({ maxPixels: 1.5 })).toThrow(/images\.maxPixels must be a positive whole number/);
  });
});

describe('validateImage', () => {
  it('IMG-8 accepts real PNG, JPEG, GIF and WebP images of several sizes, by their magic bytes', async () => {
    for (const format of FORMATS) {
      for (const [width, height] of [
        [1, 1],
        [64, 48],
        [320, 200],
      ] as const) {
        const bytes = await makeImage(format, width, height, { noise: true });
        const image = await validateImage(bytes, { limits: DEFAULT_IMAGE_LIMITS });
        expect(image).toEqual({
          mime: MIME[format],
          width,
          height,
          frames: 1,
          bytes: bytes.length,
          hash: createHash('sha256').update(bytes).digest('hex'),
        });
      }
    }
  });

  it('IMG-8 detects the type from the signature only: PNG, JPEG, GIF87a/89a, RIFF....WEBP', () => {
    expect(sniffImageMime(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]))).toBe('image/png');
    expect(sniffImageMime(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffImageMime(Buffer.from('GIF87a....'))).toBe('image/gif');
    expect(sniffImageMime(Buffer.from('GIF89a....'))).toBe('image/gif');
    expect(sniffImageMime(Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 '))).toBe('image/webp');
    expect(sniffImageMime(Buffer.from('RIFF\x10\x00\x00\x00WAVEfmt '))).toBeUndefined();
    expect(sniffImageMime(Buffer.from('BM6\x00\x00\x00'))).toBeUndefined();
    expect(sniffImageMime(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeUndefined();
  });

  it('IMG-8 refuses an empty file and garbage bytes with the reference messages', async () => {
    const empty = await refusal(validateImage(Buffer.alloc(0), { limits: DEFAULT_IMAGE_LIMITS }));
    expect(empty.kind).toBe('empty');
    expect(empty.message).toBe('The image file is empty.');
    const garbage = await refusal(validateImage(Buffer.from('this is not an image at all'), { limits: DEFAULT_IMAGE_LIMITS }));
    expect(garbage.kind).toBe('unsupported_type');
    expect(garbage.message).toBe('The file is not a supported PNG, JPEG, GIF, or WebP image.');
  });

  it('IMG-8 refuses more than 20 MiB before reading the content, naming the image and the limit', async () => {
    const bytes = Buffer.alloc(20 * MIB + 1, 0x41);
    const error = await refusal(validateImage(bytes, { name: 'huge.png', limits: DEFAULT_IMAGE_LIMITS }));
    expect(error.kind).toBe('too_large');
    expect(error.message).toBe('huge.png: the image file exceeds the 20 MiB host limit (it is 20.0 MiB).');
  });

  it('WEB-1 refuses an image over a configured byte limit, naming its position and name', async () => {
    const bytes = await makeImage('png', 200, 200, { noise: true });
    const error = await refusal(validateImage(bytes, { name: 'shot.png', position: 2, limits: limits({ maxImageBytes: 4096 }) }));
    expect(error.kind).toBe('too_large');
    expect(error.position).toBe(2);
    expect(error.imageName).toBe('shot.png');
    // A size that is a whole number of KiB is written without a decimal (limits.ts formatBytes).
    expect(error.message).toMatch(
      /^Image 2 \(shot\.png\): the image file exceeds the 4 KiB host limit \(it is \d+(\.\d)? KiB\)\.$/,
    );
  });

  it('IMG-8 refuses truncated copies (cut to 50-60%) of every format: the pixels are really decoded', async () => {
    for (const format of FORMATS) {
      const whole = await makeImage(format, 160, 120, { noise: true });
      for (const fraction of [0.5, 0.55, 0.6]) {
        const error = await refusal(validateImage(cut(whole, fraction), { name: `cut.${format}`, limits: DEFAULT_IMAGE_LIMITS }));
        expect(error.kind, `${format} at ${fraction}`).toBe('corrupt');
        expect(error.message).toContain('is truncated or damaged and cannot be decoded');
      }
    }
  });

  it('IMG-8 refuses the truncations libvips lets through: a PNG cut inside IEND, a GIF without its trailer, an animation cut after a frame', async () => {
    const png = await makeImage('png', 80, 60, { noise: true });
    const gif = await makeImage('gif', 80, 60, { noise: true });
    const animation = await makeImage('gif', 60, 40, { noise: true, frames: 4 });
    for (const bytes of [
      png.subarray(0, png.length - 4),
      gif.subarray(0, gif.length - 1),
      cut(animation, 0.55),
      cut(animation, 0.95),
    ]) {
      expect((await refusal(validateImage(bytes, { limits: DEFAULT_IMAGE_LIMITS }))).kind).toBe('corrupt');
    }
    expect(await validateImage(animation, { limits: DEFAULT_IMAGE_LIMITS })).toMatchObject({
      mime: 'image/gif',
      width: 60,
      height: 40,
      frames: 4,
    });
  });

  it('IMG-8 refuses a PNG renamed .jpg, and bytes whose declared type differs (mime_mismatch)', async () => {
    const png = await makeImage('png', 32, 32);
    const renamed = await refusal(validateImage(png, { name: 'photo.jpg', limits: DEFAULT_IMAGE_LIMITS }));
    expect(renamed.kind).toBe('mime_mismatch');
    expect(renamed.message).toBe('photo.jpg: the file name says JPEG but its bytes are a PNG image; rename it to .png.');
    const declared = await refusal(validateImage(png, { declaredMime: 'image/jpeg', position: 1, limits: DEFAULT_IMAGE_LIMITS }));
    expect(declared.kind).toBe('mime_mismatch');
    expect(declared.message).toBe(
      'Image 1: the file is declared as image/jpeg but its bytes are a PNG image; declare it as image/png.',
    );
    // A declared type wins over the name; aliases and parameters are normalised; octet-stream declares nothing.
    const jpeg = await makeImage('jpeg', 32, 32);
    expect(
      (await validateImage(jpeg, { declaredMime: 'Image/JPG; q=1', name: 'x.jpeg', limits: DEFAULT_IMAGE_LIMITS })).mime,
    ).toBe('image/jpeg');
    expect((await validateImage(png, { declaredMime: 'application/octet-stream', limits: DEFAULT_IMAGE_LIMITS })).mime).toBe(
      'image/png',
    );
    expect((await validateImage(png, { name: 'clipboard', limits: DEFAULT_IMAGE_LIMITS })).mime).toBe('image/png');
    expect(mimeFromFileName('A.WEBP')).toBe('image/webp');
  });

  it('WEB-1 refuses too many pixels, counting every frame of an animation', async () => {
    const still = await makeImage('png', 200, 100);
    const error = await refusal(validateImage(still, { name: 'wide.png', limits: limits({ maxPixels: 19_999 }) }));
    expect(error.kind).toBe('too_many_pixels');
    expect(error.message).toBe('wide.png: the image has 200×100 pixels (20000 pixels); the limit is 19999 pixels.');
    expect(await validateImage(still, { limits: limits({ maxPixels: 20_000 }) })).toMatchObject({ width: 200, height: 100 });
    const animation = await makeImage('gif', 100, 100, { frames: 3, noise: true });
    const frames = await refusal(validateImage(animation, { limits: limits({ maxPixels: 29_999 }) }));
    expect(frames.kind).toBe('too_many_pixels');
    expect(frames.message).toContain('3 frames of 100×100 pixels (30000 pixels in all)');
  });

  it('WEB-1 refuses a decompression bomb from its header, before decoding 900 megapixels', async () => {
    const bomb = pngHeaderOnly(30_000, 30_000);
    expect(bomb.length).toBeLessThan(100);
    const error = await refusal(validateImage(bomb, { limits: DEFAULT_IMAGE_LIMITS }));
    expect(error.kind).toBe('too_many_pixels');
    expect(error.message).toBe('The image has 30000×30000 pixels (900 megapixels); the limit is 50 megapixels.');
  });

  it('IMG-8 reports the displayed size of a rotated JPEG (EXIF orientation applied)', async () => {
    const sharp = (await import('sharp')).default;
    const rotated = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#0f0' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    expect(await validateImage(rotated, { limits: DEFAULT_IMAGE_LIMITS })).toMatchObject({ width: 20, height: 40 });
  });
});
