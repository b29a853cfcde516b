/**
 * The files under a search scope, through ripgrep or the built-in walker, in the same order and
 * with the same rules either way (see walker.ts and ripgrep.ts).
 */
import picomatch from 'picomatch';
import { ripgrepLines, commonArgs } from './ripgrep.js';
import { type SearchScope, type WalkedFile, walkerAccepts, walkFiles } from './walker.js';
import { join } from 'node:path';

/** A glob matched against the path relative to the search root, or against the base name. */
export interface PathFilter {
  readonly pattern: string;
  matches(rel: string): boolean;
  /** A pattern without `/` can also narrow ripgrep's own walk. */
  readonly basenameOnly: boolean;
}

export function pathFilter(pattern: string): PathFilter {
  const clean = pattern.replace(/^\.\//, '').replace(/^\/+/, '');
  const isMatch = picomatch(clean, { dot: true });
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
  const source = rg && scope.kind === 'dir' ? withWalkerFallback(scope, rg, filter, signal) : walkFiles(scope, signal);
  for await (const file of source) {
    if (!filter || filter.matches(file.rel)) yield file;
  }
}

async function* withWalkerFallback(
  scope: SearchScope,
  rg: string,
  filter: PathFilter | undefined,
  signal?: AbortSignal,
): AsyncGenerator<WalkedFile> {
  let produced = false;
  try {
    for await (const file of ripgrepFiles(scope, rg, filter, signal)) {
      produced = true;
      yield file;
    }
  } catch (error) {
    if (produced || signal?.aborted) throw error;
    yield* walkFiles(scope, signal); // rg could not run: the walker gives the same answer.
  }
}

/** The files `rg --files` lists, passed through the walker's rules (no fallback: tests call it directly). */
export async function* ripgrepFiles(
  scope: SearchScope,
  rg: string,
  filter: PathFilter | undefined,
  signal?: AbortSignal,
): AsyncGenerator<WalkedFile> {
  const args = [...commonArgs(filter?.basenameOnly ? filter.pattern : undefined), '--files', '--', '.'];
  for await (const line of ripgrepLines(rg, args, scope.root, signal)) {
    const rel = line.startsWith('./') ? line.slice(2) : line;
    if (walkerAccepts(scope, rel)) yield { absolute: join(scope.root, ...rel.split('/')), rel };
  }
}
