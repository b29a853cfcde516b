/**
 * Linux clipboard images (CLIP-1, CLIP-4): `wl-paste` when `WAYLAND_DISPLAY` is set and
 * wl-paste is installed, else `xclip`. The declared types are read first (`--list-types`,
 * `TARGETS`), then the first of PNG, JPEG, GIF and WebP that is offered is read. Reading the
 * types first matters for xclip: when xclip itself owns the selection it answers any target with
 * its data, so asking for `image/png` blindly would return text as an "image".
 */
import { constants, promises as fs } from 'node:fs';
import { delimiter, join } from 'node:path';
import {
  type ClipboardReaderName,
  exitStatus,
  LISTING_BYTES,
  type RawClipboardImage,
  type ReaderContext,
  runReader,
} from './context.js';
import { ClipboardError, noImage, readerFailed, tooLarge, unsupported } from './errors.js';

/** The supported types in the order they are tried, with the aliases some programs declare. */
export const LINUX_IMAGE_TYPES: readonly (readonly string[])[] = [
  ['image/png'],
  ['image/jpeg', 'image/jpg', 'image/pjpeg'],
  ['image/gif'],
  ['image/webp'],
];

interface LinuxReader {
  readonly name: Extract<ClipboardReaderName, 'xclip' | 'wl-paste'>;
  readonly path: string;
  readonly listArgs: readonly string[];
  readArgs(type: string): readonly string[];
  /** Stderr that means "nothing is on the clipboard", not a failure. */
  readonly empty: RegExp;
}

const xclip = (path: string): LinuxReader => ({
  name: 'xclip',
  path,
  listArgs: ['-selection', 'clipboard', '-t', 'TARGETS', '-o'],
  readArgs: (type) => ['-selection', 'clipboard', '-t', type, '-o'],
  empty: /target \S+ not available/i,
});

const wlPaste = (path: string): LinuxReader => ({
  name: 'wl-paste',
  path,
  listArgs: ['--list-types'],
  readArgs: (type) => ['--no-newline', '--type', type],
  empty: /nothing is copied|no selection|clipboard is empty|no suitable type/i,
});

/** An executable file named `name` in one of PATH's folders, or undefined. Looked up per paste, never at start-up (CLIP-7). */
export async function findOnPath(name: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      await fs.access(candidate, constants.X_OK);
      if ((await fs.stat(candidate)).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

async function chooseReader(env: NodeJS.ProcessEnv): Promise<LinuxReader> {
  const wayland = Boolean(env.WAYLAND_DISPLAY);
  if (wayland) {
    const wl = await findOnPath('wl-paste', env);
    if (wl) return wlPaste(wl);
  }
  const x = await findOnPath('xclip', env);
  if (x) return xclip(x);
  throw new ClipboardError(
    'no_reader',
    wayland
      ? 'Pasting an image needs wl-paste or xclip, and neither is on PATH. Install the wl-clipboard package (or xclip).'
      : 'Pasting an image needs xclip, which is not on PATH. Install the xclip package.',
  );
}

export async function readLinuxClipboard(context: ReaderContext): Promise<RawClipboardImage> {
  const reader = await chooseReader(context.env);
  const types = await declaredTypes(context, reader);
  const type = pickType(types);
  if (type === undefined) {
    const images = types.filter((t) => t.toLowerCase().startsWith('image/'));
    if (images.length > 0) {
      throw unsupported(`it is offered only as ${images.join(', ')}; copy it as PNG, JPEG, GIF or WebP.`);
    }
    throw noImage(types.length > 0 ? `it offers ${types.slice(0, 8).join(', ')}` : undefined);
  }
  const maxBytes = context.limits.maxImageBytes;
  const result = await runReader(context, reader.name, {
    command: reader.path,
    args: reader.readArgs(type),
    maxOutputBytes: maxBytes,
  });
  if (result.overflow) throw tooLarge(maxBytes);
  if (!result.found) throw readerFailed(reader.name, '', `${reader.path} disappeared`);
  if (result.code !== 0) {
    if (reader.empty.test(result.stderr)) throw noImage();
    throw readerFailed(reader.name, result.stderr, exitStatus(result));
  }
  if (result.stdout.length === 0) throw noImage(`its ${type} data is empty`);
  return { bytes: result.stdout, reader: reader.name, type };
}

/** The types the clipboard owner declares, one per line. */
async function declaredTypes(context: ReaderContext, reader: LinuxReader): Promise<string[]> {
  const result = await runReader(context, reader.name, {
    command: reader.path,
    args: reader.listArgs,
    maxOutputBytes: LISTING_BYTES,
  });
  if (!result.found) throw readerFailed(reader.name, '', `${reader.path} disappeared`);
  if (result.code !== 0 && !result.overflow) {
    if (reader.empty.test(result.stderr)) throw noImage();
    throw readerFailed(reader.name, result.stderr, exitStatus(result));
  }
  return Buffer.from(result.stdout)
    .toString('utf8')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** The first supported type offered, in the order PNG, JPEG, GIF, WebP (CLIP-4). */
export function pickType(declared: readonly string[]): string | undefined {
  const offered = new Map(declared.map((t) => [t.split(';')[0]?.trim().toLowerCase() ?? '', t]));
  for (const aliases of LINUX_IMAGE_TYPES) {
    for (const alias of aliases) {
      const match = offered.get(alias);
      if (match !== undefined) return match;
    }
  }
  return undefined;
}
