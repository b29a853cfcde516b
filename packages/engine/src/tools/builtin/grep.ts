/**
 * `grep` (TOOLS-2): lines matching a regular expression, `relpath:line:text`, through ripgrep
 * when it is on PATH or the built-in walker otherwise, with the same answer either way: the
 * pattern is a JavaScript regular expression, compiled first (an invalid one is a model-visible
 * error naming it), and every line ripgrep reports is checked against it again under a time
 * limit (pattern.ts). A pattern ripgrep's engine cannot compile (look-around, back-references)
 * is searched by the walker. Binary files (a NUL byte in the first 8 KiB) and files over 8 MiB
 * are skipped; `.gitignore` is honoured; at most 500 matches, then `[truncated to 500 matches]`.
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolDefinition } from '@crystal/core';
import { readFileForSearch, readSmallFileSync } from '../safe-open.js';
import { lazySchema, parseArgs } from './args.js';
import * as z from 'zod/mini';
import { type PathFilter, pathFilter } from './file-list.js';
import type { ToolHost } from './host.js';
import { capOutput, cutAt } from './output-cap.js';
import { type CompiledPattern, compilePattern, GuardedMatcher } from './pattern.js';
import { commonArgs, RG_MAX_FILE_SIZE, ripgrepFor, ripgrepLines } from './ripgrep.js';
import { displayOf, type SearchScope, searchScope, type WalkedFile, walkerAccepts, walkFileBatches } from './walker.js';

export const GREP_MATCH_CAP = 500;
export const GREP_MAX_FILE_BYTES = 8 * 1024 * 1024;
const BINARY_PROBE_BYTES = 8 * 1024;
const LINE_SHOWN_MAX = 2000;

const schema = lazySchema(() =>
  z.object({
    pattern: z.string().check(z.minLength(1)),
    path: z.optional(z.string()),
    glob: z.optional(z.string().check(z.minLength(1))),
  }),
);

export interface GrepMatch {
  readonly absolute: string;
  readonly line: number;
  readonly text: string;
}

export function grepTool(host: ToolHost): ToolDefinition {
  return {
    name: 'grep',
    description:
      'Search file contents with a regular expression (JavaScript syntax; start with (?i) to ignore case). Returns "path:line:text" for each matching line, sorted by path then line, at most 500 matches. Honours .gitignore, skips binary files, files over 8 MiB and bin, obj, .git, .vs, node_modules, dist. Uses ripgrep when it is installed.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Regular expression, for example "function\\s+main".' },
        path: { type: 'string', description: 'Folder or file to search; defaults to the workspace root.' },
        glob: {
          type: 'string',
          description: 'Only files whose relative path or base name matches this glob, for example "*.ts".',
        },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    async execute(input, context) {
      const { signal } = context;
      const args = parseArgs('grep', schema(), input);
      const compiled = compilePattern(args.pattern);
      const scope = await searchScope(host, args.path, context.callId);
      const filter = args.glob === undefined ? undefined : await pathFilter(args.glob);
      const lines: string[] = [];
      let truncated = false;
      for await (const match of searchMatches(scope, compiled, filter, ripgrepFor(host.rgPath), signal)) {
        if (lines.length === GREP_MATCH_CAP) {
          truncated = true;
          break;
        }
        const text = match.text.length > LINE_SHOWN_MAX ? `${cutAt(match.text, LINE_SHOWN_MAX)} [...]` : match.text;
        lines.push(`${displayOf(scope, match.absolute)}:${match.line}:${text}`);
      }
      if (lines.length === 0) return 'No matches.';
      return capOutput(lines.join('\n') + (truncated ? `\n[truncated to ${GREP_MATCH_CAP} matches]` : ''));
    },
  };
}

/** Matching lines in path order, then line order. */
export async function* searchMatches(
  scope: SearchScope,
  pattern: CompiledPattern,
  filter: PathFilter | undefined,
  rg: string | null,
  signal?: AbortSignal,
): AsyncGenerator<GrepMatch> {
  if (!rg || scope.kind === 'file') {
    yield* walkerMatches(scope, pattern, filter, signal);
    return;
  }
  let produced = false;
  try {
    for await (const match of ripgrepMatches(scope, pattern, filter, rg, signal)) {
      produced = true;
      yield match;
    }
  } catch (error) {
    if (produced || signal?.aborted) throw error;
    yield* walkerMatches(scope, pattern, filter, signal); // rg could not run or compile the pattern.
  }
}

export async function* walkerMatches(
  scope: SearchScope,
  pattern: CompiledPattern,
  filter: PathFilter | undefined,
  signal?: AbortSignal,
): AsyncGenerator<GrepMatch> {
  const matcher = new GuardedMatcher(pattern);
  let batch: WalkedFile[] = [];
  const flush = async function* (): AsyncGenerator<GrepMatch> {
    // Reads the batch in parallel, then scans it in one bounded sandbox run; path order is kept.
    const texts = await searchableTexts(batch.map((file) => file.absolute));
    await new Promise((resolve) => setImmediate(resolve));
    const files = batch.filter((_, i) => texts[i] !== null);
    const found = matcher.scanMany(
      texts.filter((t): t is string => t !== null),
      files.length === 1
        ? displayOf(scope, (files[0] as WalkedFile).absolute)
        : `${files.length} files near ${displayOf(scope, (files[0] ?? (batch[0] as WalkedFile)).absolute)}`,
    );
    batch = [];
    for (const [i, matches] of found.entries()) {
      const file = files[i] as WalkedFile;
      for (const match of matches) yield { absolute: file.absolute, line: match.line, text: match.text };
    }
  };
  for await (const files of walkFileBatches(scope, signal)) {
    for (const file of files) {
      if (filter && scope.kind === 'dir' && !filter.matches(file.rel)) continue;
      batch.push(file);
      if (batch.length >= WALK_BATCH_FILES) yield* flush();
    }
  }
  if (batch.length > 0) yield* flush();
}

/** Files read and scanned together by the walker path. */
const WALK_BATCH_FILES = 256;

/** The text of a file grep may search, or null: over 8 MiB, binary, unreadable or not a regular file. */
async function searchableText(path: string): Promise<string | null> {
  return textOf(await readFileForSearch(path, GREP_MAX_FILE_BYTES));
}

function textOf(bytes: Buffer | null): string | null {
  if (bytes === null) return null;
  if (bytes.length > GREP_MAX_FILE_BYTES || bytes.subarray(0, BINARY_PROBE_BYTES).includes(0)) return null;
  return bytes.toString('utf8');
}

/**
 * A batch of small files read synchronously: a read through the thread pool costs several hops
 * per file, and a batch of 256 small files reads in about a millisecond, well inside a frame.
 * Files bigger than 256 KiB take the asynchronous path so the event loop never waits on them.
 */
async function searchableTexts(paths: readonly string[]): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  for (const path of paths) {
    // SEC-5: lstat, never stat-and-open by name: a FIFO or a device is skipped unopened, and a
    // regular file is opened O_NONBLOCK | O_NOFOLLOW and checked (readSmallFileSync).
    let size: number;
    try {
      const stat = lstatSync(path);
      if (!stat.isFile()) {
        out.push(null);
        continue;
      }
      size = stat.size;
    } catch {
      out.push(null);
      continue;
    }
    out.push(size > SYNC_READ_MAX ? await searchableText(path) : textOf(readSmallFileSync(path, SYNC_READ_MAX)));
  }
  return out;
}

const SYNC_READ_MAX = 256 * 1024;

/** The searchable text of a file through a verified descriptor (null: binary, too big, special, swapped). */
async function verifiedText(path: string): Promise<string | null> {
  return textOf(await readFileForSearch(path, GREP_MAX_FILE_BYTES));
}

interface RgText {
  readonly text?: string;
  readonly bytes?: string;
}

interface RgMessage {
  readonly type: string;
  readonly data?: { readonly path?: RgText; readonly lines?: RgText; readonly line_number?: number };
}

const decode = (value: RgText | undefined): string =>
  value?.text ?? (value?.bytes === undefined ? '' : Buffer.from(value.bytes, 'base64').toString('utf8'));

export async function* ripgrepMatches(
  scope: SearchScope,
  pattern: CompiledPattern,
  filter: PathFilter | undefined,
  rg: string,
  signal?: AbortSignal,
): AsyncGenerator<GrepMatch> {
  const args = [
    ...commonArgs(filter?.basenameOnly ? filter.pattern : undefined),
    '--json',
    '--text',
    '--crlf',
    '--max-filesize',
    RG_MAX_FILE_SIZE,
    ...(pattern.ignoreCase ? ['--ignore-case'] : []),
    '--regexp',
    pattern.source,
    '--',
    '.',
  ];
  const matcher = new GuardedMatcher(pattern);
  let current = '';
  let lines: string[] | null = null;
  for await (const json of ripgrepLines(rg, args, scope.root, signal)) {
    const message = JSON.parse(json) as RgMessage;
    if (message.type !== 'match' || !message.data) continue;
    const path = decode(message.data.path);
    const rel = path.startsWith('./') ? path.slice(2) : path;
    const absolute = join(scope.root, ...rel.split('/'));
    if (rel !== current) {
      current = rel;
      // SEC-4: rg opened the file by name; what the model gets is checked against the file read
      // here through a verified descriptor (binary, special and swapped files give null).
      const accepted = walkerAccepts(scope, rel) && (!filter || filter.matches(rel));
      const text = accepted ? await verifiedText(absolute) : null;
      lines = text === null ? null : text.split('\n');
    }
    if (lines === null) continue;
    const content = decode(message.data.lines).replace(/\r?\n$/, '');
    const line = message.data.line_number ?? 0;
    if ((lines[line - 1] ?? '').replace(/\r$/, '') !== content) continue;
    if (matcher.test(content, `${displayOf(scope, absolute)}:${line}`)) yield { absolute, line, text: content };
  }
}
