/**
 * Storage-free image validation (IMG-8, WEB-3, WEB-10): byte cap, MIME by magic bytes (PNG,
 * JPEG, GIF, WebP only), the declared type, the pixel limit, and a real decode of every pixel.
 *
 * Order matters: the cheap checks (size, signature, declared type, header) come first, and the
 * pixel limit is checked from the header before anything is decoded, so a decompression bomb
 * never allocates its buffer. `metadata()` alone accepts truncated files, so the pixels are
 * decoded with `failOn: 'error'`. libvips tolerates two truncations silently (a PNG cut inside
 * its IEND chunk, a GIF cut anywhere after its first frame: the missing frames just vanish),
 * so PNG chunks and GIF blocks are also walked to their end marker.
 *
 * A decode verdict is remembered by content hash (a small LRU), so the media store's second
 * validation (IMG-8) of bytes the attachment service has just decoded costs a hash, not a
 * second decode.
 */
import { extname } from 'node:path';
import { importOutside, sha256Hex as hashHex } from '@crystal/core';
import { formatBytes, formatPixels, type ImageLimits } from './limits.js';

export type ImageMime = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

export const IMAGE_MIMES: readonly ImageMime[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

export type ImageErrorKind =
  | 'empty'
  | 'unsupported_type'
  | 'too_large'
  | 'too_many_pixels'
  | 'corrupt'
  | 'mime_mismatch'
  | 'too_many_images'
  | 'batch_too_large';

/** Which image a message is about: its display name and/or its 1-based place in a batch. */
export interface ImageSubject {
  readonly name?: string | undefined;
  readonly position?: number | undefined;
}

/** A refused image. `message` names the image (when known) and the rule it broke. */
export class ImageError extends Error {
  override readonly name = 'ImageError';
  readonly imageName: string | undefined;
  readonly position: number | undefined;

  constructor(
    readonly kind: ImageErrorKind,
    /** The rule, as a sentence without the image's name. */
    readonly rule: string,
    subject: ImageSubject = {},
  ) {
    super(withSubject(subject, rule));
    this.imageName = subject.name;
    this.position = subject.position;
  }
}

/** `Image 3 (cat.png): the rule.`, `cat.png: the rule.`, or `The rule.` when nothing names the image. */
function withSubject(subject: ImageSubject, rule: string): string {
  const label = subjectLabel(subject);
  return label ? `${label}: ${rule}` : rule.charAt(0).toUpperCase() + rule.slice(1);
}

export function subjectLabel(subject: ImageSubject): string {
  const { name, position } = subject;
  if (position !== undefined) return name ? `Image ${position} (${name})` : `Image ${position}`;
  return name ?? '';
}

export interface ValidateOptions extends ImageSubject {
  /** The MIME type the caller claims (a browser's `File.type`, a clipboard type, a tool's part). */
  readonly declaredMime?: string | undefined;
  readonly limits: ImageLimits;
}

export interface ValidatedImage {
  readonly mime: ImageMime;
  /** Displayed size (EXIF orientation applied), one frame. */
  readonly width: number;
  readonly height: number;
  /** 1 for a still image. */
  readonly frames: number;
  /** Byte length. */
  readonly bytes: number;
  /** Lower-case hex SHA-256 of the bytes: the media store's file name (IMG-9). */
  readonly hash: string;
}

const LABEL: Record<ImageMime, string> = { 'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/gif': 'GIF', 'image/webp': 'WebP' };
const EXTENSION: Record<ImageMime, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
};
const SHARP_FORMAT: Record<ImageMime, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

export const UNSUPPORTED_RULE = 'the file is not a supported PNG, JPEG, GIF, or WebP image.';

/** The MIME type named by the magic bytes (reference §7), or undefined. */
export function sniffImageMime(bytes: Uint8Array): ImageMime | undefined {
  const at = (i: number, ...values: number[]): boolean => values.every((v, k) => bytes[i + k] === v);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (at(0, 0x47, 0x49, 0x46, 0x38) && (at(4, 0x37, 0x61) || at(4, 0x39, 0x61))) return 'image/gif';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'image/webp';
  return undefined;
}

/** A declared type in canonical form (`image/jpg` → `image/jpeg`); undefined when nothing useful was declared. */
export function normaliseMime(declared: string | undefined): string | undefined {
  const mime = declared?.split(';')[0]?.trim().toLowerCase();
  if (!mime || mime === 'application/octet-stream') return undefined;
  if (mime === 'image/jpg' || mime === 'image/pjpeg') return 'image/jpeg';
  return mime;
}

/** The image type a file name's extension claims, or undefined for any other extension. */
export function mimeFromFileName(name: string | undefined): ImageMime | undefined {
  switch (extname(name ?? '').toLowerCase()) {
    case '.png':
      return 'image/png';
    case '.jpg':
    case '.jpeg':
      return 'image/jpeg';
    case '.gif':
      return 'image/gif';
    case '.webp':
      return 'image/webp';
    default:
      return undefined;
  }
}

export function isImageMime(value: string): value is ImageMime {
  return (IMAGE_MIMES as readonly string[]).includes(value);
}

export function sha256Hex(bytes: Uint8Array): string {
  return hashHex(bytes);
}

type SharpFactory = typeof import('sharp').default;
let sharpModule: Promise<SharpFactory> | undefined;

/** sharp is native and heavy: loaded on first use only, so start-up without images never pays for it. */
export function loadSharp(): Promise<SharpFactory> {
  sharpModule ??= importOutside<{ default: SharpFactory }>('sharp').then((m) => m.default);
  return sharpModule;
}

interface DecodeFacts {
  readonly mime: ImageMime;
  readonly width: number;
  readonly height: number;
  readonly frames: number;
  /** width × frame height × frames, as stored (before orientation). */
  readonly pixels: number;
}

const verdicts = new Map<string, DecodeFacts>();
const VERDICT_CAP = 256;

function remember(hash: string, facts: DecodeFacts): void {
  verdicts.delete(hash);
  verdicts.set(hash, facts);
  if (verdicts.size > VERDICT_CAP) verdicts.delete(verdicts.keys().next().value as string);
}

/**
 * The cheap checks, no decode: empty, byte cap, signature, declared type. A batch runs these on
 * every member before it decodes any (WEB-3). Throws `ImageError`.
 */
export function precheckImage(bytes: Uint8Array, options: ValidateOptions): ImageMime {
  const fail = (kind: ImageErrorKind, rule: string): ImageError => new ImageError(kind, rule, options);
  if (bytes.length === 0) throw fail('empty', 'the image file is empty.');
  if (bytes.length > options.limits.maxImageBytes) {
    throw fail(
      'too_large',
      `the image file exceeds the ${formatBytes(options.limits.maxImageBytes)} host limit (it is ${formatBytes(bytes.length)}).`,
    );
  }
  const mime = sniffImageMime(bytes);
  if (!mime) throw fail('unsupported_type', UNSUPPORTED_RULE);
  checkDeclared(mime, options, fail);
  return mime;
}

/** Validates one image without touching storage (WEB-10); throws `ImageError`. */
export async function validateImage(bytes: Uint8Array, options: ValidateOptions): Promise<ValidatedImage> {
  const { limits } = options;
  const fail = (kind: ImageErrorKind, rule: string): ImageError => new ImageError(kind, rule, options);
  const mime = precheckImage(bytes, options);
  const hash = sha256Hex(bytes);
  let facts = verdicts.get(hash);
  if (!facts) {
    facts = await inspect(bytes, mime, limits, fail);
    remember(hash, facts);
  }
  checkPixels(facts, limits, fail);
  return { mime, width: facts.width, height: facts.height, frames: facts.frames, bytes: bytes.length, hash };
}

function checkDeclared(mime: ImageMime, options: ValidateOptions, fail: (k: ImageErrorKind, r: string) => ImageError): void {
  const declared = normaliseMime(options.declaredMime);
  if (declared !== undefined) {
    if (declared !== mime) {
      throw fail(
        'mime_mismatch',
        `the file is declared as ${declared} but its bytes are a ${LABEL[mime]} image; declare it as ${mime}.`,
      );
    }
    return;
  }
  const byName = mimeFromFileName(options.name);
  if (byName !== undefined && byName !== mime) {
    throw fail(
      'mime_mismatch',
      `the file name says ${LABEL[byName]} but its bytes are a ${LABEL[mime]} image; rename it to ${EXTENSION[mime]}.`,
    );
  }
}

function checkPixels(facts: DecodeFacts, limits: ImageLimits, fail: (k: ImageErrorKind, r: string) => ImageError): void {
  if (facts.pixels <= limits.maxPixels) return;
  const size =
    facts.frames > 1
      ? `${facts.frames} frames of ${facts.width}×${facts.height} pixels (${formatPixels(facts.pixels)} in all)`
      : `${facts.width}×${facts.height} pixels (${formatPixels(facts.pixels)})`;
  throw fail('too_many_pixels', `the image has ${size}; the limit is ${formatPixels(limits.maxPixels)}.`);
}

/** Header, pixel limit, structure and a full decode. */
async function inspect(
  bytes: Uint8Array,
  mime: ImageMime,
  limits: ImageLimits,
  fail: (k: ImageErrorKind, r: string) => ImageError,
): Promise<DecodeFacts> {
  const damaged = (detail: string): ImageError =>
    fail('corrupt', `the ${LABEL[mime]} image is truncated or damaged and cannot be decoded (${detail}).`);
  const sharp = await loadSharp();
  const input = { animated: true, failOn: 'error', limitInputPixels: false } as const;
  let meta: Awaited<ReturnType<ReturnType<SharpFactory>['metadata']>>;
  try {
    meta = await sharp(bytes, input).metadata();
  } catch (error) {
    throw damaged(reason(error));
  }
  if (meta.format !== SHARP_FORMAT[mime] || !meta.width || !meta.height) throw damaged('unreadable header');
  const frames = Math.max(1, meta.pages ?? 1);
  const frameHeight = meta.pageHeight ?? Math.floor(meta.height / frames);
  const oriented = meta.autoOrient ?? { width: meta.width, height: frameHeight };
  const facts: DecodeFacts = {
    mime,
    width: frames > 1 ? meta.width : oriented.width,
    height: frames > 1 ? frameHeight : oriented.height,
    frames,
    pixels: meta.width * frameHeight * frames,
  };
  checkPixels(facts, limits, fail);
  const incomplete = structureProblem(bytes, mime);
  if (incomplete) throw damaged(incomplete);
  try {
    await sharp(bytes, input).raw().toBuffer();
  } catch (error) {
    throw damaged(reason(error));
  }
  return facts;
}

function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]?.trim() || 'decoder error';
}

/** The container walk libvips skips: a PNG must reach IEND, a GIF its trailer. */
function structureProblem(bytes: Uint8Array, mime: ImageMime): string | undefined {
  if (mime === 'image/png') return pngComplete(bytes) ? undefined : 'the file ends before its IEND chunk';
  if (mime === 'image/gif') return gifComplete(bytes) ? undefined : 'the file ends before its trailer';
  return undefined;
}

function pngComplete(bytes: Uint8Array): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let p = 8;
  while (p + 8 <= bytes.length) {
    const end = p + 12 + view.getUint32(p);
    if (end > bytes.length) return false;
    if (bytes[p + 4] === 0x49 && bytes[p + 5] === 0x45 && bytes[p + 6] === 0x4e && bytes[p + 7] === 0x44) return true;
    p = end;
  }
  return false;
}

function gifComplete(bytes: Uint8Array): boolean {
  const byte = (i: number): number => bytes[i] ?? 0;
  const table = (flags: number): number => (flags & 0x80 ? 3 * (1 << ((flags & 7) + 1)) : 0);
  let p = 13 + table(byte(10));
  const subBlocks = (): boolean => {
    for (;;) {
      if (p >= bytes.length) return false;
      const size = byte(p);
      p += 1 + size;
      if (size === 0) return true;
    }
  };
  while (p < bytes.length) {
    const block = byte(p++);
    if (block === 0x3b) return true;
    if (block === 0x21) {
      p += 1;
      if (!subBlocks()) return false;
    } else if (block === 0x2c) {
      if (p + 9 > bytes.length) return false;
      p += 9 + table(byte(p + 8)) + 1;
      if (!subBlocks()) return false;
    } else {
      return false;
    }
  }
  return false;
}
