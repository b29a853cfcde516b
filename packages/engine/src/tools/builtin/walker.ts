/**
 * The built-in file walker, used when ripgrep is not on PATH and to check what ripgrep returns,
 * so both ways give the same files in the same order:
 * - depth first, the entries of each directory sorted by name in byte order (`rg --sort path`);
 * - `.gitignore` files honoured from the top of the repository (or the workspace) down, the
 *   deepest decisive rule winning, an ignored directory never entered;
 * - the skip list (`bin obj .git .vs node_modules dist`) and credential paths left out;
 * - symbolic links never followed, so enumeration cannot leave the fence through a link, and
 *   each folder read through a descriptor verified to be that folder (SEC-4: a folder swapped
 *   for a link mid-walk is not listed).
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Ignore } from 'ignore';
import { inHome, isCredentialName, isCredentialPath, isHomeSecret, isWithin, realPath, resolvePath } from '../fence.js';
import { checkedTarget, type FenceHost, notRegularText, readDirChecked } from '../safe-open.js';
import { ToolFailure } from './failure.js';
import { findGitRoot } from './git-root.js';

export const SKIP_DIRS: readonly string[] = ['bin', 'obj', '.git', '.vs', 'node_modules', 'dist'];
const SKIP = new Set(SKIP_DIRS);

export function isSkippedDir(name: string): boolean {
  return SKIP.has(name);
}

/** Byte order of the UTF-8 names, the order ripgrep sorts by. */
export function compareNames(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** The nearest directory at or above `dir` that holds `.git` (a folder or a worktree file). */
export { findGitRoot };

const toPosix = (path: string): string => (sep === '/' ? path : path.split(sep).join('/'));

/** Where an enumeration runs and how its paths are shown. */
export interface SearchScope {
  /** The workspace root, links followed. */
  readonly workspace: string;
  /** The walk root, links followed. */
  readonly root: string;
  readonly kind: 'dir' | 'file';
  /** What the model called the root (for messages). */
  readonly display: string;
  readonly rules: GitignoreRules;
  /** Crystal Home (links followed), when the host named it (SEC-3). */
  readonly home?: string;
}

/** Resolves the `path` argument of list, glob and grep through the fence. */
type IgnoreFactory = (options?: { allowRelativePaths?: boolean }) => Ignore;
let ignoreFactory: IgnoreFactory | undefined;

/** `ignore` is loaded when the first search runs, not at start-up. */
async function loadIgnore(): Promise<IgnoreFactory> {
  ignoreFactory ??= ((await import('ignore')) as unknown as { default: IgnoreFactory }).default;
  return ignoreFactory;
}

export async function searchScope(fence: string | FenceHost, path: string | undefined, callId?: string): Promise<SearchScope> {
  await loadIgnore();
  const host: FenceHost = typeof fence === 'string' ? { workspace: fence } : fence;
  const workspace = host.workspace;
  const verdict = checkedTarget(host, path ?? '.', callId);
  if (verdict.credential) throw new ToolFailure(`${verdict.display} is a credentials path; it is not searched or listed.`);
  let stat: import('node:fs').Stats;
  try {
    stat = statSync(verdict.real);
  } catch {
    throw new ToolFailure(`Path not found: ${verdict.display}.`);
  }
  // SEC-5: a FIFO, socket or device is never opened (a read would block for ever).
  if (!stat.isDirectory() && !stat.isFile()) throw new ToolFailure(notRegularText(verdict.display, stat));
  const kind: 'dir' | 'file' = stat.isDirectory() ? 'dir' : 'file';
  const root = verdict.real;
  const ws = resolvePath(workspace, '.').real;
  const home = host.home === undefined ? undefined : realPath(resolve(host.home));
  const base = kind === 'dir' ? root : dirname(root);
  let rules = new GitignoreRules(findGitRoot(base) ?? (verdict.inside ? ws : base));
  // A root the model names explicitly is searched even when an ancestor's .gitignore ignores it.
  if (kind === 'dir' && rules.top !== root && rules.ignoresDir(root)) rules = new GitignoreRules(root);
  return { workspace: ws, root, kind, display: verdict.display, rules, ...(home === undefined ? {} : { home }) };
}

/**
 * SEC-3: whether a walk leaves this path out for Home's sake: Home itself when the walk started
 * outside it (a workspace that contains Home), and Home's secret files always.
 */
export function homeHides(scope: SearchScope, absolute: string, isDir: boolean): boolean {
  const home = scope.home;
  if (home === undefined) return false;
  if (isDir) return absolute === home && !isWithin(home, scope.root) && inHome(home, scope.workspace, absolute);
  if (!isWithin(home, scope.root) && inHome(home, scope.workspace, absolute)) return true;
  return isHomeSecret(home, absolute);
}

/** A file's path as the tools print it: relative to the workspace when inside, else absolute. */
export function displayOf(scope: SearchScope, absolute: string): string {
  const rel = relative(scope.workspace, absolute);
  if (rel === '') return '.';
  if (rel.startsWith('..') || rel.startsWith(sep) || /^[A-Za-z]:/.test(rel)) return absolute;
  return toPosix(rel);
}

/** `.gitignore` files from `top` down; each directory's rules are read once. */
export class GitignoreRules {
  private readonly files = new Map<string, Ignore | null>();
  private readonly dirs = new Map<string, boolean>();

  constructor(readonly top: string) {}

  /** Whether the path is ignored by the deepest `.gitignore` with a rule for it. */
  ignores(absolute: string, isDir: boolean): boolean {
    const rel = relative(this.top, absolute);
    if (rel === '' || rel.startsWith('..')) return false;
    let dir = dirname(absolute);
    for (;;) {
      const rules = this.rulesOf(dir);
      if (rules) {
        const result = rules.test(toPosix(relative(dir, absolute)) + (isDir ? '/' : ''));
        if (result.ignored) return true;
        if (result.unignored) return false;
      }
      if (dir === this.top) return false;
      const parent = dirname(dir);
      if (parent === dir) return false;
      dir = parent;
    }
  }

  private readonly chains = new Map<string, ReadonlyArray<{ readonly rules: Ignore; readonly prefix: string }>>();

  /**
   * Whether the file `name` in directory `dir` is ignored: the same answer as
   * `ignores(join(dir, name), false)`, with the rule sets and relative prefixes of `dir`
   * computed once per directory instead of path arithmetic per file.
   */
  ignoresFile(dir: string, name: string): boolean {
    let chain = this.chains.get(dir);
    if (chain === undefined) {
      const found: Array<{ rules: Ignore; prefix: string }> = [];
      const rel = relative(this.top, dir);
      if (!rel.startsWith('..')) {
        let at = dir;
        for (;;) {
          const rules = this.rulesOf(at);
          if (rules) {
            const prefix = toPosix(relative(at, dir));
            found.push({ rules, prefix: prefix === '' ? '' : `${prefix}/` });
          }
          if (at === this.top) break;
          const parent = dirname(at);
          if (parent === at) break;
          at = parent;
        }
      }
      chain = found;
      this.chains.set(dir, chain);
    }
    for (const { rules, prefix } of chain) {
      const result = rules.test(prefix + name);
      if (result.ignored) return true;
      if (result.unignored) return false;
    }
    return false;
  }

  /** Whether a directory is ignored (cached: asked once per directory on every path below it). */
  ignoresDir(absolute: string): boolean {
    let known = this.dirs.get(absolute);
    if (known === undefined) {
      known = this.ignores(absolute, true);
      this.dirs.set(absolute, known);
    }
    return known;
  }

  private rulesOf(dir: string): Ignore | null {
    let rules = this.files.get(dir);
    if (rules === undefined) {
      rules = null;
      try {
        const text = readFileSync(join(dir, '.gitignore'), 'utf8');
        rules = (ignoreFactory as IgnoreFactory)({ allowRelativePaths: true }).add(text);
      } catch {
        // No .gitignore here.
      }
      this.files.set(dir, rules);
    }
    return rules;
  }
}

/**
 * Whether a file ripgrep reported (a path relative to the root) passes the walker's rules:
 * no skipped or ignored directory on the way, not a credential path, not ignored itself.
 */
export function walkerAccepts(scope: SearchScope, rel: string, fileRulesApplied = false): boolean {
  const slash = rel.lastIndexOf('/');
  const dir = slash < 0 ? scope.root : acceptedDir(scope, rel.slice(0, slash), fileRulesApplied);
  if (dir === undefined) return false;
  const name = rel.slice(slash + 1);
  if (isCredentialName(name)) return false;
  if (scope.home !== undefined && homeHides(scope, join(dir, name), false)) return false;
  return fileRulesApplied || !scope.rules.ignoresFile(dir, name);
}

/**
 * `walkerAccepts` for a stream of paths from one listing: the folder of the previous path is
 * remembered, so the many files of one folder (ripgrep prints them together) cost no lookup.
 */
export function walkerAcceptor(scope: SearchScope, fileRulesApplied = false): (rel: string) => boolean {
  let lastRel: string | undefined;
  let lastDir: string | undefined;
  return (rel) => {
    const slash = rel.lastIndexOf('/');
    let dir: string | undefined;
    if (slash < 0) dir = scope.root;
    else if (lastRel !== undefined && slash === lastRel.length && rel.startsWith(lastRel)) dir = lastDir;
    else {
      lastRel = rel.slice(0, slash);
      lastDir = dir = acceptedDir(scope, lastRel, fileRulesApplied);
    }
    if (dir === undefined) return false;
    const name = rel.slice(slash + 1);
    if (isCredentialName(name)) return false;
    if (scope.home !== undefined && homeHides(scope, join(dir, name), false)) return false;
    return fileRulesApplied || !scope.rules.ignoresFile(dir, name);
  };
}

const acceptedDirs = new WeakMap<SearchScope, Map<string, string | undefined>>();
const acceptedDirsRulesApplied = new WeakMap<SearchScope, Map<string, string | undefined>>();

/**
 * The absolute directory of a relative one when no part of it is skipped or ignored (cached per
 * scope). `rulesApplied`: ripgrep already applied the `.gitignore` rules from the scope's top
 * (the same rules, from the same top), so only the skip list, credential folders and Home are
 * checked here, and no `.gitignore` is read again.
 */
function acceptedDir(scope: SearchScope, relDir: string, rulesApplied: boolean): string | undefined {
  const cache = rulesApplied ? acceptedDirsRulesApplied : acceptedDirs;
  let known = cache.get(scope);
  if (!known) {
    known = new Map();
    cache.set(scope, known);
  }
  if (known.has(relDir)) return known.get(relDir);
  let dir: string | undefined = scope.root;
  for (const part of relDir.split('/')) {
    if (isSkippedDir(part) || part === '.ssh' || part === '.gnupg') {
      dir = undefined;
      break;
    }
    dir = join(dir, part);
    if ((!rulesApplied && scope.rules.ignoresDir(dir)) || homeHides(scope, dir, true)) {
      dir = undefined;
      break;
    }
  }
  known.set(relDir, dir);
  return dir;
}

/** The absolute path of a `/`-separated path below `root`. */
export function absoluteOf(root: string, rel: string): string {
  return sep === '/' ? `${root === '/' ? '' : root}/${rel}` : join(root, ...rel.split('/'));
}

export interface WalkedFile {
  readonly absolute: string;
  /** Relative to the walk root, with `/` separators. */
  readonly rel: string;
}

/** Every file under the scope's root in sorted depth-first order (a file root yields itself). */
export async function* walkFiles(scope: SearchScope, signal?: AbortSignal): AsyncGenerator<WalkedFile> {
  for await (const batch of walkFileBatches(scope, signal)) yield* batch;
}

/**
 * The walker's rule for one directory entry (what `walkFileBatches` enters or lists), for a
 * caller that looks at a single directory again (checkpoints/tracker.ts: a folder whose stat
 * changed). `dir` is the entry's folder (absolute), `isDir` what the entry is.
 */
export function acceptsEntry(scope: SearchScope, dir: string, name: string, isDir: boolean): boolean {
  const absolute = join(dir, name);
  if (isDir)
    return !(
      isSkippedDir(name) ||
      isCredentialPath(absolute) ||
      scope.rules.ignoresDir(absolute) ||
      homeHides(scope, absolute, true)
    );
  if (isCredentialName(name) || scope.rules.ignoresFile(dir, name)) return false;
  return !(scope.home !== undefined && homeHides(scope, absolute, false));
}

/** Files handed out together by the walker: one await per batch, not per file. */
const WALK_BATCH = 512;

/**
 * The walker lets the event loop run once every this many folders. A folder is listed
 * synchronously (safe-open.ts readDirChecked, ~3x cheaper than the promise API here), so without
 * this a walk of a big tree would hold the terminal (keys, Esc, painting) until it ended.
 */
export const WALK_YIELD_DIRS = 64;

/**
 * As `walkFiles`, in batches. Depth-first with an explicit stack instead of nested generators,
 * so a file deep in the tree costs one array push, not one await per level (bench/search.mjs).
 */
export async function* walkFileBatches(
  scope: SearchScope,
  signal?: AbortSignal,
  /** Told every directory the walk enters (the root included), as it enters it. */
  onDirectory?: (absolute: string, rel: string) => void,
): AsyncGenerator<WalkedFile[]> {
  if (scope.kind === 'file') {
    yield [{ absolute: scope.root, rel: scope.root.split(sep).at(-1) ?? '' }];
    return;
  }
  interface Frame {
    readonly dir: string;
    readonly prefix: string;
    readonly entries: import('node:fs').Dirent[];
    next: number;
  }
  const frameOf = async (dir: string, prefix: string): Promise<Frame> => {
    let entries: import('node:fs').Dirent[] = [];
    try {
      // SEC-4: through a descriptor verified to be this folder; a folder swapped for a link mid-walk is not listed.
      entries = (await readDirChecked(dir)) ?? [];
    } catch {
      // Unreadable directories are skipped, as ripgrep does.
    }
    entries.sort((a, b) => compareNames(a.name, b.name));
    return { dir, prefix, entries, next: 0 };
  };
  onDirectory?.(scope.root, '');
  const stack: Frame[] = [await frameOf(scope.root, '')];
  let entered = 0;
  let out: WalkedFile[] = [];
  while (stack.length > 0) {
    const frame = stack.at(-1) as Frame;
    const entry = frame.entries[frame.next++];
    if (!entry) {
      stack.pop();
      continue;
    }
    const absolute = join(frame.dir, entry.name);
    const rel = frame.prefix + entry.name;
    if (entry.isDirectory()) {
      if (isSkippedDir(entry.name) || isCredentialPath(absolute) || scope.rules.ignoresDir(absolute)) continue;
      if (homeHides(scope, absolute, true)) continue;
      signal?.throwIfAborted();
      onDirectory?.(absolute, rel);
      if (++entered % WALK_YIELD_DIRS === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      stack.push(await frameOf(absolute, `${rel}/`));
    } else if (entry.isFile()) {
      // The directories on the way were checked as they were entered; the name is what is left.
      if (isCredentialName(entry.name) || scope.rules.ignoresFile(frame.dir, entry.name)) continue;
      if (scope.home !== undefined && homeHides(scope, absolute, false)) continue;
      out.push({ absolute, rel });
      if (out.length >= WALK_BATCH) {
        yield out;
        out = [];
      }
    }
    // Links, sockets, devices: never followed or listed.
  }
  if (out.length > 0) yield out;
}
