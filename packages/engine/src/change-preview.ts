/**
 * TUIX-10: the change an `edit` or `write` makes, as unified hunks with line numbers and
 * context from the file itself. Approval cards compute it before the call runs (the file as it
 * is now, the edit applied in memory, exactly as the tool would); tool cards read the patch the
 * tool returned. One line format for every surface:
 *
 *     `@@ -12,4 +12,5 @@`       a hunk header
 *     `-  12 │ old text`          a removed line, its old number
 *     `+  13 │ new text`          an added line, its new number
 *     `   14 │ context`           a context line, its new number
 *
 * Indentation is kept (tabs as they are), and a missing final newline is a note, never a `+`.
 */
import { promises as fs } from 'node:fs';
import { resolvePath } from './tools/fence.js';

export interface DiffRow {
  readonly kind: 'add' | 'del' | 'ctx' | 'hunk' | 'note';
  readonly text: string;
  readonly oldLine?: number;
  readonly newLine?: number;
}

export const CHANGE_PREVIEW_MAX_ROWS = 200;
const MAX_PREVIEW_BYTES = 2 * 1024 * 1024;

/** Parses the hunks of a unified patch (the `edit`/`write` tool output or `createTwoFilesPatch`). */
export function parseUnifiedPatch(patch: string): DiffRow[] {
  const rows: DiffRow[] = [];
  let oldLine = 0;
  let newLine = 0;
  let inHunk = false;
  for (const line of patch.split('\n')) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (header) {
      oldLine = Number(header[1]);
      newLine = Number(header[3]);
      // An empty side (`-0,0`) starts at line 1 once something is added.
      if (header[2] === '0') oldLine += 1;
      if (header[4] === '0') newLine += 1;
      inHunk = true;
      rows.push({ kind: 'hunk', text: line });
      continue;
    }
    if (!inHunk) continue;
    if (line.startsWith('\\')) {
      rows.push({ kind: 'note', text: 'No newline at end of file' });
      continue;
    }
    if (line.startsWith('[diff cut:')) {
      rows.push({ kind: 'note', text: line.replace(/^\[|\]$/g, '') });
      inHunk = false;
      continue;
    }
    const sign = line[0];
    const text = line.slice(1);
    if (sign === '+') rows.push({ kind: 'add', text, newLine: newLine++ });
    else if (sign === '-') rows.push({ kind: 'del', text, oldLine: oldLine++ });
    else if (sign === ' ') rows.push({ kind: 'ctx', text, oldLine: oldLine++, newLine: newLine++ });
  }
  return rows;
}

/** The unified hunks between two texts (context 3), as rows. */
export async function diffRows(path: string, before: string, after: string): Promise<DiffRow[]> {
  // Loaded on first use: the terminal and `crystal run` start without it.
  const { createTwoFilesPatch } = await import('diff');
  const patch = createTwoFilesPatch(`a/${path}`, `b/${path}`, before, after, undefined, undefined, {
    context: 3,
    timeout: 500,
  });
  if (patch === undefined) return [{ kind: 'note', text: 'the diff is too large to show' }];
  return foldFinalNewline(parseUnifiedPatch(patch));
}

/**
 * The last line only gaining or losing its newline shows as one context line and a note, not
 * as the same text removed and added again.
 */
function foldFinalNewline(rows: DiffRow[]): DiffRow[] {
  const out: DiffRow[] = [];
  for (let i = 0; i < rows.length; i++) {
    const a = rows[i] as DiffRow;
    const b = rows[i + 1];
    const c = rows[i + 2];
    if (a.kind === 'del' && b?.kind === 'note' && c?.kind === 'add' && c.text === a.text && rows[i + 3] === undefined) {
      out.push(
        { kind: 'ctx', text: a.text, oldLine: a.oldLine, newLine: c.newLine },
        { kind: 'note', text: 'Newline added at end of file' },
      );
      i += 2;
      continue;
    }
    if (a.kind === 'del' && b?.kind === 'add' && b.text === a.text && c?.kind === 'note' && rows[i + 3] === undefined) {
      out.push(
        { kind: 'ctx', text: a.text, oldLine: a.oldLine, newLine: b.newLine },
        { kind: 'note', text: 'Newline removed at end of file' },
      );
      i += 2;
      continue;
    }
    out.push(a);
  }
  return out;
}

/** Rows as the one-line strings surfaces print (the format in the file comment). */
export function formatDiffRows(rows: readonly DiffRow[], max = CHANGE_PREVIEW_MAX_ROWS): string[] {
  const width = String(Math.max(1, ...rows.map((r) => Math.max(r.oldLine ?? 0, r.newLine ?? 0)))).length;
  const out: string[] = [];
  for (const row of rows.slice(0, max)) {
    if (row.kind === 'hunk') out.push(row.text);
    else if (row.kind === 'note') out.push(`\\ ${row.text}`);
    else {
      const sign = row.kind === 'add' ? '+' : row.kind === 'del' ? '-' : ' ';
      const number = row.kind === 'del' ? row.oldLine : row.newLine;
      // A CRLF file's line ends are not content.
      out.push(`${sign} ${String(number ?? '').padStart(width)} │ ${row.text.replace(/\r$/, '')}`);
    }
  }
  if (rows.length > max) out.push(`\\ ${rows.length - max} more lines`);
  return out;
}

/** The rows of the patch inside an `edit`/`write` tool result, formatted; undefined when it has none. */
export function resultDiffLines(toolOutput: string): string[] | undefined {
  const rows = parseUnifiedPatch(toolOutput);
  return rows.some((r) => r.kind !== 'hunk') ? formatDiffRows(rows) : undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The change an `edit` or `write` call would make, computed the way the tool does (exact match,
 * the CRLF fallback, `replace_all`), on the file as it is now. Undefined for other tools, for a
 * call the tool would refuse (no match, several matches, a binary file), and for paths outside
 * the fence's reach (a credentials path).
 */
export async function proposedChange(
  workspace: string,
  name: string,
  input: unknown,
): Promise<{ path: string; before: string; after: string } | undefined> {
  if (name !== 'edit' && name !== 'write') return undefined;
  const args = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const path = str(args.path);
  if (!path) return undefined;
  const verdict = resolvePath(workspace, path);
  if (verdict.credential) return undefined;
  const display = verdict.display.split('\\').join('/');
  let before = '';
  try {
    const stat = await fs.stat(verdict.real);
    if (!stat.isFile() || stat.size > MAX_PREVIEW_BYTES) return undefined;
    const bytes = await fs.readFile(verdict.real);
    if (bytes.subarray(0, 8192).includes(0)) return undefined;
    before = bytes.toString('utf8').replace(/^\uFEFF/, '');
  } catch {
    if (name === 'edit') return undefined;
  }
  if (name === 'write') {
    const contents = str(args.contents);
    return contents === undefined ? undefined : { path: display, before, after: contents };
  }
  let search = str(args.old_string);
  let replacement = str(args.new_string);
  if (search === undefined || replacement === undefined || search === '') return undefined;
  let count = occurrences(before, search);
  if (count === 0 && before.includes('\r\n') && !search.includes('\r')) {
    search = search.replace(/\n/g, '\r\n');
    replacement = replacement.replace(/\r?\n/g, '\r\n');
    count = occurrences(before, search);
  }
  if (count === 0 || (count > 1 && args.replace_all !== true)) return undefined;
  const at = before.indexOf(search);
  const after =
    args.replace_all === true
      ? before.split(search).join(replacement)
      : before.slice(0, at) + replacement + before.slice(at + search.length);
  return { path: display, before, after };
}

function occurrences(text: string, search: string): number {
  let count = 0;
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) count++;
  return count;
}

/** The formatted preview of an `edit`/`write` call before it runs; undefined when it cannot be computed. */
export async function changePreview(workspace: string, name: string, input: unknown): Promise<string[] | undefined> {
  const change = await proposedChange(workspace, name, input).catch(() => undefined);
  if (!change) return undefined;
  return formatDiffRows(await diffRows(change.path, change.before, change.after));
}
