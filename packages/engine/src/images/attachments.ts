/**
 * The attachment service: one seam for the terminal, `crystal run` and the Web host (WEB-10),
 * plus the per-session image registry it numbers into (IMG-20) and the session file's
 * `images` records (IMG-10, IMG-12..IMG-15).
 *
 * - `attach` validates, writes the media file, and only then registers the image under its
 *   number, so nothing can reference an image whose file is not on disk (IMG-11).
 * - `validateBatch` checks a whole message's images without storage: count, every member's
 *   cheap checks, the aggregate bytes, then each decode. `attachBatch` saves only after the
 *   whole batch passed, in submitted order (WEB-3). A refusal names the member and the rule.
 * - Numbers: `reserveNumber` takes the next number under the registry's lock before a slow
 *   reader is awaited; paste, tool images and batches all reserve through that one lock, which
 *   also guards lookup and mutation. A reserved number that never gets an image stays a gap
 *   and is never handed out again (IMG-20).
 */
import type { Protocol } from '@crystal/providers';
import { PreparedImageCache } from './downscale.js';
import { formatBytes, type ImageLimits } from './limits.js';
import { deletedDrafts, type MarkerImages } from './markers.js';
import {
  isContentHash,
  type MediaRead,
  type MediaStore,
  type ReadOptions,
  type SaveOptions,
  type StoredMedia,
} from './media-store.js';
import {
  ImageError,
  type ImageMime,
  type ImageSubject,
  normaliseMime,
  precheckImage,
  sha256Hex,
  type ValidatedImage,
  type ValidateOptions,
  validateImage,
} from './validate.js';

/** The seam a host depends on (WEB-10): limits, storage-free validation, save and read. */
export interface AttachmentSeam {
  readonly limits: ImageLimits;
  validateImage(
    bytes: Uint8Array,
    options?: ImageSubject & { readonly declaredMime?: string | undefined },
  ): Promise<ValidatedImage>;
  saveImage(bytes: Uint8Array, options?: SaveOptions): Promise<StoredMedia>;
  readImage(hash: string, options?: ReadOptions): Promise<MediaRead>;
}

/** One image of a batch, or one attach: its bytes, display name and declared type. */
export interface ImageInput {
  readonly bytes: Uint8Array;
  readonly name?: string | undefined;
  readonly declaredMime?: string | undefined;
}

/** An attached image: the number its marker shows, and what the session stores. */
export interface Attachment {
  readonly number: number;
  readonly hash: string;
  readonly mime: ImageMime;
  readonly name?: string | undefined;
  readonly width: number;
  readonly height: number;
  readonly bytes: number;
}

export interface AttachOptions {
  readonly name?: string | undefined;
  readonly declaredMime?: string | undefined;
  /** A number from `reserveNumber` (a paste reserves before it reads); reserved here when absent. */
  readonly number?: number | undefined;
  /** True (default) for a composer attachment not yet sent (IMG-7); false for tool images and Web batches. */
  readonly draft?: boolean | undefined;
}

/** An image the session knows by number. */
export interface SessionImage {
  readonly number: number;
  readonly mime: string;
  /** Content hash of a stored image. */
  readonly hash?: string | undefined;
  /** Absolute http(s) URI of a remote image (IMG-17). */
  readonly uri?: string | undefined;
  readonly name?: string | undefined;
  readonly width?: number | undefined;
  readonly height?: number | undefined;
  /** Attached in the composer and not sent yet (IMG-7). */
  readonly draft: boolean;
  /** False when its media file was missing or damaged at resume; the reference is kept (IMG-13). */
  readonly available: boolean;
}

/** The session file's `images` entry (reference §4.5). `data` is read, never written by a local save (IMG-10, IMG-14). */
export interface SessionImageRecord {
  readonly number: number;
  readonly mimeType: string;
  readonly contentHash?: string | undefined;
  readonly data?: string | undefined;
  readonly uri?: string | undefined;
  readonly name?: string | undefined;
}

export const MAX_IMAGE_URI_LENGTH = 8192;

/** An absolute http(s) URI of at most 8192 characters (reference §7). */
export function isImageUri(value: string): boolean {
  if (value.length > MAX_IMAGE_URI_LENGTH) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * A session's images by number, behind one lock (IMG-20). Critical sections are short and do
 * no I/O; `withLock` must not be called from inside itself.
 */
export class ImageRegistry {
  private next: number;
  private readonly images = new Map<number, SessionImage>();
  private tail: Promise<unknown> = Promise.resolve();

  constructor(init: { readonly nextNumber?: number; readonly images?: Iterable<SessionImage> } = {}) {
    let highest = 0;
    for (const image of init.images ?? []) {
      this.images.set(image.number, image);
      highest = Math.max(highest, image.number);
    }
    this.next = Math.max(highest + 1, init.nextNumber ?? 1);
  }

  /** Runs `fn` alone: reservations, lookups and changes never interleave. */
  withLock<T>(fn: () => T | Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** The number the next reservation gets. */
  get nextNumber(): number {
    return this.next;
  }

  /** IMG-20: takes a number before the image exists; it is never handed out again, used or not. */
  reserveNumber(): Promise<number> {
    return this.withLock(() => this.next++);
  }

  /** Consecutive numbers for a batch, in one step (no other image lands between them). */
  reserveNumbers(count: number): Promise<number[]> {
    return this.withLock(() => Array.from({ length: count }, () => this.next++));
  }

  /** Adds images under numbers reserved earlier; refuses a number never reserved or already used. */
  register(...images: SessionImage[]): Promise<void> {
    return this.withLock(() => {
      for (const image of images) {
        if (image.number >= this.next) throw new Error(`Image number ${image.number} was never reserved.`);
        if (this.images.has(image.number)) throw new Error(`Image number ${image.number} is already in use.`);
      }
      for (const image of images) this.images.set(image.number, image);
    });
  }

  get(number: number): Promise<SessionImage | undefined> {
    return this.withLock(() => this.images.get(number));
  }

  /** Every image, by number (a snapshot). */
  list(): Promise<SessionImage[]> {
    return this.withLock(() => [...this.images.values()].sort((a, b) => a.number - b.number));
  }

  /**
   * IMG-7: drops the unsent images whose markers are gone from `taggedComposerText` (the
   * composer text after `tagAttachedSpans`). Call it on every composer change while idle, and
   * at submit during a turn. Their media files stay (IMG-16). Returns the dropped numbers.
   */
  discardDeleted(taggedComposerText: string): Promise<number[]> {
    return this.withLock(() => {
      const drafts = [...this.images.values()].filter((i) => i.draft).map((i) => i.number);
      const gone = deletedDrafts(taggedComposerText, drafts);
      for (const n of gone) this.images.delete(n);
      return gone;
    });
  }

  /** At submit: the attached images of the sent text are no longer drafts. */
  markSent(numbers: Iterable<number>): Promise<void> {
    return this.withLock(() => {
      for (const n of numbers) {
        const image = this.images.get(n);
        if (image?.draft) this.images.set(n, { ...image, draft: false });
      }
    });
  }

  /**
   * The session file's `images` (IMG-10, IMG-12): only `referenced` numbers (from
   * `referencedImageNumbers(archive, context)`), hash and MIME type, never bytes. An
   * unavailable image keeps its reference, so restoring its file repairs the session (IMG-13).
   */
  toRecords(referenced: Iterable<number>): Promise<SessionImageRecord[]> {
    return this.withLock(() => {
      const wanted = new Set(referenced);
      return [...this.images.values()]
        .filter((i) => wanted.has(i.number) && !i.draft)
        .sort((a, b) => a.number - b.number)
        .map((i) => ({
          number: i.number,
          mimeType: i.mime,
          ...(i.hash ? { contentHash: i.hash } : {}),
          ...(i.uri ? { uri: i.uri } : {}),
          ...(i.name ? { name: i.name } : {}),
        }));
    });
  }
}

export interface AttachmentServiceOptions {
  readonly store: MediaStore;
  /** The session's registry; a fresh one when absent. */
  readonly registry?: ImageRegistry | undefined;
  readonly cache?: PreparedImageCache | undefined;
}

/** Images a request can use, and the numbers that could not be read (with why). */
export interface RequestImages {
  readonly images: MarkerImages;
  readonly unavailable: readonly { readonly number: number; readonly detail: string }[];
}

/** One per session: the store is shared by Home, the registry belongs to the session. */
export class AttachmentService implements AttachmentSeam {
  readonly store: MediaStore;
  readonly registry: ImageRegistry;
  private readonly cache: PreparedImageCache;

  constructor(options: AttachmentServiceOptions) {
    this.store = options.store;
    this.registry = options.registry ?? new ImageRegistry();
    this.cache = options.cache ?? new PreparedImageCache();
  }

  get limits(): ImageLimits {
    return this.store.limits;
  }

  validateImage(
    bytes: Uint8Array,
    options: ImageSubject & { readonly declaredMime?: string | undefined } = {},
  ): Promise<ValidatedImage> {
    return validateImage(bytes, { ...options, limits: this.limits });
  }

  saveImage(bytes: Uint8Array, options: SaveOptions = {}): Promise<StoredMedia> {
    return this.store.save(bytes, options);
  }

  readImage(hash: string, options: ReadOptions = {}): Promise<MediaRead> {
    return this.store.read(hash, options);
  }

  reserveNumber(): Promise<number> {
    return this.registry.reserveNumber();
  }

  /**
   * Validates, saves, then registers (IMG-8, IMG-11). Throws `ImageError` for a refused image;
   * a reserved number passed in stays a gap when this fails (IMG-20).
   */
  async attach(bytes: Uint8Array, options: AttachOptions = {}): Promise<Attachment> {
    const subject = { name: options.name, declaredMime: options.declaredMime };
    const image = await this.validateImage(bytes, subject);
    const number = options.number ?? (await this.reserveNumber());
    await this.store.save(bytes, { ...subject, mime: options.declaredMime ?? image.mime });
    const attachment = attachmentOf(number, image, options.name);
    await this.registry.register(sessionImageOf(attachment, options.draft ?? true));
    return attachment;
  }

  /** IMG-17: a remote image by absolute http(s) URI; nothing is fetched or stored. */
  async attachUri(
    uri: string,
    options: { readonly mime: string; readonly name?: string; readonly draft?: boolean },
  ): Promise<SessionImage> {
    if (!isImageUri(uri)) {
      throw new ImageError(
        'unsupported_type',
        `an image URI must be an absolute http(s) address of at most ${MAX_IMAGE_URI_LENGTH} characters.`,
        options,
      );
    }
    const number = await this.reserveNumber();
    const image: SessionImage = {
      number,
      mime: normaliseMime(options.mime) ?? options.mime,
      uri,
      name: options.name,
      draft: options.draft ?? true,
      available: true,
    };
    await this.registry.register(image);
    return image;
  }

  /**
   * WEB-1, WEB-3: the whole batch, without storage. Count, then every member's cheap checks
   * and the running byte total, then each decode in order. The first refusal is thrown,
   * naming the member's position and name.
   */
  async validateBatch(items: readonly ImageInput[]): Promise<ValidatedImage[]> {
    const { maxImagesPerMessage, maxBatchBytes } = this.limits;
    const subject = (i: number): ValidateOptions => ({
      position: i + 1,
      name: items[i]?.name,
      declaredMime: items[i]?.declaredMime,
      limits: this.limits,
    });
    if (items.length > maxImagesPerMessage) {
      throw new ImageError(
        'too_many_images',
        `a message takes at most ${maxImagesPerMessage} images; this one has ${items.length}.`,
        subject(maxImagesPerMessage),
      );
    }
    let total = 0;
    for (const [i, item] of items.entries()) {
      precheckImage(item.bytes, subject(i));
      total += item.bytes.length;
      if (total > maxBatchBytes) {
        throw new ImageError(
          'batch_too_large',
          `the images of one message may total at most ${formatBytes(maxBatchBytes)}; with this image they reach ${formatBytes(total)}.`,
          subject(i),
        );
      }
    }
    const validated: ValidatedImage[] = [];
    for (const [i, item] of items.entries()) validated.push(await validateImage(item.bytes, subject(i)));
    return validated;
  }

  /**
   * WEB-3: validates every member first; only then reserves consecutive numbers and saves each
   * image in order, and registers the batch at once. A bad member anywhere leaves storage and
   * the registry untouched.
   */
  async attachBatch(items: readonly ImageInput[], options: { readonly draft?: boolean } = {}): Promise<Attachment[]> {
    const validated = await this.validateBatch(items);
    const numbers = await this.registry.reserveNumbers(items.length);
    const attachments: Attachment[] = [];
    for (const [i, item] of items.entries()) {
      const image = validated[i] as ValidatedImage;
      await this.store.save(item.bytes, { mime: item.declaredMime ?? image.mime, name: item.name, position: i + 1 });
      attachments.push(attachmentOf(numbers[i] as number, image, item.name));
    }
    await this.registry.register(...attachments.map((a) => sessionImageOf(a, options.draft ?? false)));
    return attachments;
  }

  /**
   * The typed images for one request's tagged markers (IMG-1), each fitted to `protocol`
   * (`prepareForProvider`, cached by hash). Images that cannot be read are listed, not thrown:
   * their markers stay text.
   */
  async imagesForRequest(numbers: Iterable<number>, protocol: Protocol): Promise<RequestImages> {
    const images = new Map<number, NonNullable<ReturnType<MarkerImages['get']>>>();
    const unavailable: { number: number; detail: string }[] = [];
    for (const number of new Set(numbers)) {
      const image = await this.registry.get(number);
      if (!image) {
        unavailable.push({ number, detail: `image ${number} is not attached to this session.` });
      } else if (image.uri) {
        images.set(number, { mime: image.mime, uri: image.uri, ...(image.name ? { name: image.name } : {}) });
      } else if (image.hash && image.available) {
        const hash = image.hash;
        try {
          const prepared = await this.cache.get(hash, protocol, async () => {
            const read = await this.store.read(hash, { mime: image.mime });
            if (!read.ok) throw new Error(read.detail);
            return { bytes: read.bytes, mime: read.mime };
          });
          images.set(number, {
            mime: prepared.mime,
            data: prepared.data,
            attachmentId: hash,
            ...(image.name ? { name: image.name } : {}),
          });
        } catch (error) {
          unavailable.push({ number, detail: (error as Error).message });
        }
      } else {
        unavailable.push({ number, detail: `the media file of image ${number} was unavailable at resume.` });
      }
    }
    return { images, unavailable };
  }
}

function attachmentOf(number: number, image: ValidatedImage, name: string | undefined): Attachment {
  return {
    number,
    hash: image.hash,
    mime: image.mime,
    ...(name ? { name } : {}),
    width: image.width,
    height: image.height,
    bytes: image.bytes,
  };
}

function sessionImageOf(a: Attachment, draft: boolean): SessionImage {
  return { number: a.number, mime: a.mime, hash: a.hash, name: a.name, width: a.width, height: a.height, draft, available: true };
}

/** The valid entries of a session file's `images` array; invalid ones are skipped (reference §4.5). */
export function parseSessionImageRecords(raw: unknown): { records: SessionImageRecord[]; skipped: number } {
  const records: SessionImageRecord[] = [];
  let skipped = 0;
  const seen = new Set<number>();
  for (const entry of Array.isArray(raw) ? raw : []) {
    const r = (entry ?? {}) as Record<string, unknown>;
    const str = (key: string): string | undefined => (typeof r[key] === 'string' ? (r[key] as string) : undefined);
    const number = r.number;
    const mimeType = str('mimeType');
    const contentHash = str('contentHash')?.toLowerCase();
    const data = str('data');
    const uri = str('uri');
    const valid =
      typeof number === 'number' &&
      Number.isSafeInteger(number) &&
      number > 0 &&
      !seen.has(number) &&
      mimeType !== undefined &&
      (contentHash === undefined || isContentHash(contentHash)) &&
      (uri === undefined || isImageUri(uri)) &&
      (contentHash !== undefined || data !== undefined || uri !== undefined);
    if (!valid) {
      skipped++;
      continue;
    }
    seen.add(number);
    const name = str('name');
    records.push({
      number,
      mimeType,
      ...(contentHash ? { contentHash } : {}),
      ...(data ? { data } : {}),
      ...(uri ? { uri } : {}),
      ...(name ? { name } : {}),
    });
  }
  return { records, skipped };
}

export interface RestoredImages {
  readonly registry: ImageRegistry;
  /** At most one note for the operator (IMG-13), plus one for skipped invalid entries. */
  readonly notes: string[];
  /** Numbers whose media could not be read; their markers stay text. */
  readonly unavailable: number[];
}

/**
 * Resume (IMG-13, IMG-14): inline `data` is validated and moved into the media store; each
 * stored image is read back and checked. A missing, truncated or modified file is kept as an
 * unavailable reference and reported in one note. `alsoReferenced` (the transcript's tagged
 * numbers) keeps the next number above every number the transcript shows (IMG-20).
 */
export async function restoreSessionImages(
  raw: unknown,
  store: MediaStore,
  options: { readonly alsoReferenced?: Iterable<number> } = {},
): Promise<RestoredImages> {
  const { records, skipped } = parseSessionImageRecords(raw);
  const images: SessionImage[] = [];
  const problems: string[] = [];
  const unavailable: number[] = [];
  for (const record of records) {
    const base = {
      number: record.number,
      mime: normaliseMime(record.mimeType) ?? record.mimeType,
      name: record.name,
      draft: false,
    };
    if (record.uri && !record.contentHash && !record.data) {
      images.push({ ...base, uri: record.uri, available: true });
      continue;
    }
    let hash = record.contentHash;
    let problem: string | undefined;
    if (record.data !== undefined) {
      const bytes = Buffer.from(record.data, 'base64');
      try {
        hash = (await store.save(bytes, { mime: record.mimeType })).hash;
      } catch (error) {
        hash ??= sha256Hex(bytes);
        problem = `its inline data is not a valid image (${(error as Error).message})`;
      }
    } else if (hash) {
      const read = await store.read(hash, { mime: record.mimeType });
      if (!read.ok) problem = read.detail;
    }
    images.push({ ...base, hash, uri: record.uri, available: problem === undefined });
    if (problem !== undefined) {
      unavailable.push(record.number);
      problems.push(`[Image #${record.number}]: ${problem.replace(/\.$/, '')}`);
    }
  }
  let highest = 0;
  for (const n of options.alsoReferenced ?? []) highest = Math.max(highest, n);
  const registry = new ImageRegistry({ images, nextNumber: highest + 1 });
  const notes: string[] = [];
  if (problems.length > 0) {
    const count = problems.length === 1 ? '1 saved image is' : `${problems.length} saved images are`;
    notes.push(
      `${count} unavailable and left out of model requests: ${problems.join('; ')}. ` +
        'The text and the other images are usable; the references are kept, so restoring the files repairs the session.',
    );
  }
  if (skipped > 0) notes.push(`${skipped} invalid image entr${skipped === 1 ? 'y' : 'ies'} in the session file were skipped.`);
  return { registry, notes, unavailable };
}

/**
 * IMG-15: the records of a JSON export, with the available bytes inlined as `data` so the
 * export does not depend on Home media files. An unavailable file keeps its metadata, without
 * bytes. Returns the numbers exported without bytes.
 */
export async function exportSessionImages(
  records: readonly SessionImageRecord[],
  store: MediaStore,
): Promise<{ records: SessionImageRecord[]; withoutBytes: number[] }> {
  const out: SessionImageRecord[] = [];
  const withoutBytes: number[] = [];
  for (const record of records) {
    if (!record.contentHash) {
      out.push(record);
      continue;
    }
    const read = await store.read(record.contentHash, { mime: record.mimeType });
    if (read.ok) {
      out.push({ ...record, data: read.bytes.toString('base64') });
    } else {
      const { data: _stale, ...metadata } = record;
      out.push(metadata);
      withoutBytes.push(record.number);
    }
  }
  return { records: out, withoutBytes };
}
