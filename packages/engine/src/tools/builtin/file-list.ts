/**
 * The files under a search scope, through ripgrep or the built-in walker, in the same order and
 * with the same rules either way (see walker.ts and ripgrep.ts).
 */
type Picomatch = typeof import('picomatch');
let picomatchModule: Picomatch | undefined;
import { sep } from 'node:path';
import { readDirChecked } from '../safe-open.js';
import { commonArgs, ripgrepLineBatches } from './ripgrep.js';
import { absoluteOf, type SearchScope, WALK_YIELD_DIRS, type WalkedFile, walkerAccepts, walkFileBatches } from './walker.js';

/** A glob matched against the path relative to the search root, or against the base name. */
export interface PathFilter {
  readonly pattern: string;
  matches(rel: string): boolean;
  /** A pattern without `/` can also narrow ripgrep's own walk. */
  readonly basenameOnly: boolean;
}

/** `picomatch` is loaded when the first filter is made, not at start-up. */
export async function pathFilter(pattern: string): Promise<PathFilter> {
  picomatchModule ??= ((await import('picomatch')) as unknown as { default: Picomatch }).default;
  const clean = pattern.replace(/^\.\//, '').replace(/^\/+/, '');
  const isMatch = picomatchModule(clean, { dot: true });
  const basenameOnly = !clean.includes('/');
  return {
    pattern: clean,
    basenameOnly,
    matches: (rel) => isMatch(rel) || (basenameOnly && isMatch(rel.slice(rel.lastIndexOf('/') + 1))),
  };
}

/** Every file under the scope (rg when `rg` is given, else the walker), filtered by `filter`. */
export async function* listFiles(
  scope: SearchScope,
  rg: string | null,
  filter: PathFilter | undefined,
  signal?: AbortSignal,
): AsyncGenerator<WalkedFile> {
  for await (const batch of listFileBatches(scope, rg, filter, signal)) yield* batch;
}

/** As `listFiles`, in batches (one await per batch). */
export async function* listFileBatches(
  scope: SearchScope,
  rg: string | null,
  filter: PathFilter | undefined,
  signal?: AbortSignal,
): AsyncGenerator<WalkedFile[]> {
  if (rg && scope.kind === 'dir') yield* withWalkerFallback(scope, rg, filter, signal);
  else yield* filtered(walkFileBatches(scope, signal), filter);
}

async function* filtered(batches: AsyncIterable<WalkedFile[]>, filter: PathFilter | undefined): AsyncGenerator<WalkedFile[]> {
  for await (const batch of batches) {
    const kept = filter ? batch.filter((file) => filter.matches(file.rel)) : batch;
    if (kept.length > 0) yield kept;
  }
}

async function* withWalkerFallback(
  scope: SearchScope,
  rg: string,
  filter: PathFilter | undefined,
  signal?: AbortSignal,
): AsyncGenerator<WalkedFile[]> {
  let produced = false;
  try {
    for await (const batch of ripgrepFileBatches(scope, rg, filter, signal)) {
      produced = true;
      yield batch;
    }
  } catch (error) {
    if (produced || signal?.aborted) throw error;
    // rg could not run: the walker gives the same answer.
    yield* filtered(walkFileBatches(scope, signal), filter);
  }
}

/** The files `rg --files` lists (no fallback: tests call it directly). */
export async function* ripgrepFiles(
  scope: SearchScope,
  rg: string,
  filter: PathFilter | undefined,
  signal?: AbortSignal,
): AsyncGenerator<WalkedFile> {
  for await (const batch of ripgrepFileBatches(scope, rg, filter, signal)) yield* batch;
}

/**
 * `rg --files`, passed through the walker's rules so both paths give the same answer; only the
 * files `filter` keeps are verified (SEC-4) and yielded.
 */
async function* ripgrepFileBatches(
  scope: SearchScope,
  rg: string,
  filter: PathFilter | undefined,
  signal?: AbortSignal,
): AsyncGenerator<WalkedFile[]> {
  // No --glob for rg here: rg's globs override its ignore logic, which would bring ignored files
  // back. The pattern is matched in JS instead. When the search root is where the .gitignore
  // rules start, rg has read every rule the walker reads, so each file's own rule need not be
  // tested again (the costly per-file check); below that root, rg does not see the parents'
  // rules and every file is checked.
  const args = [...commonArgs(), '--files', '--', '.'];
  const fileRulesApplied = scope.rules.top === scope.root;
  const names = new Map<string, Promise<Set<string> | undefined>>();
  for await (const lines of ripgrepLineBatches(rg, args, scope.root, signal)) {
    const accepted: WalkedFile[] = [];
    for (const line of lines) {
      const rel = line.startsWith('./') ? line.slice(2) : line;
      if ((!filter || filter.matches(rel)) && walkerAccepts(scope, rel, fileRulesApplied))
        accepted.push({ absolute: absoluteOf(scope.root, rel), rel });
    }
    const out = await verifiedFiles(accepted, names);
    if (out.length > 0) yield out;
  }
}

/**
 * SEC-4: rg walks by name, so a folder swapped for a link mid-walk would hand it outside names.
 * Each folder rg reported files from is read once more through a descriptor verified to be that
 * folder (the walker's own check), and a file is kept only when its folder holds it as a regular
 * file: a name that exists only outside the workspace cannot pass.
 */
export async function verifiedFiles(
  files: readonly WalkedFile[],
  names: Map<string, Promise<Set<string> | undefined>>,
): Promise<WalkedFile[]> {
  // One wait per batch for its folders' listings, then a synchronous pass: an await per file
  // (50,000 on a big tree) cost more than rg's own walk in microtask hops and garbage.
  const cuts = files.map((file) => file.absolute.lastIndexOf(sep));
  const dirs = files.map((file, i) => file.absolute.slice(0, cuts[i]) || sep);
  const batchDirs = [...new Set(dirs)];
  let read = 0;
  for (const dir of batchDirs) {
    if (names.has(dir)) continue;
    names.set(dir, regularNames(dir));
    // Folders are listed synchronously: the event loop runs between runs of them, as in the walker.
    if (++read % WALK_YIELD_DIRS === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  const listings = await Promise.all(batchDirs.map((dir) => names.get(dir)));
  const held = new Map(batchDirs.map((dir, i) => [dir, listings[i]]));
  const out: WalkedFile[] = [];
  files.forEach((file, i) => {
    if (held.get(dirs[i] as string)?.has(file.absolute.slice((cuts[i] as number) + 1))) out.push(file);
  });
  return out;
}

async function regularNames(dir: string): Promise<Set<string> | undefined> {
  try {
    const entries = await readDirChecked(dir);
    return entries && new Set(entries.filter((entry) => entry.isFile()).map((entry) => entry.name));
  } catch {
    return undefined;
  }
}
