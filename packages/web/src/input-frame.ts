/**
 * The body of `POST /api/send`: one input, and for a message its images, in one request.
 *
 *   bytes 0..3   "CRB1"
 *   bytes 4..7   manifest length N, unsigned 32-bit big-endian, at most MAX_MANIFEST_BYTES
 *   next N       the manifest, UTF-8 JSON: `{ scope, input }`; a message input lists its
 *                images as `{ name, type, size }` in submitted order
 *   the rest     the images' bytes back to back, in that order
 *
 * The browser builds it as a Blob of the picked files, so it never copies an image into script
 * memory; the host slices the images out of the one body buffer without copying either. The
 * body limit is the aggregate image limit plus this framing (WEB-4): no second size setting.
 */
import { BodyError } from './capped-body.js';

export const FRAME_MAGIC = 'CRB1';
/** The manifest: the message text, image names and types. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
const HEADER_BYTES = 8;

/** The body limit a given aggregate image limit allows (WEB-4). */
export function bodyLimitFor(maxBatchBytes: number): number {
  return maxBatchBytes + HEADER_BYTES + MAX_MANIFEST_BYTES;
}

export interface InputFrame {
  readonly manifest: unknown;
  /** Everything after the manifest (a view into the body, not a copy). */
  readonly payload: Buffer;
}

export function decodeInputFrame(body: Buffer): InputFrame {
  if (body.length < HEADER_BYTES || body.toString('latin1', 0, 4) !== FRAME_MAGIC) {
    throw new BodyError(`The body is not a Crystal input frame (it must start with '${FRAME_MAGIC}').`);
  }
  const length = body.readUInt32BE(4);
  if (length > MAX_MANIFEST_BYTES) {
    throw new BodyError(`The manifest takes ${length} bytes; at most ${MAX_MANIFEST_BYTES} are allowed.`);
  }
  if (HEADER_BYTES + length > body.length) throw new BodyError('The body ends inside its manifest.');
  let manifest: unknown;
  try {
    manifest = JSON.parse(body.toString('utf8', HEADER_BYTES, HEADER_BYTES + length));
  } catch (error) {
    throw new BodyError(`The manifest is not JSON: ${(error as Error).message}`);
  }
  return { manifest, payload: body.subarray(HEADER_BYTES + length) };
}

/**
 * Follows a frame as its body arrives and hands over each image as soon as its last byte is in,
 * so the host can validate images while later ones are still on the wire. At most `maxImages`
 * images are handed over, and none when the listed sizes pass `maxBytes`: the batch's own
 * checks refuse those before any decode.
 */
export class FrameProgress {
  private images: { readonly start: number; readonly end: number; readonly entry: unknown }[] | undefined;
  private next = 0;
  private given = false;

  constructor(
    private readonly bounds: { readonly maxImages: number; readonly maxBytes: number },
    private readonly onImage: (index: number, entry: unknown, bytes: Buffer) => void,
  ) {}

  update(body: Buffer, received: number): void {
    if (!this.images) {
      if (this.given || received < HEADER_BYTES) return;
      const length = body.readUInt32BE(4);
      if (received < HEADER_BYTES + length) return;
      this.given = true;
      this.images = this.layout(body, length) ?? [];
    }
    while (this.next < this.images.length && (this.images[this.next]?.end ?? Infinity) <= received) {
      const image = this.images[this.next] as { start: number; end: number; entry: unknown };
      this.onImage(this.next, image.entry, body.subarray(image.start, image.end));
      this.next++;
    }
  }

  private layout(body: Buffer, length: number): { start: number; end: number; entry: unknown }[] | undefined {
    if (body.toString('latin1', 0, 4) !== FRAME_MAGIC || length > MAX_MANIFEST_BYTES) return undefined;
    let entries: unknown;
    try {
      entries = (JSON.parse(body.toString('utf8', HEADER_BYTES, HEADER_BYTES + length)) as { input?: { images?: unknown } }).input
        ?.images;
    } catch {
      return undefined;
    }
    if (!Array.isArray(entries) || entries.length > this.bounds.maxImages) return undefined;
    let at = HEADER_BYTES + length;
    const out: { start: number; end: number; entry: unknown }[] = [];
    for (const entry of entries) {
      const size = (entry as { size?: unknown } | null)?.size;
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return undefined;
      out.push({ start: at, end: at + size, entry });
      at += size;
    }
    return at - HEADER_BYTES - length > this.bounds.maxBytes ? undefined : out;
  }
}
