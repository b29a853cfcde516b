/**
 * macOS clipboard images through the system `osascript` (CLIP-1, CLIP-3). First `clipboard
 * info` lists the representations and their sizes; then PNG, JPEG and GIF are tried in that
 * order, each written by AppleScript into a file in a private temporary folder. The size is
 * checked before anything is written, the runner kills osascript once the file passes the cap
 * (CLIP-5), the file is read with a bounded read, and the folder is removed in every case.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { exitStatus, LISTING_BYTES, type RawClipboardImage, type ReaderContext, runReader } from './context.js';
import { ClipboardError, noImage, readerFailed, tooLarge, unsupported } from './errors.js';

export const OSASCRIPT = '/usr/bin/osascript';

/** An AppleScript class code (four characters) and the names `clipboard info` prints for it. */
interface MacRepresentation {
  readonly code: string;
  readonly names: readonly string[];
  readonly extension: string;
}

/** The order of CLIP-3. */
export const MAC_REPRESENTATIONS: readonly MacRepresentation[] = [
  { code: 'PNGf', names: ['«class PNGf»', 'PNG picture'], extension: 'png' },
  { code: 'JPEG', names: ['«class JPEG»', 'JPEG picture'], extension: 'jpg' },
  { code: 'GIFf', names: ['«class GIFf»', 'GIF picture'], extension: 'gif' },
];

/** Image representations Crystal Code cannot use (TIFF, BMP, PICT, Photoshop, JPEG 2000, HEIC). */
const OTHER_IMAGES = /picture$|^\u00abclass (TIFF|BMP |PICT|8BPS|jp2 |TPIC|heic|HEIC|icns)\u00bb$/;

export const CLIPBOARD_INFO_ARGS: readonly string[] = ['-e', 'clipboard info'];

/** `«class PNGf», 40390, TIFF picture, 1124104` → name/size pairs. */
export function parseClipboardInfo(text: string): { readonly name: string; readonly size: number }[] {
  const pairs: { name: string; size: number }[] = [];
  for (const match of text.replace(/[{}]/g, '').matchAll(/\s*([^,]+?)\s*,\s*(\d+)\s*(?:,|$)/g)) {
    pairs.push({ name: match[1] as string, size: Number(match[2]) });
  }
  return pairs;
}

/** The AppleScript that writes the clipboard as `code` into `path`, closing the file on every path. */
export function macWriteArgs(code: string, path: string): string[] {
  const file = `POSIX file "${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  return [
    '-e',
    `set f to open for access (${file}) with write permission`,
    '-e',
    'try',
    '-e',
    'set eof of f to 0',
    '-e',
    `write (the clipboard as «class ${code}») to f`,
    '-e',
    'close access f',
    '-e',
    'on error m number n',
    '-e',
    'close access f',
    '-e',
    'error m number n',
    '-e',
    'end try',
  ];
}

/** osascript's "cannot make the clipboard into this type": the representation is absent. */
const ABSENT = /\(-1700\)|can.t make/i;

export async function readMacClipboard(context: ReaderContext): Promise<RawClipboardImage> {
  const info = await runReader(context, 'osascript', {
    command: OSASCRIPT,
    args: CLIPBOARD_INFO_ARGS,
    maxOutputBytes: LISTING_BYTES,
  });
  if (!info.found) {
    throw new ClipboardError('no_reader', `Pasting an image needs the system osascript (${OSASCRIPT}), which was not found.`);
  }
  if (info.code !== 0) throw readerFailed('osascript', info.stderr, exitStatus(info));
  const declared = parseClipboardInfo(Buffer.from(info.stdout).toString('utf8'));
  const offered = MAC_REPRESENTATIONS.flatMap((rep) => {
    const found = declared.find((d) => rep.names.includes(d.name));
    return found ? [{ rep, size: found.size }] : [];
  });
  if (offered.length === 0) {
    const others = declared.filter((d) => OTHER_IMAGES.test(d.name)).map((d) => d.name);
    if (others.length > 0) throw unsupported(`it is offered only as ${others.join(', ')}; copy it as PNG, JPEG or GIF.`);
    throw noImage();
  }
  const maxBytes = context.limits.maxImageBytes;
  const folder = await fs.mkdtemp(join(context.tempDir, 'crystal-clipboard-'));
  try {
    for (const { rep, size } of offered) {
      if (size > maxBytes) throw tooLarge(maxBytes, size);
      const path = join(folder, `clipboard.${rep.extension}`);
      const bytes = await writeAndRead(context, rep.code, path);
      if (bytes !== undefined) return { bytes, reader: 'osascript', type: `«class ${rep.code}»` };
    }
    throw noImage();
  } finally {
    await fs.rm(folder, { recursive: true, force: true });
  }
}

/** The representation's bytes, or undefined when the clipboard cannot give it after all. */
async function writeAndRead(context: ReaderContext, code: string, path: string): Promise<Uint8Array | undefined> {
  const maxBytes = context.limits.maxImageBytes;
  const result = await runReader(context, 'osascript', {
    command: OSASCRIPT,
    args: macWriteArgs(code, path),
    maxOutputBytes: LISTING_BYTES,
    watchFile: { path, maxBytes },
  });
  const size = await fs.stat(path).then(
    (stat) => stat.size,
    () => 0,
  );
  if (result.overflow || size > maxBytes) throw tooLarge(maxBytes);
  if (result.code !== 0) {
    if (ABSENT.test(result.stderr)) return undefined;
    throw readerFailed('osascript', result.stderr, exitStatus(result));
  }
  if (size === 0) return undefined;
  return readBounded(path, size, maxBytes);
}

/** The file's `size` bytes; more than `maxBytes` (it grew after the check) is refused. */
async function readBounded(path: string, size: number, maxBytes: number): Promise<Uint8Array> {
  const handle = await fs.open(path, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(size, maxBytes) + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled === buffer.length) break;
    }
    if (filled > maxBytes) throw tooLarge(maxBytes);
    return buffer.subarray(0, Math.min(filled, size));
  } finally {
    await handle.close();
  }
}
