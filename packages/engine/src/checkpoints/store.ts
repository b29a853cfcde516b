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
 * turns, sessions and workspaces and written once. Chunks and manifests are stored deflated
 * (raw DEFLATE; in packs an encoding byte first, and pieces under 256 bytes or that do not
 * shrink stored plain); names are hashes of the plain bytes. Reads re-hash: a damaged chunk is
 * reported, never restored.
 *
 * Packs. New chunks and manifests are gathered in memory and written together as a pack:
 *
 *   <home>/checkpoints/packs/<sha256>.pack   the deflated pieces, one after another (0600)
 *   <home>/checkpoints/packs/<sha256>.idx    JSON: [key, offset, length] per piece (0600)
 *
 * A pack is written by temp file + fsync + rename, then its index the same way, then the
 * folder is fsynced: one fsync per pack (up to 8 MiB) instead of one per file, which is what
 * made the first checkpoint of a large tree slow. `flush()` writes what is gathered; callers
 * flush before they write anything that names a piece (a log record, the stat index, a
 * journal), so a kill -9 at any point leaves at worst a pack nobody names (swept by gc) and
 * never a name without its piece. Loose files (`chunks/`, `files/`) from earlier versions are
 * still read.
 */
import { chmodSync, existsSync, promises as fs, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { lazyBuiltin } from '@crystal/core';
import { commit, discard, type StagedFile, stageReplace, syncAll, syncDir } from '../durable-files.js';

// Issue 22 item 4: a turn that only talks stores nothing but its (empty or one-piece) context,
// so node:crypto loads with the first hash and node:zlib with the first piece worth deflating.
const crypto = lazyBuiltin<typeof import('node:crypto')>('node:crypto');
const zlib = lazyBuiltin<typeof import('node:zlib')>('node:zlib');

export const MIN_CHUNK = 2 * 1024;
export const MAX_CHUNK = 64 * 1024;
/** 13 high bits of the gear hash: a cut every 8 KiB on average. */
const CUT_MASK = 0xfff80000;

let gearTable: Uint32Array | undefined;

/** The gear hash's table: 256 hashes, made on the first chunked file, not when the module loads (issue 22 item 4). */
function gear(): Uint32Array {
  if (gearTable) return gearTable;
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) table[i] = crypto().createHash('sha256').update(`crystal-gear-${i}`).digest().readUInt32BE(0);
  gearTable = table;
  return table;
}

/** Content-defined chunk boundaries of `bytes` (end offsets). */
export function chunkBoundaries(bytes: Uint8Array): number[] {
  const ends: number[] = [];
  const GEAR = gear();
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

export const sha256 = (bytes: Uint8Array | string): string => crypto().createHash('sha256').update(bytes).digest('hex');

/**
 * The empty model context (`[]`), the record before the first turn of every new session: a
 * piece every store has without storing it (never written, never read from disk, never swept),
 * so that record hashes, looks up and writes nothing (issue 22 item 4).
 */
export const EMPTY_CONTEXT_HASH = '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945';
const BUILTIN = new Map<string, Buffer>([[`c${EMPTY_CONTEXT_HASH}`, Buffer.from([0, 0x5b, 0x5d])]]);

/** The hash of `bytes`, without node:crypto for the empty context. */
function hashOf(bytes: Uint8Array): string {
  return bytes.length === 2 && bytes[0] === 0x5b && bytes[1] === 0x5d ? EMPTY_CONTEXT_HASH : sha256(bytes);
}

/** How `put` looks for a piece stored earlier (see `PutOptions`). */
export interface PutOptions {
  /**
   * `all` (the default): every pack's index is read at the first lookup, so content stored by
   * any earlier session is found and not stored again. `loaded`: a content that fits one piece is
   * looked up only in what this process has read or written; a miss stores it again (a duplicate
   * is harmless: pieces are named by content). A turn's model context is new almost every time,
   * so its record does not read every index in Home, which grows with history (issue 22 item 5).
   * Content of several pieces is always looked up in every index (its chunks repeat).
   */
  readonly lookup?: 'all' | 'loaded';
}

const HASH = /^[0-9a-f]{64}$/;
const KEY = /^[cm][0-9a-f]{64}$/;
/** The largest piece a pack holds: a chunk (64 KiB) or a manifest (some KiB per MiB of file). */
const MAX_PIECE = 64 * 1024 * 1024;

export interface FileManifest {
  readonly size: number;
  /** [chunk hash, chunk size] in order. */
  readonly chunks: ReadonlyArray<readonly [string, number]>;
}

/** Pack indexes read at once by `loadPacks`. */
const INDEX_READS = 16;
/** A pack is written once this many deflated bytes are gathered (tests make it small to get many packs). */
const PACK_BYTES = Number(process.env.CRYSTAL_CHECKPOINT_TEST_PACK_BYTES) || 8 * 1024 * 1024;
/** Test seam: pack N stops between its pack file and its index, so a test can kill -9 there. */
const PAUSE_PACK = Number(process.env.CRYSTAL_CHECKPOINT_TEST_PAUSE_PACK ?? Number.NaN);

interface PackedAt {
  readonly pack: string;
  readonly offset: number;
  readonly length: number;
}

export class ChunkStore {
  private readonly known = new Set<string>();
  private readonly dirsMade = new Set<string>();
  /** Pieces in written packs, by key (`c<hash>` a chunk, `m<hash>` a manifest). */
  private packed: Map<string, PackedAt> | undefined;
  private readonly packsRead = new Set<string>();
  /** Pieces gathered for the next pack. */
  private staged = new Map<string, Buffer>();
  private stagedBytes = 0;
  private writing: Promise<void> = Promise.resolve();
  /** Packs written, and their bytes with their indexes (tests, benchmarks, gc). */
  packsWritten = 0;
  packBytesWritten = 0;
  /** Pack indexes read from disk so far (tests: a turn record reads none, however long the history). */
  indexesRead = 0;
  /** Whether loose files of an earlier version may exist (checked once). */
  private readonly loose: boolean;

  constructor(readonly dir: string) {
    this.loose = existsSync(join(dir, 'chunks')) || existsSync(join(dir, 'files'));
  }

  static forHome(home: string): ChunkStore {
    return new ChunkStore(join(home, 'checkpoints'));
  }

  get packDir(): string {
    return join(this.dir, 'packs');
  }

  chunkPath(hash: string): string {
    if (!HASH.test(hash)) throw new Error(`'${hash}' is not a checkpoint chunk reference.`);
    return join(this.dir, 'chunks', hash.slice(0, 2), hash);
  }

  manifestPath(hash: string): string {
    if (!HASH.test(hash)) throw new Error(`'${hash}' is not a checkpoint file reference.`);
    return join(this.dir, 'files', hash.slice(0, 2), `${hash}.json`);
  }

  /** Reads the indexes of packs not read yet (another process may have written some). */
  async loadPacks(): Promise<Map<string, PackedAt>> {
    const packed = this.packed ?? new Map<string, PackedAt>();
    this.packed = packed;
    let names: string[];
    try {
      names = await fs.readdir(this.packDir);
    } catch {
      return packed;
    }
    // Read 16 at a time (one after another, 400 packs took ~60 ms here, now ~40 ms); parsed in order.
    const wanted = names.filter((name) => name.endsWith('.idx') && !this.packsRead.has(name));
    const texts: Array<Promise<string>> = [];
    for (let i = 0; i < wanted.length; i += INDEX_READS) {
      const batch = wanted.slice(i, i + INDEX_READS).map((name) => fs.readFile(join(this.packDir, name), 'utf8'));
      for (const read of batch) read.catch(() => undefined);
      await Promise.allSettled(batch);
      texts.push(...batch);
    }
    for (const [i, name] of wanted.entries()) {
      const pack = name.slice(0, -4);
      try {
        this.indexesRead++;
        const rows = JSON.parse(await (texts[i] as Promise<string>)) as unknown;
        if (!Array.isArray(rows) || !HASH.test(pack)) continue;
        for (const row of rows) {
          // A damaged or hostile index names nothing it cannot hold: a piece is a chunk or a manifest, never huge.
          if (!Array.isArray(row)) continue;
          const [key, offset, length] = row as [unknown, unknown, unknown];
          if (typeof key !== 'string' || !KEY.test(key) || !Number.isSafeInteger(offset) || !Number.isSafeInteger(length))
            continue;
          if ((offset as number) < 0 || (length as number) < 1 || (length as number) > MAX_PIECE) continue;
          packed.set(key, { pack, offset: offset as number, length: length as number });
        }
        this.packsRead.add(name);
      } catch {
        // A damaged index: its pieces read as missing.
      }
    }
    return packed;
  }

  /** Whether a piece is stored (or gathered for the next pack). */
  private async has(key: string, loose: string, lookup: 'all' | 'loaded' = 'all'): Promise<boolean> {
    if (this.known.has(key) || this.staged.has(key) || BUILTIN.has(key)) return true;
    if (lookup === 'loaded') return this.packed?.has(key) === true;
    const packed = this.packed ?? (await this.loadPacks());
    if (packed.has(key) || (this.loose && (await exists(loose)))) {
      this.known.add(key);
      return true;
    }
    return false;
  }

  /** Gathers a piece as it is stored (gc: the live pieces of a pack being rewritten). */
  stageRaw(key: string, encoded: Buffer): void {
    if (this.staged.has(key)) return;
    this.staged.set(key, encoded);
    this.stagedBytes += encoded.length;
  }

  /** A piece as it is stored (its encoding byte first), or undefined. */
  async rawOf(key: string): Promise<Buffer | undefined> {
    const hash = key.slice(1);
    return this.raw(key, key.startsWith('m') ? this.manifestPath(hash) : this.chunkPath(hash));
  }

  /** A piece's plain bytes, or undefined when missing; throws when it cannot be decoded. */
  async pieceOf(key: string): Promise<Buffer | undefined> {
    const raw = await this.rawOf(key);
    return raw && decode(raw);
  }

  /** Gathers a piece for the next pack; writes the pack once it is full. */
  private async stage(key: string, data: Uint8Array): Promise<void> {
    if (this.staged.has(key)) return;
    const encoded = encode(data);
    this.staged.set(key, encoded);
    this.stagedBytes += encoded.length;
    if (this.stagedBytes >= PACK_BYTES) await this.flush();
  }

  /** Stores `bytes`; answers the SHA-256 of the whole content, under which its manifest is kept. */
  async put(bytes: Uint8Array, options: PutOptions = {}): Promise<string> {
    const hash = hashOf(bytes);
    if (this.known.has(hash)) return hash;
    // `loaded` holds for content of one piece (no cut within it: stored as its chunk) only.
    const onePiece =
      options.lookup === 'loaded' &&
      bytes.length <= MAX_CHUNK &&
      (bytes.length <= MIN_CHUNK || chunkBoundaries(bytes).length <= 1);
    const lookup = onePiece ? 'loaded' : 'all';
    if (
      (await this.has(`m${hash}`, this.manifestPath(hash), lookup)) ||
      (bytes.length <= MAX_CHUNK && (await this.has(`c${hash}`, this.chunkPath(hash), lookup)))
    ) {
      this.known.add(hash);
      return hash;
    }
    const boundaries = chunkBoundaries(bytes);
    if (boundaries.length <= 1) {
      // One chunk: the chunk is the file, under the same hash; no manifest is needed.
      await this.stage(`c${hash}`, bytes);
      this.known.add(hash);
      return hash;
    }
    const chunks: Array<[string, number]> = [];
    let start = 0;
    for (const end of boundaries) {
      const piece = bytes.subarray(start, end);
      const chunkHash = sha256(piece);
      if (!(await this.has(`c${chunkHash}`, this.chunkPath(chunkHash)))) await this.stage(`c${chunkHash}`, piece);
      chunks.push([chunkHash, piece.length]);
      start = end;
    }
    const manifest: FileManifest = { size: bytes.length, chunks };
    await this.stage(`m${hash}`, Buffer.from(JSON.stringify(manifest)));
    this.known.add(hash);
    return hash;
  }

  /**
   * Writes the gathered pieces as one pack: pack, then index, each temp + fsync + rename, then
   * the folder is fsynced. Resolves once every piece put so far is on disk.
   */
  flush(): Promise<void> {
    const run = this.writing.then(() => this.writePack());
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async writePack(): Promise<void> {
    if (this.staged.size === 0) return;
    const pieces = this.staged;
    this.staged = new Map();
    this.stagedBytes = 0;
    const rows: Array<[string, number, number]> = [];
    const parts: Buffer[] = [];
    let offset = 0;
    for (const [key, data] of pieces) {
      rows.push([key, offset, data.length]);
      parts.push(data);
      offset += data.length;
    }
    const body = Buffer.concat(parts);
    const name = sha256(body);
    const index = Buffer.from(JSON.stringify(rows));
    // Issue 22: pack and index are written to the page cache, fsynced in one parallel wait, then
    // renamed in that order (pack before index) and the folder fsynced: three waits, not sixteen.
    const staged: StagedFile[] = [];
    try {
      this.ensureDir(this.packDir);
      staged.push(stageReplace(join(this.packDir, `${name}.pack`), body));
      if (this.packsWritten + 1 === PAUSE_PACK) {
        await syncAll(staged);
        commit(staged);
        staged.length = 0;
        process.stderr.write(`checkpoint pack ${PAUSE_PACK} paused before its index\n`);
        await new Promise(() => {});
      }
      staged.push(stageReplace(join(this.packDir, `${name}.idx`), index));
      await syncAll(staged);
      commit(staged);
      await syncDir(this.packDir);
    } catch (error) {
      await discard(staged);
      // Not on disk: put back, so a later flush tries again and nothing is named that is missing.
      for (const [key, data] of pieces) if (!this.staged.has(key)) this.staged.set(key, data);
      this.stagedBytes += body.length;
      throw error;
    }
    const packed = this.packed ?? new Map<string, PackedAt>();
    this.packed = packed;
    for (const [key, off, length] of rows) packed.set(key, { pack: name, offset: off, length });
    this.packsRead.add(`${name}.idx`);
    for (const key of pieces.keys()) this.known.add(key);
    this.packsWritten++;
    this.packBytesWritten += body.length + index.length;
  }

  /** Page-cache calls only (durable-files.ts), once per process. */
  private ensureDir(dir: string): void {
    if (this.dirsMade.has(dir)) return;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const d of [this.dir, dir]) {
      try {
        chmodSync(d, 0o700);
      } catch {
        // Not ours to change: left as it is.
      }
    }
    this.dirsMade.add(dir);
  }

  /** A piece as stored (encoding byte first): gathered, packed or loose; undefined when missing. */
  private async raw(key: string, loose: string): Promise<Buffer | undefined> {
    const staged = this.staged.get(key) ?? BUILTIN.get(key);
    if (staged) return staged;
    for (let attempt = 0; attempt < 2; attempt++) {
      const packed = attempt === 0 && this.packed ? this.packed : await this.loadPacks();
      const at = packed.get(key);
      if (at) {
        try {
          const handle = await fs.open(join(this.packDir, `${at.pack}.pack`), 'r');
          try {
            const buffer = Buffer.alloc(at.length);
            const { bytesRead } = await handle.read(buffer, 0, at.length, at.offset);
            if (bytesRead === at.length) return buffer;
          } finally {
            await handle.close();
          }
        } catch {
          // Repacked or swept meanwhile: the indexes are read again once.
        }
        this.packed?.delete(key);
        this.packsRead.clear();
        continue;
      }
      try {
        // Loose files of earlier versions are deflated, without the encoding byte.
        return Buffer.concat([DEFLATED, await fs.readFile(loose)]);
      } catch {
        if (attempt === 1) return undefined;
      }
    }
    return undefined;
  }

  async manifest(hash: string): Promise<FileManifest> {
    const raw = await this.raw(`m${hash}`, this.manifestPath(hash));
    if (!raw) {
      // A one-chunk file is stored as its chunk.
      const chunk = await this.raw(`c${hash}`, this.chunkPath(hash));
      if (chunk) {
        let size = -1;
        try {
          size = decode(chunk).length;
        } catch {
          // Damaged: get() says so.
        }
        return { size, chunks: [[hash, size]] };
      }
      throw new Error(`checkpoint file ${hash.slice(0, 12)} is missing`);
    }
    let parsed: FileManifest;
    try {
      parsed = JSON.parse(decode(raw).toString('utf8')) as FileManifest;
    } catch {
      throw new Error(`checkpoint file ${hash.slice(0, 12)} is damaged`);
    }
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
      const raw = await this.raw(`c${chunkHash}`, this.chunkPath(chunkHash));
      if (!raw)
        throw new Error(`chunk ${chunkHash.slice(0, 12)} of the stored copy ${hash.slice(0, 12)} is missing (pruned or deleted)`);
      let piece: Buffer;
      try {
        piece = decode(raw);
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
}

const PLAIN = Buffer.from([0]);
const DEFLATED = Buffer.from([1]);
/** Below this a piece is stored as it is: deflating a few dozen bytes costs more than it saves. */
const PLAIN_BELOW = 256;

/** A piece as stored: one encoding byte (0 plain, 1 raw DEFLATE), then the bytes. */
function encode(data: Uint8Array): Buffer {
  if (data.length >= PLAIN_BELOW) {
    const deflated = zlib().deflateRawSync(data, { level: 6 });
    if (deflated.length < data.length) return Buffer.concat([DEFLATED, deflated]);
  }
  return Buffer.concat([PLAIN, data]);
}

function decode(encoded: Buffer): Buffer {
  if (encoded[0] === 0) return encoded.subarray(1);
  if (encoded[0] === 1) return zlib().inflateRawSync(encoded.subarray(1));
  throw new Error('unknown piece encoding');
}

async function exists(path: string): Promise<boolean> {
  try {
    await fs.access(path);
    return true;
  } catch {
    return false;
  }
}
