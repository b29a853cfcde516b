/**
 * Reads an image from the operating system clipboard (CLIP-1..7): the reader is chosen per
 * platform when a paste asks for it (nothing is probed at import or start-up, CLIP-7), its
 * output is bounded by the image size cap while it runs (CLIP-5), and the bytes are validated
 * by signature and decode before they are returned (IMG-8). Every refusal is a
 * `ClipboardError` of one of five kinds (CLIP-6).
 */
import { tmpdir } from 'node:os';
import type { ImageLimits } from '../limits.js';
import { ImageError, type ImageMime, validateImage } from '../validate.js';
import type { ClipboardReaderName, RawClipboardImage, ReaderContext } from './context.js';
import { ClipboardError, noImage, unsupported } from './errors.js';
import { readLinuxClipboard } from './linux.js';
import { readMacClipboard } from './macos.js';
import { type ReaderRunner, spawnRunner } from './run.js';
import { readWindowsClipboard } from './windows.js';

export interface ClipboardReadOptions {
  /** `maxImageBytes` bounds the reader's output and temporary files; the rest applies at validation. */
  readonly limits: ImageLimits;
  readonly platform?: NodeJS.Platform | undefined;
  /** The reader's environment: PATH, DISPLAY, WAYLAND_DISPLAY, SystemRoot. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /** Runs one reader command (default: spawn it). */
  readonly run?: ReaderRunner | undefined;
  /** Cancels the paste: the reader is killed and the call rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /** A reader that has not finished by then is killed (default 15 seconds). */
  readonly timeoutMs?: number | undefined;
  /** Where the macOS reader makes its private temporary folder (default the OS temp folder). */
  readonly tempDir?: string | undefined;
}

export interface ClipboardImage {
  readonly bytes: Uint8Array;
  /** From the bytes' signature, not from what the clipboard declared. */
  readonly mime: ImageMime;
  readonly width: number;
  readonly height: number;
  readonly reader: ClipboardReaderName;
}

export const CLIPBOARD_TIMEOUT_MS = 15_000;

export async function readClipboardImage(options: ClipboardReadOptions): Promise<ClipboardImage> {
  const context: ReaderContext = {
    limits: options.limits,
    env: options.env ?? process.env,
    run: options.run ?? spawnRunner,
    timeoutMs: options.timeoutMs ?? CLIPBOARD_TIMEOUT_MS,
    signal: options.signal,
    tempDir: options.tempDir ?? tmpdir(),
  };
  options.signal?.throwIfAborted();
  const raw = await readerFor(options.platform ?? process.platform)(context);
  return validated(raw, options.limits);
}

function readerFor(platform: NodeJS.Platform): (context: ReaderContext) => Promise<RawClipboardImage> {
  if (platform === 'darwin') return readMacClipboard;
  if (platform === 'win32') return readWindowsClipboard;
  return readLinuxClipboard;
}

/** IMG-8: signature, byte cap, pixel cap and a full decode; an `ImageError` becomes its clipboard kind. */
async function validated(raw: RawClipboardImage, limits: ImageLimits): Promise<ClipboardImage> {
  try {
    const image = await validateImage(raw.bytes, { limits });
    return { bytes: raw.bytes, mime: image.mime, width: image.width, height: image.height, reader: raw.reader };
  } catch (error) {
    if (!(error instanceof ImageError)) throw error;
    if (error.kind === 'empty') throw noImage();
    if (error.kind === 'too_large' || error.kind === 'too_many_pixels') {
      throw new ClipboardError('too_large', `The clipboard image is too large: ${error.rule}`, { cause: error });
    }
    const offered = raw.type ? ` (offered as ${raw.type})` : '';
    throw unsupported(`${error.rule.replace(/\.$/, '')}${offered}.`, error);
  }
}
