/**
 * `write` (TOOLS-2): a whole file, at most 2 MiB of UTF-8, parent folders created, written
 * atomically to the link's final target with the existing mode kept. Returns
 * `Created <rel> (N characters).` or `Wrote <rel> (N characters).` and a capped diff.
 */
import type { ToolDefinition } from '@crystal/core';
import { checkedTarget, lstatChecked, notRegularText, readChecked } from '../safe-open.js';
import { lazySchema, parseArgs } from './args.js';
import * as z from 'zod/mini';
import { ToolFailure } from './failure.js';
import { diffPreview, writeKeepingMode } from './file-write.js';
import type { ToolHost } from './host.js';
import { capOutput } from './output-cap.js';

export const WRITE_MAX_BYTES = 2 * 1024 * 1024;
const OLD_TEXT_DIFF_MAX_BYTES = 2 * 1024 * 1024;

const schema = lazySchema(() => z.object({ path: z.string().check(z.minLength(1)), contents: z.string() }));

export function writeTool(host: ToolHost): ToolDefinition {
  return {
    name: 'write',
    description:
      'Write a whole file (create it or replace it). Parent folders are created. Prefer edit for changing part of an existing file. At most 2 MiB.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path, relative to the workspace or absolute.' },
        contents: { type: 'string', description: 'The complete new contents of the file.' },
      },
      required: ['path', 'contents'],
      additionalProperties: false,
    },
    async execute(input, context) {
      const args = parseArgs('write', schema(), input);
      const verdict = checkedTarget(host, args.path, context?.callId);
      if (verdict.credential) throw new ToolFailure(`${verdict.display} is a credentials path; writing it is refused.`);
      const bytes = Buffer.byteLength(args.contents, 'utf8');
      if (bytes > WRITE_MAX_BYTES) {
        throw new ToolFailure(
          `contents is ${bytes} bytes; write takes at most ${WRITE_MAX_BYTES} bytes (2 MiB). Split the file.`,
        );
      }
      // SEC-4, SEC-5: the old text through a verified descriptor, the new through the verified folder.
      const existing = await lstatChecked(verdict.real);
      if (existing?.isDirectory()) throw new ToolFailure(`${verdict.display} is a folder; give a file path.`);
      if (existing && !existing.isFile()) throw new ToolFailure(notRegularText(verdict.display, existing));
      const before =
        existing && existing.size <= OLD_TEXT_DIFF_MAX_BYTES
          ? (await readChecked(verdict.real, verdict.display)).bytes
          : undefined;
      await writeKeepingMode(verdict.real, verdict.display, args.contents, existing?.mode);
      const status = `${existing ? 'Wrote' : 'Created'} ${verdict.display} (${args.contents.length} characters).`;
      const diff =
        existing && !before
          ? '(the old file is too large to diff)'
          : before?.includes(0)
            ? '(a binary file was replaced)'
            : await diffPreview(verdict.display, before?.toString('utf8') ?? '', args.contents);
      return capOutput(`${status}\n${diff}`);
    },
  };
}
