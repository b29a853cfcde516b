/**
 * `read` (TOOLS-2): a text file as `%6d|<line>` lines from `offset` (1-based), at most `limit`
 * lines. The file is streamed in chunks and reading stops as soon as the page is full, so a
 * 50 MB file costs a page, not 50 MB. Caps: 20,000 lines, and the text stops before the shared
 * 100,000-character output cap (the reference's 1,000,000-character read cap can never be
 * reached under it), so the `[truncated after N lines; file has at least M lines]` note always
 * survives and tells the model where to continue. Binary files, images and credential paths
 * are refused with a model-visible failure.
 */
import type { promises as fs } from 'node:fs';
import { extname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { ToolDefinition } from '@crystal/core';
import { checkedTarget, type FenceHost, openCheckedFile } from '../safe-open.js';
import { lazySchema, optionalPositiveInt, parseArgs } from './args.js';
import * as z from 'zod/mini';
import { ToolFailure } from './failure.js';
import type { ToolHost } from './host.js';
import { capOutput, OUTPUT_CAP } from './output-cap.js';

export const READ_MAX_LINES = 20_000;
/** The reference's read cap; the 100,000-character output cap is reached first. */
export const READ_MAX_CHARS = 1_000_000;
const TEXT_BUDGET = Math.min(READ_MAX_CHARS, OUTPUT_CAP - 200);
/** A longer line is cut (and says so) rather than held whole in memory. */
export const READ_MAX_LINE_CHARS = TEXT_BUDGET - 100;
const PROBE_BYTES = 8 * 1024;
const CHUNK_BYTES = 64 * 1024;
export const BINARY_REFUSAL = 'File looks binary and will not be read.';
const IMAGE_EXTENSIONS = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp', '.bmp', '.ico', '.tif', '.tiff', '.avif', '.heic']);

const schema = lazySchema(() =>
  z.object({
    path: z.string().check(z.minLength(1)),
    offset: optionalPositiveInt(),
    limit: optionalPositiveInt(),
  }),
);

export function readTool(host: ToolHost): ToolDefinition {
  return {
    name: 'read',
    description:
      'Read a text file. Lines come numbered as "     1|text". Use offset (1-based line number) and limit to read part of a long file; at most 20000 lines per call. Binary files are refused; use view_image for images.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path, relative to the workspace or absolute.' },
        offset: { type: 'integer', minimum: 1, description: 'First line to read (1-based). Default 1.' },
        limit: { type: 'integer', minimum: 1, description: 'Number of lines to read. Default and maximum 20000.' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    async execute(input, context) {
      const args = parseArgs('read', schema(), input);
      const limit = Math.min(args.limit ?? READ_MAX_LINES, READ_MAX_LINES);
      return readFile(host, args.path, args.offset ?? 1, limit, context?.callId);
    },
  };
}

export async function readFile(host: FenceHost, path: string, offset: number, limit: number, callId?: string): Promise<string> {
  const verdict = checkedTarget(host, path, callId);
  if (verdict.credential) throw new ToolFailure(`${verdict.display} is a credentials path; reading it is refused.`);
  // SEC-4, SEC-5: the checked file itself, opened once; a FIFO or a device is refused unopened.
  const { handle } = await openCheckedFile(
    verdict.real,
    verdict.display,
    `${verdict.display} is a folder; use list to see its entries.`,
  );
  try {
    const probe = Buffer.alloc(PROBE_BYTES);
    const { bytesRead } = await handle.read(probe, 0, PROBE_BYTES, 0);
    if (bytesRead === 0) return '(empty file)'; // Not `stat.size`: /proc files say 0 and have text.
    const head = probe.subarray(0, bytesRead);
    if (isImage(head, verdict.real)) {
      throw new ToolFailure(`${verdict.display} is an image; read only returns text. Use view_image to look at it.`);
    }
    if (head.includes(0)) throw new ToolFailure(BINARY_REFUSAL);
    return capOutput(await numberedLines(handle, offset, limit));
  } finally {
    await handle.close();
  }
}

async function numberedLines(handle: fs.FileHandle, offset: number, limit: number): Promise<string> {
  const out: string[] = [];
  let used = 0;
  let lineNo = 0;
  let lastShown = 0;
  for await (const line of scanLines(handle, READ_MAX_LINE_CHARS + 1)) {
    lineNo++;
    if (lineNo < offset) continue;
    const text =
      line.length > READ_MAX_LINE_CHARS
        ? `${line.slice(0, READ_MAX_LINE_CHARS)} [line cut at ${READ_MAX_LINE_CHARS} characters]`
        : line;
    const entry = `${String(lineNo).padStart(6, ' ')}|${text}`;
    const full = lastShown > 0 && (out.length >= limit || used + entry.length + 1 > TEXT_BUDGET);
    if (full) return `${out.join('\n')}\n[truncated after ${lastShown} lines; file has at least ${lineNo} lines]`;
    out.push(entry);
    used += entry.length + 1;
    lastShown = lineNo;
  }
  if (lineNo < offset) throw new ToolFailure(`File has ${lineNo} lines; offset ${offset} is past the end.`);
  return out.join('\n');
}

/**
 * The file's lines without their `\n` or `\r\n`, read in 64 KiB chunks; a line longer than
 * `maxChars` keeps its first `maxChars` characters and the rest is skipped, not buffered.
 */
async function* scanLines(handle: fs.FileHandle, maxChars: number): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  const buffer = Buffer.alloc(CHUNK_BYTES);
  let position = 0;
  let line = '';
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const text = decoder.write(buffer.subarray(0, bytesRead));
    let start = 0;
    for (;;) {
      const end = text.indexOf('\n', start);
      const piece = text.slice(start, end === -1 ? text.length : end);
      if (line.length < maxChars) line += piece.slice(0, maxChars - line.length);
      if (end === -1) break;
      yield line.endsWith('\r') ? line.slice(0, -1) : line;
      line = '';
      start = end + 1;
    }
  }
  line += decoder.end();
  if (line.length > 0) yield line.endsWith('\r') ? line.slice(0, -1) : line;
}

function isImage(head: Buffer, path: string): boolean {
  if (IMAGE_EXTENSIONS.has(extname(path).toLowerCase())) return true;
  const png = head[0] === 0x89 && head.subarray(1, 4).toString('latin1') === 'PNG';
  const jpeg = head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff;
  const gif = head.subarray(0, 4).toString('latin1') === 'GIF8';
  const webp = head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP';
  return png || jpeg || gif || webp;
}
