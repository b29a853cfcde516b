/**
 * `@path` mentions (TUIX-5): the workspace's files for completion, listed the way `glob` lists
 * them (ripgrep when on PATH, else the walker; `.gitignore` honoured, `node_modules`, `.git`
 * and the other skip folders left out), ranked fuzzily; and, at send time, the mentioned files
 * resolved through the fence (inside the workspace, never a credentials path) and read.
 * Surfaces only decide how a completion looks.
 */
// node:fs's `promises` is read when a mention is resolved: importing node:fs/promises here loaded it
// (~1.5 ms) before every `crystal run`'s first request, which resolves no mention (issue 22).
import { promises as fs } from 'node:fs';
import { extname } from 'node:path';
import { resolvePath } from './tools/fence.js';
import { listFileBatches } from './tools/builtin/file-list.js';
import { commonArgs, ripgrepFor, ripgrepLineBatches } from './tools/builtin/ripgrep.js';
import { type SearchScope, searchScope, walkerAcceptor } from './tools/builtin/walker.js';

/**
 * `rg --files` with the flags `glob` uses but without `--sort path` (ranking orders the answer,
 * so rg may walk on all its threads), each path through the walker's rules as `glob` does.
 */
async function unsortedRipgrepList(scope: SearchScope, rg: string, add: (path: string) => void): Promise<void> {
  const flags = commonArgs();
  const at = flags.indexOf('--sort');
  if (at !== -1) flags.splice(at, 2);
  const accepts = walkerAcceptor(scope, scope.rules.top === scope.root);
  for await (const lines of ripgrepLineBatches(rg, [...flags, '--files', '--', '.'], scope.root)) {
    for (const line of lines) {
      const rel = line.startsWith('./') ? line.slice(2) : line;
      if (accepts(rel)) add(rel);
    }
  }
}

/** How long a listing is reused before the next completion lists again. */
export const MENTION_LIST_TTL_MS = 5_000;
export const MENTION_MAX_RESULTS = 50;
/** A mentioned text file larger than this is refused (name it to the model instead). */
export const MENTION_MAX_BYTES = 256 * 1024;

export const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp']);

export class WorkspaceFileIndex {
  private paths: string[] | undefined;
  private lower: string[] = [];
  private listedAt = 0;
  private listing: Promise<void> | undefined;

  constructor(
    private readonly workspace: () => string,
    private readonly rgPath?: string | null,
    private readonly now: () => number = Date.now,
  ) {}

  /** Every listed file, workspace-relative with `/`. */
  async files(): Promise<readonly string[]> {
    if (!this.paths || this.now() - this.listedAt > MENTION_LIST_TTL_MS) {
      this.listing ??= this.list().finally(() => {
        this.listing = undefined;
      });
      await this.listing;
    }
    return this.paths ?? [];
  }

  /** Lists the workspace; `scored`, when given, ranks each path for one query as it arrives. */
  private async list(scored?: Scored[], q?: string): Promise<void> {
    const scope = await searchScope(this.workspace(), '.');
    const rg = ripgrepFor(this.rgPath);
    let out: string[] = [];
    let lower: string[] = [];
    const add = (path: string): void => {
      const p = path.toLowerCase();
      out.push(path);
      lower.push(p);
      if (scored && q) {
        const score = scorePath(q, p);
        if (score > 0) scored.push({ path, score });
      }
    };
    let listed = false;
    if (rg && scope.kind === 'dir')
      listed = await unsortedRipgrepList(scope, rg, add).then(
        () => true,
        () => false,
      );
    if (!listed) {
      out = [];
      lower = [];
      if (scored) scored.length = 0;
      for await (const batch of listFileBatches(scope, null, undefined)) for (const f of batch) add(f.rel);
    }
    this.paths = out;
    this.lower = lower;
    this.listedAt = this.now();
  }

  /**
   * The best matches for `query`, best first. A completion that lists (cold) ranks each path
   * while ripgrep is still walking, so only the matches are left to sort at the end.
   */
  async complete(query: string, limit = MENTION_MAX_RESULTS): Promise<string[]> {
    const q = normalQuery(query);
    const stale = !this.paths || this.now() - this.listedAt > MENTION_LIST_TTL_MS;
    if (stale && !this.listing && q !== '') {
      const scored: Scored[] = [];
      this.listing = this.list(scored, q).finally(() => {
        this.listing = undefined;
      });
      await this.listing;
      return topScored(scored, limit);
    }
    const paths = await this.files();
    return rankPaths(query, paths, limit, this.lower.length === paths.length ? this.lower : undefined);
  }
}

interface Scored {
  readonly path: string;
  readonly score: number;
}

const normalQuery = (query: string): string => query.toLowerCase().replace(/^\.\//, '');

function topScored(scored: Scored[], limit: number): string[] {
  scored.sort((a, b) => b.score - a.score || a.path.length - b.path.length || cmp(a.path, b.path));
  return scored.slice(0, limit).map((s) => s.path);
}

/**
 * Fuzzy rank: every query character must appear in order (case-insensitive). A match inside
 * the file name beats one across folders, a contiguous match beats a scattered one, a match at
 * the start of a name or after `/`, `-`, `_`, `.` beats one inside a word, then shorter paths.
 */
export function rankPaths(
  query: string,
  paths: readonly string[],
  limit = MENTION_MAX_RESULTS,
  lower?: readonly string[],
): string[] {
  const q = normalQuery(query);
  if (q === '') return [...paths].sort((a, b) => depth(a) - depth(b) || a.length - b.length || cmp(a, b)).slice(0, limit);
  const scored: Scored[] = [];
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i] as string;
    const p = lower ? (lower[i] as string) : path.toLowerCase();
    const score = scorePath(q, p);
    if (score > 0) scored.push({ path, score });
  }
  return topScored(scored, limit);
}

const depth = (p: string): number => p.split('/').length;
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const BOUNDARY = new Set(['/', '-', '_', '.', ' ']);

function scorePath(q: string, p: string): number {
  // Most paths do not hold the query's characters in order: say so before anything else.
  for (let i = 0, at = 0; i < q.length; i++) {
    at = p.indexOf(q[i] as string, at);
    if (at === -1) return 0;
    at++;
  }
  const slash = p.lastIndexOf('/');
  const inBase = p.indexOf(q, slash + 1);
  if (inBase === slash + 1) return 10_000 - p.length;
  if (inBase > slash + 1) return (BOUNDARY.has(p[inBase - 1] as string) ? 9_000 : 8_000) - p.length;
  const inPath = p.indexOf(q);
  if (inPath >= 0) return (inPath === 0 || BOUNDARY.has(p[inPath - 1] as string) ? 7_000 : 6_000) - p.length;
  // Subsequence: reward boundary hits and runs, punish gaps.
  let score = 3_000;
  let at = 0;
  let last = -2;
  for (const ch of q) {
    const found = p.indexOf(ch, at);
    if (found === -1) return 0;
    if (found === last + 1) score += 15;
    else score -= Math.min(30, found - at);
    if (found === 0 || BOUNDARY.has(p[found - 1] as string)) score += 20;
    if (found > slash) score += 5;
    last = found;
    at = found + 1;
  }
  return Math.max(1, score - p.length);
}

export type ResolvedMention =
  | { readonly kind: 'text'; readonly path: string; readonly text: string }
  | { readonly kind: 'image'; readonly path: string; readonly bytes: Uint8Array; readonly absolute: string }
  | { readonly kind: 'refused'; readonly path: string; readonly reason: string };

/** `@path` words in a message (a word ends at whitespace; trailing punctuation is not part of it). */
export function mentionedPaths(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\s)@([^\s@]+)/g)) {
    const path = (m[1] as string).replace(/[,;:!?)]+$/, '').replace(/\.$/, '');
    if (path !== '' && !out.includes(path)) out.push(path);
  }
  return out;
}

/**
 * Resolves one mention through the fence: only an existing file inside the workspace that is
 * not a credentials path; text is read (at most MENTION_MAX_BYTES, no NUL bytes), images are
 * returned as bytes for the attachment service. Anything else is `undefined` (not a mention:
 * `@someone` in prose stays prose) or `refused` with the reason.
 */
export async function resolveMention(workspace: string, path: string): Promise<ResolvedMention | undefined> {
  const verdict = resolvePath(workspace, path);
  let info: import('node:fs').Stats;
  try {
    info = await fs.stat(verdict.real);
  } catch {
    return undefined;
  }
  if (!info.isFile()) return undefined;
  if (!verdict.inside) return { kind: 'refused', path, reason: `@${path} is outside the workspace; it was not attached.` };
  if (verdict.credential) return { kind: 'refused', path, reason: `@${path} is a credentials path; it was not attached.` };
  const display = verdict.display.split('\\').join('/');
  if (IMAGE_EXTENSIONS.has(extname(verdict.real).toLowerCase()))
    return { kind: 'image', path: display, bytes: await fs.readFile(verdict.real), absolute: verdict.real };
  if (info.size > MENTION_MAX_BYTES)
    return {
      kind: 'refused',
      path,
      reason: `@${path} is ${Math.round(info.size / 1024)} KiB, over the ${MENTION_MAX_BYTES / 1024} KiB an @ mention attaches; ask the model to read it instead.`,
    };
  const bytes = await fs.readFile(verdict.real);
  if (bytes.includes(0)) return { kind: 'refused', path, reason: `@${path} is a binary file; it was not attached.` };
  return { kind: 'text', path: display, text: bytes.toString('utf8') };
}

const FILE_OPEN = '<file path="';

/** The attached text of a mentioned file as the model sees it, after the user's words. */
export function mentionBlock(path: string, text: string): string {
  const body = text.endsWith('\n') ? text : `${text}\n`;
  return `${FILE_OPEN}${path.replace(/"/g, '%22')}">\n${body}</file>`;
}

/** Splits a sent message into the user's words and the files attached to it (for display). */
export function splitMentionBlocks(text: string): { text: string; files: { path: string; lines: number }[] } {
  const files: { path: string; lines: number }[] = [];
  const re = /\n\n<file path="([^"]*)">\n([\s\S]*?)<\/file>(?=\n\n<file path="|$)/g;
  const first = text.search(/\n\n<file path="[^"]*">\n/);
  if (first === -1) return { text, files };
  re.lastIndex = first;
  let m: RegExpExecArray | null;
  let end = first;
  while ((m = re.exec(text)) !== null) {
    if (m.index !== end) break;
    files.push({ path: m[1] as string, lines: (m[2] as string).split('\n').length - 1 });
    end = re.lastIndex;
  }
  if (end !== text.length || files.length === 0) return { text, files: [] };
  return { text: text.slice(0, first), files };
}
