/**
 * Checks a tool image before it becomes model input (IMG-18): PNG, JPEG, GIF or WebP, bytes that
 * match the declared MIME type, at most 20 MiB, at most 8 per result.
 */
export const TOOL_IMAGE_MIME_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ToolImageMime = (typeof TOOL_IMAGE_MIME_TYPES)[number];
export const MAX_TOOL_IMAGE_BYTES = 20 * 1024 * 1024;
export const MAX_TOOL_IMAGES = 8;
export const TEXT_ONLY_IMAGE_ERROR = 'This model cannot accept tool images.';

const startsWith = (bytes: Uint8Array, prefix: readonly number[], at = 0): boolean =>
  bytes.length >= at + prefix.length && prefix.every((b, i) => bytes[at + i] === b);
const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

/** The image type the bytes' signature says, or undefined when it is none of the four. */
export function signatureMime(bytes: Uint8Array): ToolImageMime | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  return undefined;
}

/** Throws an error naming the image when it breaks a rule; `label` is e.g. `images[0]`. */
export function checkToolImage(bytes: Uint8Array, mime: string, label: string): void {
  if (!(TOOL_IMAGE_MIME_TYPES as readonly string[]).includes(mime)) {
    throw new Error(`${label}: mimeType ${JSON.stringify(mime)} is not one of ${TOOL_IMAGE_MIME_TYPES.join(', ')}.`);
  }
  if (bytes.length > MAX_TOOL_IMAGE_BYTES) {
    throw new Error(`${label}: the image has ${bytes.length} bytes; the limit is ${MAX_TOOL_IMAGE_BYTES} bytes (20 MiB).`);
  }
  const actual = signatureMime(bytes);
  if (actual !== mime) {
    throw new Error(`${label}: the bytes are ${actual ? `${actual}` : 'not a PNG, JPEG, GIF or WebP image'}, not ${mime}.`);
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes strict base64 (whitespace allowed); throws naming `label` otherwise. */
export function decodeBase64(value: string, label: string): Buffer {
  const compact = value.replace(/\s+/g, '');
  if (compact.length % 4 === 1 || !BASE64.test(compact)) throw new Error(`${label}: base64 is not valid base64 text.`);
  return Buffer.from(compact, 'base64');
}
