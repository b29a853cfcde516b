/**
 * Bounds (CKPT-2): a per-session and a global size cap, pruned oldest turn first, then a sweep
 * of chunks and file copies nothing references any more. Sizes are unique chunk bytes, so a
 * chunk shared by ten turns counts once. The workspace indexes (the copies a bash capture needs
 * as "before") are roots and are never pruned. Files younger than the grace period are never
 * swept: a running session may have stored them and not yet written the record naming them.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { type CheckpointLog, listLogs, logPath, readLog, writeLog } from './log.js';
import { ChunkStore } from './store.js';
import { type CheckpointLimits, DEFAULT_CHECKPOINT_LIMITS, type FileState } from './tracker.js';

export interface GcOptions {
  readonly limits?: Partial<CheckpointLimits>;
  /** Unreferenced files younger than this are kept (default 10 minutes). */
  readonly graceMs?: number;
  /** Logs written more recently than this are neither pruned nor rewritten (a live session's). */
  readonly skipRecentMs?: number;
  readonly dryRun?: boolean;
}

export interface GcReport {
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  readonly freedBytes: number;
  readonly freedFiles: number;
  readonly prunedTurns: number;
  readonly sessions: number;
}

interface Group {
  readonly session: string;
  readonly at: string;
  readonly seqs: number[];
  readonly files: string[];
  readonly isTurn: boolean;
}

export async function collectGarbage(home: string, options: GcOptions = {}): Promise<GcReport> {
  const limits = { ...DEFAULT_CHECKPOINT_LIMITS, ...(options.limits ?? {}) };
  const grace = options.graceMs ?? 10 * 60_000;
  const store = ChunkStore.forHome(home);
  const manifests = new Map<string, ReadonlyArray<readonly [string, number]>>();
  const chunksOf = async (hash: string): Promise<ReadonlyArray<readonly [string, number]>> => {
    let known = manifests.get(hash);
    if (!known) {
      known = await store.manifest(hash).then(
        (m) => m.chunks,
        () => [],
      );
      manifests.set(hash, known);
    }
    return known;
  };
  const hashesOf = (state: FileState): string[] => (state.kind === 'file' ? [state.hash] : []);

  // Roots: the workspace indexes.
  const roots = new Set<string>();
  const indexDir = join(store.dir, 'index');
  for (const name of await fs.readdir(indexDir).catch(() => [] as string[])) {
    if (!name.endsWith('.json')) continue;
    try {
      const rows = JSON.parse(await fs.readFile(join(indexDir, name), 'utf8')) as unknown[];
      for (const row of rows) {
        const state = (row as unknown[])[5] as FileState | undefined;
        if (state?.kind === 'file') roots.add(state.hash);
      }
    } catch {
      // A damaged index is a cache; it is rebuilt by the next walk.
    }
  }

  const logs = new Map<string, CheckpointLog>();
  const frozen = new Set<string>();
  const now = Date.now();
  for (const id of await listLogs(home)) {
    const log = await readLog(home, id).catch(() => undefined);
    if (!log) continue;
    logs.set(id, log);
    const stat = await fs.stat(logPath(home, id)).catch(() => undefined);
    const journal = await fs.access(join(store.dir, 'journal', `${id}.json`)).then(
      () => true,
      () => false,
    );
    if (journal || (options.skipRecentMs !== undefined && stat && now - stat.mtimeMs < options.skipRecentMs)) frozen.add(id);
  }

  // Turn groups: a turn record and the batches after it.
  const groups: Group[] = [];
  for (const [id, log] of logs) {
    let current: Group | undefined;
    for (const r of log.records) {
      if (r.kind === 'turn' || !current) {
        current = { session: id, at: r.at, seqs: [], files: [], isTurn: r.kind === 'turn' };
        groups.push(current);
      }
      current.seqs.push(r.seq);
      if (r.kind === 'turn') current.files.push(r.context);
      else for (const c of r.changes) current.files.push(...hashesOf(c.before), ...hashesOf(c.after));
      if (r.kind === 'rewind' && r.chat) current.files.push(r.chat.context);
    }
  }
  const sizeOfGroup = async (group: Group, into: Map<string, number>): Promise<void> => {
    for (const file of group.files) for (const [chunk, size] of await chunksOf(file)) into.set(chunk, size);
  };
  const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

  const dropped = new Set<Group>();
  // Per session, newest first: once the session's unique bytes pass the cap, older turns go.
  for (const id of logs.keys()) {
    if (frozen.has(id)) continue;
    const seen = new Map<string, number>();
    const mine = groups.filter((g) => g.session === id).reverse();
    for (const [i, group] of mine.entries()) {
      await sizeOfGroup(group, seen);
      if (i > 0 && total(seen) > limits.sessionCapBytes) dropped.add(group);
    }
  }
  // Globally, newest first, after the roots.
  const seen = new Map<string, number>();
  for (const root of roots) for (const [chunk, size] of await chunksOf(root)) seen.set(chunk, size);
  const byAge = groups.filter((g) => !dropped.has(g)).sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  for (const [i, group] of byAge.entries()) {
    await sizeOfGroup(group, seen);
    if (i > 0 && total(seen) > limits.globalCapBytes && !frozen.has(group.session)) dropped.add(group);
  }

  let prunedTurns = 0;
  for (const [id, log] of logs) {
    const drop = new Set(groups.filter((g) => g.session === id && dropped.has(g)).flatMap((g) => g.seqs));
    if (drop.size === 0) continue;
    const turns = log.records.filter((r) => r.kind === 'turn' && drop.has(r.seq)).length;
    prunedTurns += turns;
    log.records = log.records.filter((r) => !drop.has(r.seq));
    log.pruned = (log.pruned ?? 0) + turns;
    if (!options.dryRun) await writeLog(home, log);
  }

  // Sweep what nothing references.
  const liveFiles = new Set(roots);
  for (const group of groups) if (!dropped.has(group)) for (const f of group.files) liveFiles.add(f);
  const liveChunks = new Set<string>();
  for (const f of liveFiles) for (const [chunk] of await chunksOf(f)) liveChunks.add(chunk);
  let bytesBefore = 0;
  let freedBytes = 0;
  let freedFiles = 0;
  const sweep = async (folder: string, keep: (name: string) => boolean): Promise<void> => {
    for (const sub of await fs.readdir(folder).catch(() => [] as string[])) {
      const dir = join(folder, sub);
      for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
        const path = join(dir, name);
        const stat = await fs.stat(path).catch(() => undefined);
        if (!stat) continue;
        bytesBefore += stat.size;
        if (keep(name) || now - stat.mtimeMs < grace) continue;
        freedBytes += stat.size;
        freedFiles++;
        if (!options.dryRun) await fs.rm(path, { force: true });
      }
    }
  };
  await sweep(join(store.dir, 'chunks'), (name) => liveChunks.has(name));
  await sweep(join(store.dir, 'files'), (name) => liveFiles.has(name.replace(/\.json$/, '')));
  const packs = await sweepPacks(store, (key) => (key.startsWith('m') ? liveFiles : liveChunks).has(key.slice(1)), {
    now,
    grace,
    dryRun: options.dryRun === true,
  });
  bytesBefore += packs.bytesBefore;
  freedBytes += packs.freedBytes;
  freedFiles += packs.freedFiles;
  return {
    bytesBefore,
    bytesAfter: bytesBefore - freedBytes,
    freedBytes,
    freedFiles,
    prunedTurns,
    sessions: logs.size,
  };
}

/**
 * Packs (store.ts): a pack none of whose pieces is live is deleted; one less than half live is
 * rewritten with its live pieces (the new pack is on disk before the old one goes); a pack
 * without its index (a kill between the two renames) and temp files are swept. Nothing younger
 * than the grace period is touched.
 */
async function sweepPacks(
  store: ChunkStore,
  live: (key: string) => boolean,
  options: { now: number; grace: number; dryRun: boolean },
): Promise<{ bytesBefore: number; freedBytes: number; freedFiles: number }> {
  const dir = store.packDir;
  let bytesBefore = 0;
  let freedBytes = 0;
  let freedFiles = 0;
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const present = new Set(names);
  const remove = async (name: string, size: number): Promise<void> => {
    freedBytes += size;
    freedFiles++;
    if (!options.dryRun) await fs.rm(join(dir, name), { force: true });
  };
  const rewrite: Array<{ pack: string; keys: string[]; size: number; idxSize: number }> = [];
  for (const name of names) {
    const stat = await fs.stat(join(dir, name)).catch(() => undefined);
    if (!stat) continue;
    bytesBefore += stat.size;
    const old = options.now - stat.mtimeMs >= options.grace;
    if (name.endsWith('.tmp')) {
      if (old) await remove(name, stat.size);
      continue;
    }
    if (name.endsWith('.pack')) {
      if (!present.has(`${name.slice(0, -5)}.idx`) && old) await remove(name, stat.size);
      continue;
    }
    if (!name.endsWith('.idx')) continue;
    const pack = name.slice(0, -4);
    const packStat = await fs.stat(join(dir, `${pack}.pack`)).catch(() => undefined);
    if (!packStat) {
      if (old) await remove(name, stat.size);
      continue;
    }
    if (!old || options.now - packStat.mtimeMs < options.grace) continue;
    let rows: Array<[string, number, number]>;
    try {
      rows = JSON.parse(await fs.readFile(join(dir, name), 'utf8')) as Array<[string, number, number]>;
    } catch {
      continue;
    }
    const keys = rows.filter(([key]) => live(key));
    const liveBytes = keys.reduce((sum, [, , length]) => sum + length, 0);
    if (keys.length === 0) {
      // The index goes first: a pack without its index names nothing.
      await remove(name, stat.size);
      await remove(`${pack}.pack`, packStat.size);
    } else if (liveBytes < packStat.size / 2)
      rewrite.push({ pack, keys: keys.map(([key]) => key), size: packStat.size, idxSize: stat.size });
  }
  if (options.dryRun) {
    for (const r of rewrite) freedBytes += r.size;
    return { bytesBefore, freedBytes, freedFiles };
  }
  for (const r of rewrite) {
    const copier = new ChunkStore(store.dir);
    for (const key of r.keys) {
      const raw = await copier.rawOf(key);
      if (raw) copier.stageRaw(key, raw);
    }
    await copier.flush();
    await remove(`${r.pack}.idx`, r.idxSize);
    await remove(`${r.pack}.pack`, r.size);
    // What the rewrite wrote is not freed.
    freedBytes -= copier.packBytesWritten;
  }
  return { bytesBefore, freedBytes, freedFiles };
}
