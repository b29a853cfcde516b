/**
 * Format-preserving edits of `config.json` (SETUP-3, TUIX defect "/model rewrites a
 * hand-formatted config.json"): each write changes only the key it sets, keeping the user's
 * indentation, key order, spacing and line endings everywhere else.
 *
 * Why `jsonc-parser` (Microsoft's, the one VS Code edits settings.json with) rather than
 * growing json-locate.ts: inserting a key into an object whose members sit on one line, on
 * many lines, or none at all, with the file's own indentation, and creating missing parent
 * objects, is exactly what its `modify` does, tested for years; json-locate.ts stays the
 * small scanner that points errors at a line.
 */
import { readFileSync } from 'node:fs';
import { applyEdits, type FormattingOptions, modify } from 'jsonc-parser';
import { writeFileAtomic } from '../atomic-write.js';

export type JsonPath = readonly (string | number)[];

export interface JsonEdit {
  readonly path: JsonPath;
  /** `undefined` removes the key. */
  readonly value: unknown;
}

/** The indentation and line ending the text already uses (two spaces and \n for a new file). */
export function formattingOf(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indented = /\n([ \t]+)\S/.exec(text);
  const unit = indented?.[1] ?? '  ';
  if (unit.startsWith('\t')) return { insertSpaces: false, tabSize: 1, eol };
  // The smallest indentation seen is one level.
  let size = unit.length;
  for (const match of text.matchAll(/\n( +)\S/g)) size = Math.min(size, (match[1] as string).length);
  return { insertSpaces: true, tabSize: Math.max(1, size), eol };
}

/** Applies `edits` in order to JSON `text`, touching only the bytes of the keys they name. */
export function editJsonText(text: string, edits: readonly JsonEdit[]): string {
  let out = text.trim() === '' ? '{}\n' : text;
  const formattingOptions = formattingOf(out);
  for (const edit of edits) {
    const changes = modify(out, [...edit.path], edit.value, { formattingOptions });
    out = applyEdits(out, changes);
  }
  return out;
}

/**
 * Reads `file` (missing is empty), lets `check` refuse text that does not parse (the caller's
 * validator, so a malformed config is never rewritten: CONF-5), applies `edits`, and writes
 * the result atomically with mode 0600.
 */
export async function editJsonFile(file: string, edits: readonly JsonEdit[], check: (text: string) => void): Promise<string> {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  check(text);
  const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
  const next = bom + editJsonText(text.slice(bom.length), edits);
  if (next !== text) await writeFileAtomic(file, next);
  return next;
}
