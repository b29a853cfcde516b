/**
 * The five operator errors of a clipboard paste (CLIP-6). Each names what went wrong and what
 * to do; `kind` lets a surface tell them apart without reading the text.
 */
import { formatBytes } from '../limits.js';

export type ClipboardErrorKind =
  /** No reader command on this machine (the message names the package to install). */
  | 'no_reader'
  /** The clipboard holds no image (text, files, or nothing at all). */
  | 'no_image'
  /** The clipboard holds image bytes of a type or shape Crystal Code cannot use. */
  | 'unsupported'
  /** The image is over the image size cap. */
  | 'too_large'
  /** The reader command failed; the message carries its trimmed stderr. */
  | 'reader_failed';

export class ClipboardError extends Error {
  override readonly name = 'ClipboardError';

  constructor(
    readonly kind: ClipboardErrorKind,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
  }
}

export const NO_IMAGE_MESSAGE = 'The clipboard holds no image. Copy a PNG, JPEG, GIF or WebP image and paste again.';

export function noImage(detail?: string): ClipboardError {
  return new ClipboardError('no_image', detail ? `${NO_IMAGE_MESSAGE} (${detail})` : NO_IMAGE_MESSAGE);
}

export function tooLarge(maxBytes: number, size?: number): ClipboardError {
  const actual = size === undefined ? '' : ` (it is ${formatBytes(size)})`;
  return new ClipboardError('too_large', `The clipboard image exceeds the ${formatBytes(maxBytes)} host limit${actual}.`);
}

export function unsupported(detail: string, cause?: unknown): ClipboardError {
  return new ClipboardError('unsupported', `The clipboard image cannot be used: ${detail}`, cause === undefined ? {} : { cause });
}

/** `reader` failed: its stderr (trimmed, at most a few lines), else its exit status. */
export function readerFailed(reader: string, stderr: string, status: string): ClipboardError {
  const text = trimmedStderr(stderr);
  return new ClipboardError('reader_failed', `The clipboard reader ${reader} failed: ${text || status}.`.replace(/\.\.$/, '.'));
}

const STDERR_CHARS = 500;

export function trimmedStderr(stderr: string): string {
  const text = stderr
    .replace(/^\uFEFF/, '')
    .replace(/\r\n/g, '\n')
    .trim();
  return text.length <= STDERR_CHARS ? text : `${text.slice(0, STDERR_CHARS)}…`;
}
