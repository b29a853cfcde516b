/**
 * REL-10: `--image PATH` files are checked before they are read. Each is opened without
 * blocking (a FIFO never hangs), must be a regular file (a symlink to /dev/zero, a device or a
 * folder is refused at once) and no larger than the per-image limit, and is read only up to
 * that size. The whole batch is validated before any image is stored (as the Web host does).
 */
import { constants, promises as fs } from 'node:fs';
import { basename, resolve } from 'node:path';
import {
  formatBytes,
  ImageError,
  type ImageInput,
  imageMarker,
  type MarkerSpan,
  type Session,
  UsageError,
} from '@crystal/engine';

function kindOf(stat: import('node:fs').Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a named pipe (FIFO)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** Reads one image file within `maxBytes`, refusing anything that is not a regular file. */
export async function readImageFile(path: string, maxBytes: number): Promise<Buffer> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(resolve(path), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new UsageError(
      `--image ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`,
    );
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new UsageError(`--image ${path}: is ${kindOf(stat)}, not an image file.`);
    if (stat.size > maxBytes) {
      throw new UsageError(
        `--image ${path}: is ${formatBytes(stat.size)}, larger than the ${formatBytes(maxBytes)} an image may have (images.maxImageBytes).`,
      );
    }
    // Read at most one byte past the limit: a file that grows meanwhile is refused, not slurped.
    const buffer = Buffer.alloc(Math.min(maxBytes, stat.size) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) {
        throw new UsageError(`--image ${path}: grew past the ${formatBytes(maxBytes)} an image may have while it was read.`);
      }
      if (length === buffer.length) break;
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

/**
 * Every file is read and the whole batch validated before anything is stored; then the batch
 * is attached at once and its markers are appended to the prompt in the order given (IMG-1).
 */
export async function attachImageFiles(
  session: Session,
  prompt: string,
  paths: readonly string[],
): Promise<{ text: string; spans: MarkerSpan[] }> {
  const limits = session.attachments.limits;
  const items: ImageInput[] = [];
  for (const path of paths) items.push({ bytes: await readImageFile(path, limits.maxImageBytes), name: basename(path) });
  try {
    const attached = await session.attachments.attachBatch(items, { draft: true });
    // The markers are attached spans: the controller tags them and neutralises typed look-alikes (IMG-3).
    let text = `${prompt}\n\n`;
    const spans: MarkerSpan[] = [];
    for (const [index, image] of attached.entries()) {
      if (index > 0) text += ' ';
      spans.push({ start: text.length, number: image.number });
      text += imageMarker(image.number);
    }
    return { text, spans };
  } catch (error) {
    if (error instanceof ImageError) {
      const position = error.position;
      const path = position !== undefined ? paths[position - 1] : undefined;
      throw new UsageError(
        `--image ${path ?? paths.join(', ')}${position !== undefined ? ` (image ${position})` : ''}: ${error.rule}`,
      );
    }
    throw error;
  }
}
