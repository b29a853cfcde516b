/** `glob` (TOOLS-2): files whose path matches a pattern, up to 1,000 per page, through rg or the walker. */
import type { ToolDefinition } from '@crystal/core';
import { lazySchema, optionalNonNegativeInt, parseArgs } from './args.js';
import * as z from 'zod/mini';
import { listFileBatches, pathFilter } from './file-list.js';
import type { ToolHost } from './host.js';
import { capOutput } from './output-cap.js';
import { PAGE_MAX, pageOfBatches, pagingNote } from './paging.js';
import { ripgrepFor } from './ripgrep.js';
import { displayOf, searchScope } from './walker.js';

const schema = lazySchema(() =>
  z.object({
    pattern: z.string().check(z.minLength(1)),
    path: z.optional(z.string()),
    offset: optionalNonNegativeInt(),
    limit: z.optional(z.int().check(z.minimum(1), z.maximum(PAGE_MAX))),
  }),
);

export function globTool(host: ToolHost): ToolDefinition {
  return {
    name: 'glob',
    description:
      'Find files by name. The glob pattern (for example "**/*.ts" or "src/*.json") is matched against each path relative to the search folder; a pattern without "/" also matches the base name anywhere below it. Honours .gitignore and skips bin, obj, .git, .vs, node_modules and dist. Returns workspace-relative paths sorted by path, up to 1000 per page.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Glob pattern, for example "**/*.ts".' },
        path: { type: 'string', description: 'Folder to search; defaults to the workspace root.' },
        offset: { type: 'integer', minimum: 0, description: 'Matches to skip (for the next page).' },
        limit: { type: 'integer', minimum: 1, maximum: PAGE_MAX, description: 'Matches per page (at most 1000).' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    async execute(input, context) {
      const { signal } = context;
      const args = parseArgs('glob', schema(), input);
      const scope = await searchScope(host, args.path, context?.callId);
      const offset = args.offset ?? 0;
      const filter = await pathFilter(args.pattern);
      const files = listFileBatches(scope, ripgrepFor(host.rgPath), filter, signal);
      const page = await pageOfBatches(files, offset, args.limit ?? PAGE_MAX);
      if (page.total === 0) return `No files match '${args.pattern}'.`;
      if (page.items.length === 0) return `Offset ${offset} is past the end; ${page.total} files match '${args.pattern}'.`;
      const lines = page.items.map((file) => displayOf(scope, file.absolute));
      return capOutput(lines.join('\n') + pagingNote(lines.length, page.total, offset, 'files'));
    },
  };
}
