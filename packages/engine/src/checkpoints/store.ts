/**
 * The checkpoint store (CKPT-2): content-addressed, chunked, owner-only, in Home.
 *
 *   <home>/checkpoints/chunks/<aa>/<sha256>        raw chunk bytes (0600, folders 0700)
 *   <home>/checkpoints/files/<aa>/<sha256>.json    a file's manifest: its size and chunk list
 *
 * A file's content is cut into content-defined chunks (a gear rolling hash, 2–64 KiB, about
 * 8 KiB on average), so an edit in the middle of a 1 MB file stores one or two new chunks, not
 * a copy: 200 edits of one file cost a few percent of 200 copies (bench/checkpoints.mjs).
 * Chunks and manifests are named by the SHA-256 of their bytes, so content is shared across
 * turns, sessions and workspaces and written once. Every write is temp file + fsync + rename,
 * and a manifest is written only after its chunks, so nothing references a missing chunk.
 * Chunks and manifests are stored deflated (raw DEFLATE); names are hashes of the plain bytes.
 * Reads re-hash: a damaged chunk is reported, never restored.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

export const MIN_CHUNK = 2 * 1024;
export const MAX_CHUNK = 64 * 1024;
/** 13 high bits of the gear hash: a cut every 8 KiB on average. */
const CUT_MASK = 0xfff80000;

const GEAR: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) table[i] = createHash('sha256').update(`crystal-gear-${i}`).digest().readUInt32BE(0);
  return table;
})();

/** Content-defined chunk boundaries of `bytes` (end offsets). */
export function chunkBoundaries(bytes: Uint8Array): number[] {
  const ends: number[] = [];
  let start = 0;
  const n = bytes.length;
  while (start < n) {
    const limit = Math.min(n, start + MAX_CHUNK);
    let end = limit;
    let h = 0;
    for (let i = start + MIN_CHUNK; i < limit; i++) {
      h = ((h << 1) + (GEAR[bytes[i] as number] as number)) >>> 0;
      if ((h & CUT_MASK) === 0) {
        end = i + 1;
        break;
      }
    }
    if (start + MIN_CHUNK >= limit) end = limit;
    ends.push(end);
    start = end;
  }
  return ends;
}

export const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

const HASH = /^[0-9a-f]{64}$/;

export interface FileManifest {
  readonly size: number;
  /** [chunk hash, chunk size] in order. */
  readonly chunks: ReadonlyArray<readonly [string, number]>;
}

export class ChunkStore {
  private readonly known = new Set<string>();
  private readonly dirsMade = new Set<string>();

  constructor(readonly dir: string) {}

  static forHome(home: string): ChunkStore {
    return new ChunkStore(join(home, 'checkpoints'));
  }

  chunkPath(hash: string): string {
    if (!HASH.test(hash)) throw new Error(`'${hash}' is not a checkpoint chunk reference.`);
    return join(this.dir, 'chunks', hash.slice(0, 2), hash);
  }

  manifestPath(hash: string): string {
    if (!HASH.test(hash)) throw new Error(`'${hash}' is not a checkpoint file reference.`);
    return join(this.dir, 'files', hash.slice(0, 2), `${hash}.json`);
  }

  /** Stores `bytes`; answers the SHA-256 of the whole content, under which its manifest is kept. */
  async put(bytes: Uint8Array): Promise<string> {
    const hash = sha256(bytes);
    const manifestPath = this.manifestPath(hash);
    if (
      this.known.has(hash) ||
      (await exists(manifestPath)) ||
      (bytes.length <= MAX_CHUNK && (await exists(this.chunkPath(hash))))
    ) {
      this.known.add(hash);
      return hash;
    }
    const boundaries = chunkBoundaries(bytes);
    if (boundaries.length <= 1) {
      // One chunk: the chunk is the file, under the same hash; no manifest is needed.
      const path = this.chunkPath(hash);
      if (!(await exists(path))) await this.writeOnce(path, bytes);
      this.known.add(hash);
      return hash;
    }
    const chunks: Array<[string, number]> = [];
    let start = 0;
    for (const end of boundaries) {
      const piece = bytes.subarray(start, end);
      const chunkHash = sha256(piece);
      const path = this.chunkPath(chunkHash);
      if (!this.known.has(`c${chunkHash}`)) {
        if (!(await exists(path))) await this.writeOnce(path, piece);
        this.known.add(`c${chunkHash}`);
      }
      chunks.push([chunkHash, piece.length]);
      start = end;
    }
    const manifest: FileManifest = { size: bytes.length, chunks };
    await this.writeOnce(manifestPath, JSON.stringify(manifest));
    this.known.add(hash);
    return hash;
  }

  async manifest(hash: string): Promise<FileManifest> {
    let text: string;
    try {
      text = inflateRawSync(await fs.readFile(this.manifestPath(hash))).toString('utf8');
    } catch (error) {
      // A one-chunk file is stored as its chunk.
      const stat = await fs.stat(this.chunkPath(hash)).catch(() => undefined);
      if (stat) return { size: -1, chunks: [[hash, stat.size]] };
      throw error;
    }
    const parsed = JSON.parse(text) as FileManifest;
    if (typeof parsed.size !== 'number' || !Array.isArray(parsed.chunks)) throw new Error(`checkpoint file ${hash} is damaged.`);
    return parsed;
  }

  /** The stored content, proven by its hash; throws a sentence naming what is missing or damaged. */
  async get(hash: string): Promise<Buffer> {
    let manifest: FileManifest;
    try {
      manifest = await this.manifest(hash);
    } catch (error) {
      throw new Error(`the stored copy ${hash.slice(0, 12)} is missing or damaged (${(error as Error).message})`);
    }
    const parts: Buffer[] = [];
    for (const [chunkHash] of manifest.chunks) {
      let piece: Buffer;
      try {
        piece = await fs.readFile(this.chunkPath(chunkHash));
      } catch {
        throw new Error(`chunk ${chunkHash.slice(0, 12)} of the stored copy ${hash.slice(0, 12)} is missing (pruned or deleted)`);
      }
      try {
        piece = inflateRawSync(piece);
      } catch {
        throw new Error(`chunk ${chunkHash.slice(0, 12)} of the stored copy is damaged`);
      }
      if (sha256(piece) !== chunkHash) throw new Error(`chunk ${chunkHash.slice(0, 12)} of the stored copy is damaged`);
      parts.push(piece);
    }
    const bytes = Buffer.concat(parts);
    if (sha256(bytes) !== hash) throw new Error(`the stored copy ${hash.slice(0, 12)} is damaged`);
    return bytes;
  }

  /** Temp file + fsync + rename; the name is the content's hash, so a racing writer writes the same bytes. */
  private async writeOnce(path: string, data: Uint8Array | string): Promise<void> {
    const dir = join(path, '..');
    if (!this.dirsMade.has(dir)) {
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      for (const d of [this.dir, join(dir, '..'), dir]) await fs.chmod(d, 0o700).catch(() => undefined);
      this.dirsMade.add(dir);
    }
    const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const handle = await fs.open(temp, 'w', 0o600);
    try {
      await handle.writeFile(deflateRawSync(typeof data === 'string' ? Buffer.from(data) : data, { level: 6 }));
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.rename(temp, path);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await fs.access(path);
    return true;
  } catch {
    return false;
  }
}
