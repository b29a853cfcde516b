/**
 * The media store (IMG-8..IMG-11, IMG-13, IMG-16): content-addressed image files
 * `<home>/media/<lower-hex sha256>`, owner-only (0600 files in a 0700 folder).
 *
 * - `save` validates again before it writes (IMG-8): signature, declared type, byte cap,
 *   pixel limit and decode (a verdict the attachment service just reached is reused by hash).
 *   The write is temp file + fsync + rename (IMG-11). Saving content that is already stored
 *   intact writes nothing. It answers the hash and the MIME type only: what a session records
 *   (IMG-10).
 * - `read` re-hashes the file and tells a missing, truncated or modified file apart (IMG-13),
 *   refuses symbolic links and other non-regular files, and checks the MIME type the session
 *   recorded.
 * - Nothing here deletes a media file (IMG-16): there is no garbage collection.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import { homePaths } from '../home.js';
import { DEFAULT_IMAGE_LIMITS, formatBytes, type ImageLimits } from './limits.js';
import {
  ImageError,
  type ImageMime,
  type ImageSubject,
  normaliseMime,
  sha256Hex,
  sniffImageMime,
  validateImage,
} from './validate.js';

/** What a session stores for a saved image (IMG-10). */
export interface StoredMedia {
  readonly hash: string;
  readonly mime: ImageMime;
}

export type MediaProblem =
  | 'invalid_reference'
  | 'missing'
  | 'not_a_file'
  | 'truncated'
  | 'modified'
  | 'mime_mismatch'
  | 'unreadable';

export type MediaRead =
  | { readonly ok: true; readonly hash: string; readonly mime: ImageMime; readonly bytes: Buffer }
  | {
      readonly ok: false;
      readonly hash: string;
      readonly problem: MediaProblem;
      /** A sentence naming the file and what is wrong with it. */
      readonly detail: string;
    };

export interface SaveOptions extends ImageSubject {
  /** The declared MIME type; the detected one must equal it (IMG-8). */
  readonly mime?: string | undefined;
}

export interface ReadOptions {
  /** The MIME type the session recorded; a stored file of another type is refused. */
  readonly mime?: string | undefined;
  /** The byte length, when the caller knows it: a shorter file is reported as truncated. */
  readonly bytes?: number | undefined;
}

const HASH = /^[0-9a-f]{64}$/;

export function isContentHash(value: string): boolean {
  return HASH.test(value);
}

export class MediaStore {
  private folderReady: Promise<void> | undefined;

  constructor(
    /** The media folder, `<home>/media`. */
    readonly dir: string,
    readonly limits: ImageLimits,
  ) {}

  static forHome(home: string, limits: ImageLimits): MediaStore {
    return new MediaStore(homePaths(home).media, limits);
  }

  /** The file of a content hash; refuses anything that is not a lower-case hex SHA-256 (no path tricks). */
  pathOf(hash: string): string {
    if (!isContentHash(hash)) throw new Error(`'${hash}' is not a media reference (a lower-case hex SHA-256).`);
    return join(this.dir, hash);
  }

  /** Validates, then writes the bytes once under their hash (IMG-8, IMG-9, IMG-11). Throws `ImageError`. */
  async save(bytes: Uint8Array, options: SaveOptions = {}): Promise<StoredMedia> {
    const image = await validateImage(bytes, { ...options, declaredMime: options.mime, limits: this.limits });
    await this.ensureFolder();
    const path = this.pathOf(image.hash);
    if (!(await this.holdsIntact(path, image.hash, bytes.length))) await writeFileAtomic(path, bytes, 0o600);
    return { hash: image.hash, mime: image.mime };
  }

  /** Reads a stored image and proves it is the one recorded (IMG-13). Never throws for a bad file. */
  async read(hash: string, options: ReadOptions = {}): Promise<MediaRead> {
    const problem = (kind: MediaProblem, detail: string): MediaRead => ({ ok: false, hash, problem: kind, detail });
    if (!isContentHash(hash))
      return problem('invalid_reference', `'${hash}' is not a media reference (a lower-case hex SHA-256).`);
    const path = join(this.dir, hash);
    let bytes: Buffer;
    try {
      const stat = await fs.lstat(path);
      if (!stat.isFile())
        return problem('not_a_file', `media file ${path} is not a regular file (a link or a folder); it is not read.`);
      const cap = Math.max(this.limits.maxImageBytes, DEFAULT_IMAGE_LIMITS.maxImageBytes);
      if (stat.size > cap)
        return problem('modified', `media file ${path} is ${formatBytes(stat.size)}, larger than any stored image.`);
      bytes = await fs.readFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return problem('missing', `media file ${path} is missing.`);
      return problem('unreadable', `media file ${path} cannot be read (${(error as Error).message}).`);
    }
    if (sha256Hex(bytes) !== hash) return problem(...(await this.classify(path, bytes, options)));
    const mime = sniffImageMime(bytes);
    if (!mime) return problem('modified', `media file ${path} no longer holds a supported image.`);
    const recorded = normaliseMime(options.mime);
    if (recorded !== undefined && recorded !== mime) {
      return problem('mime_mismatch', `media file ${path} holds ${mime}, but the session recorded ${recorded}.`);
    }
    return { ok: true, hash, mime, bytes };
  }

  /** A hash mismatch: cut short (truncated) or different content (modified). */
  private async classify(path: string, bytes: Buffer, options: ReadOptions): Promise<[MediaProblem, string]> {
    const truncated: [MediaProblem, string] = [
      'truncated',
      `media file ${path} is truncated (${formatBytes(bytes.length)} left).`,
    ];
    const modified: [MediaProblem, string] = [
      'modified',
      `media file ${path} was modified: its content no longer matches its hash.`,
    ];
    if (options.bytes !== undefined) return bytes.length < options.bytes ? truncated : modified;
    if (bytes.length === 0) return truncated;
    try {
      await validateImage(bytes, { limits: { ...this.limits, maxImageBytes: Number.MAX_SAFE_INTEGER } });
      return modified;
    } catch (error) {
      return error instanceof ImageError && error.kind === 'corrupt' ? truncated : modified;
    }
  }

  /** Whether `path` already holds this exact content (then it is only made owner-only again). */
  private async holdsIntact(path: string, hash: string, length: number): Promise<boolean> {
    try {
      const stat = await fs.lstat(path);
      if (!stat.isFile() || stat.size !== length) return false;
      if (sha256Hex(await fs.readFile(path)) !== hash) return false;
      if ((stat.mode & 0o777) !== 0o600) await fs.chmod(path, 0o600);
      return true;
    } catch {
      return false;
    }
  }

  private ensureFolder(): Promise<void> {
    this.folderReady ??= (async () => {
      await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
      await fs.chmod(this.dir, 0o700);
    })().catch((error: unknown) => {
      this.folderReady = undefined;
      throw error;
    });
    return this.folderReady;
  }
}
