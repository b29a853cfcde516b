/**
 * `"output": "content"` (IMG-18, §5.3): stdout is one JSON object `{text?, images?: [{mimeType,
 * base64 | path}]}` turned into text and image parts. At most 8 images, PNG/JPEG/GIF/WebP whose
 * bytes match the declared type, 20 MiB each; a `path` is a regular file inside the workspace.
 * stderr is appended to the text. A text-only turn refuses images (IMG-19) instead of dropping them.
 */
import { promises as fs } from 'node:fs';
import { basename } from 'node:path';
import type { ImagePart, ToolResultContent } from '@crystal/core';
import * as z from 'zod/mini';
import { resolvePath } from '../tools/fence.js';
import { readFileForSearch } from '../tools/safe-open.js';
import { lazySchema } from '../lazy-schema.js';
import { firstProblem } from '../zod-issues.js';
import {
  checkToolImage,
  decodeBase64,
  MAX_TOOL_IMAGE_BYTES,
  MAX_TOOL_IMAGES,
  TEXT_ONLY_IMAGE_ERROR,
  TOOL_IMAGE_MIME_TYPES,
} from './image-bytes.js';

/** Built at the first content-mode output (issue 22 item 4: not when the engine loads). */
function buildSchemas() {
  const imageSchema = z
    .object({ mimeType: z.enum(TOOL_IMAGE_MIME_TYPES), base64: z.optional(z.string()), path: z.optional(z.string()) })
    .check(
      z.refine((image) => (image.base64 === undefined) !== (image.path === undefined), 'expected exactly one of base64 or path'),
    );
  const contentSchema = z.object({
    text: z.optional(z.string()),
    images: z.optional(z.array(imageSchema).check(z.maxLength(MAX_TOOL_IMAGES, `expected at most ${MAX_TOOL_IMAGES} images`))),
  });
  return { imageSchema, contentSchema };
}

const schemas = lazySchema(buildSchemas);
type ToolImage = z.output<ReturnType<typeof buildSchemas>['imageSchema']>;

const PREVIEW_CHARS = 200;

function preview(text: string): string {
  return text.length <= PREVIEW_CHARS ? text : `${text.slice(0, PREVIEW_CHARS)}…`;
}

export interface ContentOutputOptions {
  readonly workspace: string;
  readonly imageInput: boolean;
}

/** Turns a content-mode stdout (and stderr) into result parts; throws an error the model can act on. */
export async function parseContentOutput(
  stdout: string,
  stderr: string,
  options: ContentOutputOptions,
): Promise<ToolResultContent[]> {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch (error) {
    throw new Error(`The tool's output is not valid JSON (${(error as Error).message}). Output: ${preview(stdout)}`);
  }
  const result = schemas().contentSchema.safeParse(value);
  if (!result.success) {
    const { path, expectation } = firstProblem(result.error.issues);
    const where = path.length ? `${path.join('.')}: ` : '';
    throw new Error(
      `The tool's output must be one JSON object {text?, images?: [{mimeType, base64 | path}]}: ${where}${expectation}. Output: ${preview(stdout)}`,
    );
  }
  const images = result.data.images ?? [];
  if (images.length > 0 && !options.imageInput) throw new Error(TEXT_ONLY_IMAGE_ERROR);
  const parts: ToolResultContent[] = [];
  const text = joinText(result.data.text ?? '', stderr);
  if (text !== '') parts.push({ type: 'text', text });
  for (const [index, image] of images.entries()) {
    parts.push(await imagePart(image, `images[${index}]`, options.workspace));
  }
  return parts;
}

function joinText(text: string, stderr: string): string {
  if (stderr === '') return text;
  if (text === '') return stderr;
  return text.endsWith('\n') ? text + stderr : `${text}\n${stderr}`;
}

async function imagePart(image: ToolImage, label: string, workspace: string): Promise<ImagePart> {
  if (image.base64 !== undefined) {
    const bytes = decodeBase64(image.base64, label);
    checkToolImage(bytes, image.mimeType, label);
    return { type: 'image', mime: image.mimeType, data: bytes.toString('base64') };
  }
  const bytes = await readWorkspaceImage(image.path as string, label, workspace);
  checkToolImage(bytes, image.mimeType, label);
  return { type: 'image', mime: image.mimeType, data: bytes.toString('base64'), name: basename(image.path as string) };
}

/** A `path` image: a regular file inside the workspace, not a credential path, at most 20 MiB. */
async function readWorkspaceImage(path: string, label: string, workspace: string): Promise<Buffer> {
  const verdict = resolvePath(workspace, path);
  if (verdict.credential) throw new Error(`${label}: ${path} is a credential path and is not read.`);
  if (!verdict.inside) throw new Error(`${label}: ${path} is outside the workspace; image paths must be inside it.`);
  const stat = await fs.lstat(verdict.real).catch(() => undefined);
  if (!stat) throw new Error(`${label}: ${path} does not exist.`);
  if (!stat.isFile()) throw new Error(`${label}: ${path} is not a regular file.`);
  if (stat.size > MAX_TOOL_IMAGE_BYTES) {
    throw new Error(`${label}: ${path} has ${stat.size} bytes; the limit is ${MAX_TOOL_IMAGE_BYTES} bytes (20 MiB).`);
  }
  // SEC-4, SEC-5: the checked file through a verified descriptor, never a FIFO.
  const bytes = await readFileForSearch(verdict.real, MAX_TOOL_IMAGE_BYTES);
  if (bytes === null)
    throw new Error(`${label}: ${path} is not a regular file inside the workspace (it changed while being read).`);
  return bytes;
}
