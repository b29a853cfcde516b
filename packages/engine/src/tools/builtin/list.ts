/**
 * `list`: the immediate entries of a folder, sorted by name in byte order, folders ending with
 * `/`, the skip list and credential paths left out, paged by offset and limit. A link is shown
 * with the kind of its target but never entered.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { ToolDefinition } from '@crystal/core';
import { isCredentialPath } from '../fence.js';
import { readDirChecked, SWAPPED_TEXT } from '../safe-open.js';
import { lazySchema, optionalNonNegativeInt, parseArgs } from './args.js';
import * as z from 'zod/mini';
import { ToolFailure } from './failure.js';
import type { ToolHost } from './host.js';
import { capOutput } from './output-cap.js';
import { PAGE_MAX, pagingNote } from './paging.js';
import { compareNames, isSkippedDir, searchScope } from './walker.js';

const schema = lazySchema(() =>
  z.object({
    path: z.optional(z.string()),
    offset: optionalNonNegativeInt(),
    limit: z.optional(z.int().check(z.minimum(1), z.maximum(PAGE_MAX))),
  }),
);

export function listTool(host: ToolHost): ToolDefinition {
  return {
    name: 'list',
    description:
      'List the immediate entries of a folder (default: the workspace root), sorted by name; folders end with "/". Skips bin, obj, .git, .vs, node_modules, dist and credential files. Up to 1000 entries per page.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Folder to list; defaults to the workspace root.' },
        offset: { type: 'integer', minimum: 0, description: 'Entries to skip (for the next page).' },
        limit: { type: 'integer', minimum: 1, maximum: PAGE_MAX, description: 'Entries per page (at most 1000).' },
      },
      additionalProperties: false,
    },
    async execute(input, context) {
      const args = parseArgs('list', schema(), input);
      const scope = await searchScope(host, args.path, context?.callId);
      if (scope.kind === 'file') throw new ToolFailure(`${scope.display} is a file, not a folder; use read to see it.`);
      const entries = await entriesOf(scope.root, scope.display);
      const offset = args.offset ?? 0;
      if (entries.length === 0) return '(empty directory)';
      if (offset >= entries.length) return `Offset ${offset} is past the end; the folder has ${entries.length} entries.`;
      const page = entries.slice(offset, offset + (args.limit ?? PAGE_MAX));
      return capOutput(page.join('\n') + pagingNote(page.length, entries.length, offset, 'entries'));
    },
  };
}

async function entriesOf(dir: string, display: string): Promise<string[]> {
  let dirents: import('node:fs').Dirent[] | undefined;
  try {
    // SEC-4: the listing comes through a descriptor verified to be the checked folder.
    dirents = await readDirChecked(dir);
  } catch (error) {
    throw new ToolFailure(`The folder cannot be read: ${(error as Error).message}.`);
  }
  if (dirents === undefined) throw new ToolFailure(`${display} ${SWAPPED_TEXT}.`);
  const names: string[] = [];
  for (const entry of dirents.sort((a, b) => compareNames(a.name, b.name))) {
    const absolute = join(dir, entry.name);
    if (isCredentialPath(absolute)) continue;
    let isDir = entry.isDirectory();
    if (entry.isSymbolicLink())
      isDir = await fs.stat(absolute).then(
        (s) => s.isDirectory(),
        () => false,
      );
    if (isDir && isSkippedDir(entry.name)) continue;
    names.push(isDir ? `${entry.name}/` : entry.name);
  }
  return names;
}
