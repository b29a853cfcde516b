/**
 * `edit` (TOOLS-2): replaces an exact `old_string` with `new_string`. The match must be unique
 * unless `replace_all` is set. A file with CRLF line ends also matches an `old_string` written
 * with `\n`. An existing byte-order mark is kept and none is added. Returns `Edited <path>.`
 * and a capped diff.
 */
import type { ToolDefinition } from '@crystal/core';
import { checkedTarget, readChecked } from '../safe-open.js';
import { lazySchema, parseArgs } from './args.js';
import * as z from 'zod/mini';
import { ToolFailure } from './failure.js';
import { diffPreview, writeKeepingMode } from './file-write.js';
import type { ToolHost } from './host.js';
import { capOutput } from './output-cap.js';
import { BINARY_REFUSAL } from './read.js';

const schema = lazySchema(() =>
  z.object({
    path: z.string().check(z.minLength(1)),
    old_string: z.string(),
    new_string: z.string(),
    replace_all: z.optional(z.boolean()),
  }),
);

const BOM = '\uFEFF';

export function editTool(host: ToolHost): ToolDefinition {
  return {
    name: 'edit',
    description:
      'Replace an exact piece of text in a file. old_string must match the file exactly (including indentation) and only once; add surrounding lines to make it unique, or set replace_all to change every occurrence. Read the file first.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path, relative to the workspace or absolute.' },
        old_string: { type: 'string', description: 'The exact text to replace.' },
        new_string: { type: 'string', description: 'The text to put in its place.' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence instead of exactly one. Default false.' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
    async execute(input, context) {
      const args = parseArgs('edit', schema(), input);
      if (args.old_string === '') throw new ToolFailure('old_string cannot be empty.');
      if (args.old_string === args.new_string) throw new ToolFailure('old_string and new_string are identical.');
      const verdict = checkedTarget(host, args.path, context?.callId);
      if (verdict.credential) throw new ToolFailure(`${verdict.display} is a credentials path; editing it is refused.`);
      // SEC-4, SEC-5: read through a verified descriptor, write through the verified folder.
      const { bytes, stat } = await readChecked(
        verdict.real,
        verdict.display,
        `${verdict.display} is a folder; give a file path.`,
      );
      if (bytes.subarray(0, 8192).includes(0)) throw new ToolFailure(BINARY_REFUSAL);
      const raw = bytes.toString('utf8');
      const bom = raw.startsWith(BOM) ? BOM : '';
      const before = raw.slice(bom.length);
      let search = args.old_string;
      let replacement = args.new_string;
      let count = occurrences(before, search);
      if (count === 0 && before.includes('\r\n') && !search.includes('\r')) {
        search = search.replace(/\n/g, '\r\n');
        replacement = replacement.replace(/\r?\n/g, '\r\n');
        count = occurrences(before, search);
      }
      if (count === 0) throw new ToolFailure('old_string was not found.');
      if (count > 1 && !args.replace_all) throw new ToolFailure(`old_string matches ${count} times; it must be unique.`);
      const after = args.replace_all ? before.split(search).join(replacement) : replaceOnce(before, search, replacement);
      await writeKeepingMode(verdict.real, verdict.display, bom + after, stat.mode);
      const status =
        `Edited ${verdict.display}.` + (args.replace_all ? `\nReplaced ${count} occurrence${count === 1 ? '' : 's'}.` : '');
      return capOutput(`${status}\n${await diffPreview(verdict.display, before, after)}`);
    },
  };
}

function occurrences(text: string, search: string): number {
  let count = 0;
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) count++;
  return count;
}

function replaceOnce(text: string, search: string, replacement: string): string {
  const at = text.indexOf(search);
  return text.slice(0, at) + replacement + text.slice(at + search.length);
}
