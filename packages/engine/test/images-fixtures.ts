/** Real images for the image tests, made with sharp; plus temp Homes and small limits. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { DEFAULT_IMAGE_LIMITS, type ImageLimits } from '../src/images/index.js';

export type Format = 'png' | 'jpeg' | 'gif' | 'webp';

export const FORMATS: readonly Format[] = ['png', 'jpeg', 'gif', 'webp'];

export const MIME: Record<Format, string> = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

export interface MakeOptions {
  /** Frames of an animation (GIF, WebP). */
  readonly frames?: number;
  /** Gaussian noise: large, barely compressible files. */
  readonly noise?: boolean;
  readonly alpha?: boolean;
  readonly colour?: string;
}

/** A real encoded image of `width`×`height` (each frame). */
export async function makeImage(format: Format, width: number, height: number, options: MakeOptions = {}): Promise<Buffer> {
  const frames = options.frames ?? 1;
  const image = sharp({
    create: {
      width,
      height: height * frames,
      channels: options.alpha ? 4 : 3,
      background: options.colour ?? '#3a7bd5',
      ...(options.noise ? { noise: { type: 'gaussian' as const, mean: 128, sigma: 60 } } : {}),
      ...(frames > 1 ? { pageHeight: height } : {}),
    },
  });
  return image.toFormat(format).toBuffer();
}

/** The first `fraction` of the bytes: a truncated copy. */
export function cut(bytes: Uint8Array, fraction: number): Buffer {
  return Buffer.from(bytes.subarray(0, Math.floor(bytes.length * fraction)));
}

export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), 'crystal-images-'));
}

export function limits(overrides: Partial<ImageLimits> = {}): ImageLimits {
  return { ...DEFAULT_IMAGE_LIMITS, ...overrides };
}

/** A tiny PNG whose header declares `width`×`height`: a decompression bomb as far as the header goes. */
export function pngHeaderOnly(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A promise and the functions that settle it: a slow reader the test controls. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: Error) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
