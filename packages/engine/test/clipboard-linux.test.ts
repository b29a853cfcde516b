/**
 * Linux clipboard images with the real `xclip` under a real `Xvfb` (CLIP-1, CLIP-4..7), and
 * `wl-paste` through a fake script on PATH (no Wayland compositor with a seat runs here).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ClipboardError,
  type ClipboardErrorKind,
  type ClipboardReadOptions,
  findOnPath,
  pickType,
  type ReaderResult,
  readClipboardImage,
  spawnRunner,
} from '../src/images/clipboard/index.js';
import { cut, type Format, limits, MIME, makeImage } from './images-fixtures.js';

const run = promisify(execFile);
const CHUNK = 64 * 1024;
/** For the fake scripts' own tools (cat, tr, dirname). */
const SYSTEM_PATH = ['/usr/bin', '/bin'].join(delimiter);
const withSystem = (dir: string): string => `${dir}${delimiter}${SYSTEM_PATH}`;

let xvfb: ChildProcess | undefined;
let display = '';
let owner: ChildProcess | undefined;
let xclipPath = '';
const work = mkdtempSync(join(tmpdir(), 'crystal-clipboard-'));

/** The PATH folder of a program, or a failure saying `.ci/run` must install its package. */
async function required(program: string, debianPackage: string): Promise<string> {
  const found = await findOnPath(program, process.env);
  if (!found) {
    throw new Error(
      `${program} is not installed. The clipboard tests drive the real ${program}: .ci/run must install the Debian package ${debianPackage} (apt-get install -y xclip xvfb).`,
    );
  }
  return found;
}

/** Starts Xvfb on a display number it picks itself (-displayfd), resolving once it accepts clients. */
function startXvfb(): Promise<{ process: ChildProcess; display: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '640x480x24', '-nolisten', 'tcp'], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let number = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const fd3 = child.stdio[3] as NodeJS.ReadableStream;
    fd3.on('data', (chunk: Buffer) => {
      number += chunk.toString();
      if (number.includes('\n')) resolve({ process: child, display: `:${number.trim()}` });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`Xvfb exited with code ${code} before it was ready: ${stderr.trim()}`)));
  });
}

function xEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, DISPLAY: display, ...extra };
}

async function targets(): Promise<string[]> {
  try {
    const { stdout } = await run('xclip', ['-selection', 'clipboard', '-t', 'TARGETS', '-o'], { env: xEnv() });
    return stdout.split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

async function releaseClipboard(): Promise<void> {
  const previous = owner;
  owner = undefined;
  if (previous && previous.exitCode === null && previous.signalCode === null) {
    const gone = new Promise((resolve) => previous.once('exit', resolve));
    previous.kill('SIGKILL');
    await gone;
  }
}

/** Puts `bytes` on the clipboard with a foreground xclip (`-quiet`) we own, and waits until it is offered. */
async function setClipboard(bytes: Uint8Array | string, target: string | undefined): Promise<void> {
  await releaseClipboard();
  const file = join(work, `clip-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, bytes);
  const args = ['-quiet', '-selection', 'clipboard', ...(target ? ['-t', target] : []), '-i', file];
  owner = spawn('xclip', args, { env: xEnv(), stdio: 'ignore' });
  const offered = target ?? 'UTF8_STRING';
  for (let attempt = 0; attempt < 500; attempt++) {
    if ((await targets()).includes(offered)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`xclip never offered ${offered} on ${display}`);
}

async function refusal(options: ClipboardReadOptions): Promise<ClipboardError> {
  const error = await readClipboardImage(options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClipboardError);
  return error as ClipboardError;
}

function expectKind(error: ClipboardError, kind: ClipboardErrorKind): void {
  expect({ kind: error.kind, message: error.message }).toMatchObject({ kind });
}

/** A folder holding only the named programs (links to the real ones, or scripts). */
function binFolder(name: string, programs: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [program, target] of Object.entries(programs)) {
    const path = join(dir, program);
    if (target.startsWith('#!')) {
      writeFileSync(path, target);
      chmodSync(path, 0o755);
    } else {
      symlinkSync(target, path);
    }
  }
  return dir;
}

/** A fake `wl-paste`: logs its argv, lists `types`, prints `data/<type with _>`; `fail` makes it fail. */
const FAKE_WL_PASTE = `#!/bin/sh
dir=$(dirname "$0")
printf '%s\\n' "$*" >> "$dir/calls.log"
if [ -f "$dir/fail" ]; then cat "$dir/fail" >&2; exit 1; fi
if [ "$1" = "--list-types" ]; then cat "$dir/types"; exit 0; fi
if [ "$1" = "--no-newline" ] && [ "$2" = "--type" ]; then
  f="$dir/data/$(printf '%s' "$3" | tr / _)"
  if [ -f "$f" ]; then exec cat "$f"; fi
  echo "No suitable type of content copied" >&2; exit 1
fi
echo "unexpected arguments: $*" >&2
exit 2
`;

function fakeWlPaste(name: string, types: readonly string[], data: Record<string, Uint8Array> = {}): string {
  const dir = binFolder(name, { 'wl-paste': FAKE_WL_PASTE });
  writeFileSync(join(dir, 'types'), types.map((t) => `${t}\n`).join(''));
  mkdirSync(join(dir, 'data'), { recursive: true });
  for (const [type, bytes] of Object.entries(data)) writeFileSync(join(dir, 'data', type.replace('/', '_')), bytes);
  return dir;
}

function calls(dir: string): string[] {
  const log = join(dir, 'calls.log');
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
}

/** Set when xclip or Xvfb is missing: every test then FAILS with it (never skips). */
let missing: Error | undefined;

beforeAll(async () => {
  try {
    xclipPath = await required('xclip', 'xclip');
    await required('Xvfb', 'xvfb');
  } catch (error) {
    missing = error as Error;
    return;
  }
  const started = await startXvfb();
  xvfb = started.process;
  display = started.display;
});

beforeEach(() => {
  if (missing) throw missing;
});

afterEach(async () => {
  await releaseClipboard();
});

afterAll(async () => {
  await releaseClipboard();
  if (xvfb && xvfb.exitCode === null) {
    xvfb.removeAllListeners('exit');
    const gone = new Promise((resolve) => xvfb?.once('exit', resolve));
    xvfb.kill('SIGTERM');
    await gone;
  }
});

describe('Linux clipboard with the real xclip under Xvfb', () => {
  it('CLIP-1 CLIP-4 reads a PNG through xclip byte for byte', async () => {
    const png = await makeImage('png', 40, 30);
    await setClipboard(png, 'image/png');
    const image = await readClipboardImage({ limits: limits(), platform: 'linux', env: xEnv() });
    expect(image.reader).toBe('xclip');
    expect(image.mime).toBe('image/png');
    expect([image.width, image.height]).toEqual([40, 30]);
    expect(Buffer.from(image.bytes).equals(png)).toBe(true);
  });

  it.each<Format>(['jpeg', 'gif', 'webp'])('CLIP-4 reads a %s offered under its own type', async (format) => {
    const bytes = await makeImage(format, 24, 16);
    await setClipboard(bytes, MIME[format]);
    const image = await readClipboardImage({ limits: limits(), platform: 'linux', env: xEnv() });
    expect(image.mime).toBe(MIME[format]);
    expect(Buffer.from(image.bytes).equals(bytes)).toBe(true);
  });

  it('CLIP-4 CLIP-6 text on the clipboard is no_image, although xclip answers image/png with the text', async () => {
    await setClipboard('hello from the clipboard\n', undefined);
    // The quirk: the owning xclip hands its text to any target, so only TARGETS tells the truth.
    const quirk = await run('xclip', ['-selection', 'clipboard', '-t', 'image/png', '-o'], { env: xEnv() });
    expect(quirk.stdout).toBe('hello from the clipboard\n');
    const seen: string[][] = [];
    const error = await refusal({
      limits: limits(),
      platform: 'linux',
      env: xEnv(),
      run: (command) => {
        seen.push([...command.args]);
        return spawnRunner(command);
      },
    });
    expectKind(error, 'no_image');
    expect(error.message).toContain('The clipboard holds no image.');
    expect(seen).toEqual([['-selection', 'clipboard', '-t', 'TARGETS', '-o']]);
  });

  it('CLIP-6 an empty clipboard (no owner) is no_image', async () => {
    await setClipboard('x', undefined);
    await releaseClipboard();
    expect(await targets()).toEqual([]);
    expectKind(await refusal({ limits: limits(), platform: 'linux', env: xEnv() }), 'no_image');
  });

  it('CLIP-6 garbage bytes under an image target are unsupported', async () => {
    await setClipboard(Buffer.from('these bytes are not an image at all'), 'image/png');
    const error = await refusal({ limits: limits(), platform: 'linux', env: xEnv() });
    expectKind(error, 'unsupported');
    expect(error.message).toContain('not a supported PNG, JPEG, GIF, or WebP image');
  });

  it('CLIP-6 a truncated PNG under image/png is unsupported (validated before it is returned)', async () => {
    await setClipboard(cut(await makeImage('png', 64, 64, { noise: true }), 0.5), 'image/png');
    const error = await refusal({ limits: limits(), platform: 'linux', env: xEnv() });
    expectKind(error, 'unsupported');
    expect(error.message).toContain('truncated or damaged');
  });

  it('CLIP-6 an image offered only as image/bmp is unsupported and names the type', async () => {
    await setClipboard(Buffer.from('BM fake bitmap'), 'image/bmp');
    const error = await refusal({ limits: limits(), platform: 'linux', env: xEnv() });
    expectKind(error, 'unsupported');
    expect(error.message).toContain('image/bmp');
  });

  it('CLIP-5 CLIP-6 a big image with a tiny cap is too_large and xclip is killed once the cap is passed', async () => {
    const big = await makeImage('png', 1200, 1200, { noise: true });
    const cap = 256 * 1024;
    expect(big.length).toBeGreaterThan(8 * cap);
    await setClipboard(big, 'image/png');
    const results: ReaderResult[] = [];
    const error = await refusal({
      limits: limits({ maxImageBytes: cap }),
      platform: 'linux',
      env: xEnv(),
      run: async (command) => {
        const result = await spawnRunner(command);
        results.push(result);
        return result;
      },
    });
    expectKind(error, 'too_large');
    expect(error.message).toBe('The clipboard image exceeds the 256 KiB host limit.');
    const read = results.at(-1) as ReaderResult;
    expect(read.overflow).toBe(true);
    expect(read.signal).toBe('SIGKILL');
    expect(read.outputBytes).toBeGreaterThan(cap);
    expect(read.outputBytes).toBeLessThanOrEqual(cap + CHUNK);
    expect(read.stdout.length).toBeLessThanOrEqual(cap);
  });

  it('CLIP-5 an image exactly at the cap is accepted', async () => {
    const png = await makeImage('png', 50, 50, { noise: true });
    await setClipboard(png, 'image/png');
    const image = await readClipboardImage({ limits: limits({ maxImageBytes: png.length }), platform: 'linux', env: xEnv() });
    expect(image.bytes.length).toBe(png.length);
  });

  it('CLIP-6 CLIP-7 xclip missing from PATH is no_reader naming the xclip package; nothing is run', async () => {
    const empty = binFolder('empty-bin', {});
    let runs = 0;
    const error = await refusal({
      limits: limits(),
      platform: 'linux',
      env: { PATH: empty, DISPLAY: display },
      run: (command) => {
        runs++;
        return spawnRunner(command);
      },
    });
    expectKind(error, 'no_reader');
    expect(error.message).toBe('Pasting an image needs xclip, which is not on PATH. Install the xclip package.');
    expect(runs).toBe(0);
  });

  it('CLIP-6 on Wayland with neither reader, no_reader names wl-clipboard', async () => {
    const error = await refusal({
      limits: limits(),
      platform: 'linux',
      env: { PATH: binFolder('empty-bin-2', {}), WAYLAND_DISPLAY: 'wayland-0' },
    });
    expectKind(error, 'no_reader');
    expect(error.message).toContain('Install the wl-clipboard package');
  });

  it('CLIP-6 the real xclip without a display is reader_failed with its stderr', async () => {
    const error = await refusal({ limits: limits(), platform: 'linux', env: { PATH: process.env.PATH } });
    expectKind(error, 'reader_failed');
    expect(error.message).toMatch(/^The clipboard reader xclip failed: Error: Can't open display/);
  });

  it('CLIP-6 a reader that exits non-zero is reader_failed with its stderr, trimmed', async () => {
    const dir = binFolder('failing-xclip', {
      xclip: '#!/bin/sh\nprintf "\\n  xclip: the X server went away  \\n\\n" >&2\nexit 3\n',
    });
    const error = await refusal({ limits: limits(), platform: 'linux', env: { PATH: dir, DISPLAY: display } });
    expectKind(error, 'reader_failed');
    expect(error.message).toBe('The clipboard reader xclip failed: xclip: the X server went away.');
  });

  it('CLIP-6 a reader that exits non-zero without stderr names its exit code', async () => {
    const dir = binFolder('silent-xclip', { xclip: '#!/bin/sh\nexit 7\n' });
    const error = await refusal({ limits: limits(), platform: 'linux', env: { PATH: dir, DISPLAY: display } });
    expectKind(error, 'reader_failed');
    expect(error.message).toBe('The clipboard reader xclip failed: it exited with code 7.');
  });

  it('CLIP-1 with WAYLAND_DISPLAY set but no wl-paste, the real xclip is used', async () => {
    const png = await makeImage('png', 10, 10);
    await setClipboard(png, 'image/png');
    const dir = binFolder('only-xclip', { xclip: xclipPath });
    const image = await readClipboardImage({
      limits: limits(),
      platform: 'linux',
      env: { PATH: dir, DISPLAY: display, WAYLAND_DISPLAY: 'wayland-0' },
    });
    expect(image.reader).toBe('xclip');
    expect(Buffer.from(image.bytes).equals(png)).toBe(true);
  });
});

describe('Linux clipboard through wl-paste (a fake script on PATH)', () => {
  it('CLIP-1 CLIP-4 uses wl-paste on Wayland: lists the types first, then reads PNG before JPEG, GIF and WebP', async () => {
    const png = await makeImage('png', 12, 12);
    const jpeg = await makeImage('jpeg', 12, 12);
    const dir = fakeWlPaste('wl-order', ['text/plain', 'image/webp', 'image/gif', 'image/jpeg', 'image/png'], {
      'image/png': png,
      'image/jpeg': jpeg,
    });
    const image = await readClipboardImage({
      limits: limits(),
      platform: 'linux',
      env: { PATH: withSystem(dir), WAYLAND_DISPLAY: 'wayland-0' },
    });
    expect(image.reader).toBe('wl-paste');
    expect(image.mime).toBe('image/png');
    expect(Buffer.from(image.bytes).equals(png)).toBe(true);
    expect(calls(dir)).toEqual(['--list-types', '--no-newline --type image/png']);
  });

  it('CLIP-4 without PNG or JPEG, GIF is read before WebP', async () => {
    const gif = await makeImage('gif', 8, 8);
    const dir = fakeWlPaste('wl-gif', ['image/webp', 'image/gif'], {
      'image/gif': gif,
      'image/webp': await makeImage('webp', 8, 8),
    });
    const image = await readClipboardImage({
      limits: limits(),
      platform: 'linux',
      env: { PATH: withSystem(dir), WAYLAND_DISPLAY: 'wayland-1' },
    });
    expect(image.mime).toBe('image/gif');
    expect(calls(dir)).toEqual(['--list-types', '--no-newline --type image/gif']);
  });

  it('CLIP-1 without WAYLAND_DISPLAY, xclip is used even when wl-paste exists', async () => {
    const png = await makeImage('png', 9, 9);
    await setClipboard(png, 'image/png');
    const dir = fakeWlPaste('wl-unused', ['image/png'], { 'image/png': png });
    symlinkSync(xclipPath, join(dir, 'xclip'));
    const image = await readClipboardImage({ limits: limits(), platform: 'linux', env: { PATH: dir, DISPLAY: display } });
    expect(image.reader).toBe('xclip');
    expect(calls(dir)).toEqual([]);
  });

  it('CLIP-6 "Nothing is copied" from wl-paste is no_image, a text-only clipboard too', async () => {
    const empty = fakeWlPaste('wl-empty', []);
    writeFileSync(join(empty, 'fail'), 'Nothing is copied\n');
    const env = { PATH: withSystem(empty), WAYLAND_DISPLAY: 'wayland-0' };
    expectKind(await refusal({ limits: limits(), platform: 'linux', env }), 'no_image');
    const text = fakeWlPaste('wl-text', ['text/plain;charset=utf-8', 'UTF8_STRING']);
    const error = await refusal({
      limits: limits(),
      platform: 'linux',
      env: { PATH: withSystem(text), WAYLAND_DISPLAY: 'wayland-0' },
    });
    expectKind(error, 'no_image');
    expect(calls(text)).toEqual(['--list-types']);
  });

  it('CLIP-6 wl-paste failing otherwise is reader_failed with its stderr', async () => {
    const dir = fakeWlPaste('wl-broken', []);
    writeFileSync(join(dir, 'fail'), 'Failed to connect to a Wayland server\n');
    const error = await refusal({
      limits: limits(),
      platform: 'linux',
      env: { PATH: withSystem(dir), WAYLAND_DISPLAY: 'wayland-0' },
    });
    expectKind(error, 'reader_failed');
    expect(error.message).toBe('The clipboard reader wl-paste failed: Failed to connect to a Wayland server.');
  });

  it('CLIP-5 wl-paste output over the cap is too_large and the reader is killed', async () => {
    const dir = binFolder('wl-endless', {
      'wl-paste': '#!/bin/sh\nif [ "$1" = "--list-types" ]; then echo image/png; exit 0; fi\nexec cat /dev/zero\n',
    });
    const results: ReaderResult[] = [];
    const cap = 100_000;
    const error = await refusal({
      limits: limits({ maxImageBytes: cap }),
      platform: 'linux',
      env: { PATH: withSystem(dir), WAYLAND_DISPLAY: 'wayland-0' },
      run: async (command) => {
        const result = await spawnRunner(command);
        results.push(result);
        return result;
      },
    });
    expectKind(error, 'too_large');
    const read = results.at(-1) as ReaderResult;
    expect(read.signal).toBe('SIGKILL');
    expect(read.outputBytes).toBeLessThanOrEqual(cap + CHUNK);
  });

  it('CLIP-4 pickType keeps the order PNG, JPEG, GIF, WebP and knows the JPEG aliases', () => {
    expect(pickType(['image/webp', 'image/gif', 'image/jpg'])).toBe('image/jpg');
    expect(pickType(['image/webp', 'image/png;foo=bar'])).toBe('image/png;foo=bar');
    expect(pickType(['text/plain', 'image/tiff'])).toBeUndefined();
  });
});
