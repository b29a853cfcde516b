/**
 * Format-preserving edits of `config.json` (SETUP-3, and the TUIX defect "/model rewrites a
 * hand-formatted config.json"): each write changes only the bytes of the key it sets. The
 * user's indentation, key order, spacing, blank lines and line endings stay; a new key follows
 * the style around it (one line in a one-line object, the sibling's indentation otherwise).
 *
 * The offsets come from `jsonc-parser`'s `parseTree` (Microsoft's parser behind VS Code's
 * settings editor). Its own `modify` was tried and not used: with formatting options it
 * re-formats the whole enclosing object (a one-line `"models": {...}` became twelve lines),
 * and without them it glues `,"key":value` onto the previous line. json-locate.ts stays the
 * small scanner that points errors at a line.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { type Node, parseTree } from 'jsonc-parser';
import { writeOrExplain } from '../credentials.js';

export type JsonPath = readonly string[];

export interface JsonEdit {
  readonly path: JsonPath;
  /** `undefined` removes the key. */
  readonly value: unknown;
}

interface Style {
  readonly unit: string;
  readonly eol: string;
}

/** The indentation unit and line ending the text already uses (two spaces and \n by default). */
export function styleOf(text: string): Style {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  if (/\n\t+\S/.test(text)) return { unit: '\t', eol };
  let size = Number.POSITIVE_INFINITY;
  for (const match of text.matchAll(/\n( +)\S/g)) size = Math.min(size, (match[1] as string).length);
  return { unit: ' '.repeat(Number.isFinite(size) ? size : 2), eol };
}

/** Applies `edits` in order to JSON `text`, touching only the bytes of the keys they name. */
export function editJsonText(text: string, edits: readonly JsonEdit[]): string {
  let out = text.trim() === '' ? '{}\n' : text;
  for (const edit of edits) out = applyEdit(out, edit);
  return out;
}

function applyEdit(text: string, edit: JsonEdit): string {
  const root = parseTree(text);
  if (root?.type !== 'object') throw new Error('config.json must hold a JSON object at the top level.');
  const style = styleOf(text);
  let node: Node = root;
  for (let i = 0; i < edit.path.length; i++) {
    const key = edit.path[i] as string;
    const properties = node.children ?? [];
    const index = properties.findIndex((p) => p.children?.[0]?.value === key);
    if (index === -1) {
      if (edit.value === undefined) return text;
      let value = edit.value;
      for (let j = edit.path.length - 1; j > i; j--) value = { [edit.path[j] as string]: value };
      return insertProperty(text, node, key, value, style);
    }
    const property = properties[index] as Node;
    const valueNode = property.children?.[1] as Node;
    if (i === edit.path.length - 1) {
      if (edit.value === undefined) return removeProperty(text, node, index);
      return splice(text, valueNode.offset, valueNode.length, renderAt(text, valueNode, edit.value, style));
    }
    if (valueNode.type !== 'object') {
      if (edit.value === undefined) return text;
      let value = edit.value;
      for (let j = edit.path.length - 1; j > i; j--) value = { [edit.path[j] as string]: value };
      return splice(text, valueNode.offset, valueNode.length, renderAt(text, valueNode, value, style));
    }
    node = valueNode;
  }
  return text;
}

function splice(text: string, offset: number, length: number, insert: string): string {
  return text.slice(0, offset) + insert + text.slice(offset + length);
}

/** The white space that starts the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))?.[0] ?? '';
}

function spansLines(text: string, node: Node): boolean {
  return text.slice(node.offset, node.offset + node.length).includes('\n');
}

/** One line: `{"a": 1, "b": [1, 2]}`. */
function inline(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inline).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}: ${inline(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Indented like the file, continuation lines starting at `indent`. */
function block(value: unknown, indent: string, style: Style): string {
  return (JSON.stringify(value, null, style.unit) ?? 'null').split('\n').join(style.eol + indent);
}

/** A replacement value in the style of the one it replaces. */
function renderAt(text: string, old: Node, value: unknown, style: Style): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  return spansLines(text, old) ? block(value, lineIndent(text, old.offset), style) : inline(value);
}

function insertProperty(text: string, object: Node, key: string, value: unknown, style: Style): string {
  const properties = object.children ?? [];
  const last = properties.at(-1);
  const isRoot = object.parent === undefined;
  if (last) {
    const end = last.offset + last.length;
    if (spansLines(text, object)) {
      const indent = lineIndent(text, last.offset);
      return splice(text, end, 0, `,${style.eol}${indent}${JSON.stringify(key)}: ${block(value, indent, style)}`);
    }
    return splice(text, end, 0, `, ${JSON.stringify(key)}: ${inline(value)}`);
  }
  if (isRoot || spansLines(text, object) || text.trim().includes('\n')) {
    const outer = lineIndent(text, object.offset);
    const indent = outer + style.unit;
    const body = `{${style.eol}${indent}${JSON.stringify(key)}: ${block(value, indent, style)}${style.eol}${outer}}`;
    return splice(text, object.offset, object.length, body);
  }
  return splice(text, object.offset, object.length, `{ ${JSON.stringify(key)}: ${inline(value)} }`);
}

function removeProperty(text: string, object: Node, index: number): string {
  const properties = object.children ?? [];
  const property = properties[index] as Node;
  const next = properties[index + 1];
  const previous = properties[index - 1];
  if (next) return splice(text, property.offset, next.offset - property.offset, '');
  if (previous) {
    const from = previous.offset + previous.length;
    return splice(text, from, property.offset + property.length - from, '');
  }
  return splice(text, object.offset + 1, object.length - 2, '');
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
  // A config.json that is a symlink (a dotfiles repository) stays one: the target is rewritten.
  let target = file;
  try {
    target = realpathSync(file);
  } catch {
    // a new file
  }
  if (next !== text) await writeOrExplain(target, next);
  return next;
}
