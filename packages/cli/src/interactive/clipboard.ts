/**
 * Ctrl+V: a clipboard image into the composer (CLIP-6, IMG-20). The OS reader is a dependency
 * (the engine's `readClipboardImage` by default); this file owns the order of the steps:
 *
 * 1. reserve the image number before awaiting the reader (IMG-20: a failed paste leaves a gap);
 * 2. read the clipboard; the reader throws a `ClipboardError` whose kind names one of the five
 *    distinct failures (no reader, no image, unsupported bytes, too large, reader failure),
 *    and its message is what the status line shows;
 * 3. attach (validates by signature and size, stores, registers under the reserved number).
 */
import { readFileSync } from 'node:fs';
import { ClipboardError, type ImageLimits, readClipboardImage } from '@crystal/engine';

export interface ClipboardBytes {
  readonly bytes: Uint8Array;
  readonly mime: string;
}

export type ClipboardReader = (limits: ImageLimits) => Promise<ClipboardBytes>;

/** The attachment seam this flow needs (the session's `AttachmentService`). */
export interface AttachmentsFace {
  readonly limits: ImageLimits;
  reserveNumber(): Promise<number>;
  attach(
    bytes: Uint8Array,
    options: { readonly name?: string; readonly declaredMime?: string; readonly number?: number },
  ): Promise<{ readonly number: number }>;
}

/**
 * The OS reader, or, when `CRYSTAL_CLIPBOARD_FILE` names a file, that file's bytes standing in
 * for the clipboard (automation and the terminal tests, which have no desktop clipboard).
 */
export function defaultClipboardReader(env: NodeJS.ProcessEnv = process.env): ClipboardReader {
  const file = env.CRYSTAL_CLIPBOARD_FILE;
  if (!file) return (limits) => readClipboardImage({ limits });
  return async () => {
    try {
      return { bytes: readFileSync(file), mime: mimeOfName(file) };
    } catch (error) {
      throw new ClipboardError('reader_failed', `The clipboard stand-in ${file} could not be read: ${(error as Error).message}.`);
    }
  };
}

function mimeOfName(name: string): string {
  const ext = name.toLowerCase().split('.').pop();
  return ext === 'jpg' || ext === 'jpeg'
    ? 'image/jpeg'
    : ext === 'gif'
      ? 'image/gif'
      : ext === 'webp'
        ? 'image/webp'
        : 'image/png';
}

/** One paste: reserve, read, attach. Resolves the number, or the operator error text. */
export async function pasteClipboardImage(
  attachments: AttachmentsFace | undefined,
  reader: ClipboardReader,
): Promise<{ number: number } | { error: string }> {
  if (!attachments) return { error: 'Image attachments are not available in this session.' };
  const number = await attachments.reserveNumber();
  let image: ClipboardBytes;
  try {
    image = await reader(attachments.limits);
  } catch (error) {
    return { error: clipboardErrorText(error) };
  }
  try {
    const attached = await attachments.attach(image.bytes, { name: `clipboard-${number}`, declaredMime: image.mime, number });
    return { number: attached.number };
  } catch (error) {
    return { error: `The clipboard image was not attached: ${(error as Error).message}` };
  }
}

export function clipboardErrorText(error: unknown): string {
  if (error instanceof ClipboardError) return error.message;
  return `The clipboard reader failed: ${error instanceof Error ? error.message : String(error)}`;
}
