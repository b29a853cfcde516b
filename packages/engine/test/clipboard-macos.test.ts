/**
 * The macOS clipboard reader (CLIP-1, CLIP-3, CLIP-5, CLIP-6) through an injected runner that
 * plays the system `osascript`: the exact command lines are asserted, and the fake writes the
 * temporary file the real AppleScript would write.
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ClipboardError,
  type ReaderCommand,
  type ReaderResult,
  macWriteArgs,
  OSASCRIPT,
  parseClipboardInfo,
  readClipboardImage,
} from '../src/images/clipboard/index.js';
import { limits, makeImage } from './images-fixtures.js';

const ABSENT_STDERR = '34:78: execution error: Can’t make some data into the expected type. (-1700)\n';

interface FakeMac {
  /** The `clipboard info` answer. */
  readonly info: string;
  /** What `the clipboard as «class CODE»` yields, by code; a missing code fails with -1700. */
  readonly data?: Readonly<Record<string, Uint8Array>>;
  readonly infoResult?: Partial<ReaderResult>;
}

function result(partial: Partial<ReaderResult> = {}): ReaderResult {
  return {
    found: true,
    code: 0,
    signal: null,
    stdout: new Uint8Array(),
    stderr: '',
    outputBytes: 0,
    overflow: false,
    timedOut: false,
    ...partial,
  };
}

function fakeOsascript(fake: FakeMac): { run: (c: ReaderCommand) => Promise<ReaderResult>; commands: ReaderCommand[] } {
  const commands: ReaderCommand[] = [];
  const run = async (command: ReaderCommand): Promise<ReaderResult> => {
    commands.push(command);
    if (command.args.length === 2 && command.args[1] === 'clipboard info') {
      const stdout = Buffer.from(fake.info);
      return result({ stdout, outputBytes: stdout.length, ...fake.infoResult });
    }
    const path = /POSIX file "(.*)"/.exec(command.args[1] ?? '')?.[1] as string;
    const code = /«class (.{4})»/.exec(command.args[7] ?? '')?.[1] as string;
    const bytes = fake.data?.[code];
    writeFileSync(path, bytes ?? new Uint8Array());
    return bytes ? result() : result({ code: 1, stderr: ABSENT_STDERR });
  };
  return { run, commands };
}

function tempRoot(): string {
  return mkdtempSync(join(tmpdir(), 'crystal-mac-'));
}

async function refusal(promise: Promise<unknown>): Promise<ClipboardError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClipboardError);
  return error as ClipboardError;
}

describe('macOS clipboard through osascript', () => {
  it('CLIP-1 CLIP-3 lists the representations, then writes PNG to a private temp file with the exact AppleScript', async () => {
    const png = await makeImage('png', 20, 10);
    const fake = fakeOsascript({
      info: `«class PNGf», ${png.length}, «class 8BPS», 150462, GIF picture, 19207, JPEG picture, 17560, TIFF picture, 1124104\n`,
      data: { PNGf: png, JPEG: await makeImage('jpeg', 20, 10) },
    });
    const root = tempRoot();
    const image = await readClipboardImage({ limits: limits(), platform: 'darwin', env: {}, run: fake.run, tempDir: root });
    expect(image).toMatchObject({ reader: 'osascript', mime: 'image/png', width: 20, height: 10 });
    expect(Buffer.from(image.bytes).equals(png)).toBe(true);

    const [info, write] = fake.commands as [ReaderCommand, ReaderCommand];
    expect(fake.commands).toHaveLength(2);
    expect([info.command, info.args]).toEqual([OSASCRIPT, ['-e', 'clipboard info']]);
    expect(OSASCRIPT).toBe('/usr/bin/osascript');
    const path = /POSIX file "(.*)"/.exec(write.args[1] as string)?.[1] as string;
    expect(dirname(dirname(path))).toBe(root);
    expect(path).toMatch(/\/crystal-clipboard-[^/]+\/clipboard\.png$/);
    expect([write.command, write.args]).toEqual([
      '/usr/bin/osascript',
      [
        '-e',
        `set f to open for access (POSIX file "${path}") with write permission`,
        '-e',
        'try',
        '-e',
        'set eof of f to 0',
        '-e',
        'write (the clipboard as «class PNGf») to f',
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
      ],
    ]);
    // CLIP-5: the runner watches the temp file against the cap while osascript writes it.
    expect(write.watchFile).toEqual({ path, maxBytes: limits().maxImageBytes });
    // The private folder is gone afterwards.
    expect(readdirSync(root)).toEqual([]);
  });

  it('CLIP-3 without PNG, JPEG is tried before GIF', async () => {
    const jpeg = await makeImage('jpeg', 8, 8);
    const fake = fakeOsascript({
      info: 'GIF picture, 900, JPEG picture, 700',
      data: { JPEG: jpeg, GIFf: await makeImage('gif', 8, 8) },
    });
    const image = await readClipboardImage({ limits: limits(), platform: 'darwin', env: {}, run: fake.run, tempDir: tempRoot() });
    expect(image.mime).toBe('image/jpeg');
    expect(fake.commands.map((c) => c.args[7])).toEqual([undefined, 'write (the clipboard as «class JPEG») to f']);
  });

  it('CLIP-3 a representation the clipboard cannot give after all (-1700) falls through to the next, in order', async () => {
    const gif = await makeImage('gif', 6, 6);
    const fake = fakeOsascript({ info: '«class PNGf», 100, «class JPEG», 100, «class GIFf», 100', data: { GIFf: gif } });
    const image = await readClipboardImage({ limits: limits(), platform: 'darwin', env: {}, run: fake.run, tempDir: tempRoot() });
    expect(image.mime).toBe('image/gif');
    expect(fake.commands.slice(1).map((c) => c.args[7])).toEqual([
      'write (the clipboard as «class PNGf») to f',
      'write (the clipboard as «class JPEG») to f',
      'write (the clipboard as «class GIFf») to f',
    ]);
  });

  it('CLIP-6 text only is no_image; only the listing ran', async () => {
    const fake = fakeOsascript({ info: '«class utf8», 12, «class ut16», 26, string, 12, Unicode text, 24' });
    const error = await refusal(
      readClipboardImage({ limits: limits(), platform: 'darwin', env: {}, run: fake.run, tempDir: tempRoot() }),
    );
    expect(error.kind).toBe('no_image');
    expect(fake.commands).toHaveLength(1);
  });

  it('CLIP-6 an image offered only as TIFF is unsupported and names the representation', async () => {
    const fake = fakeOsascript({ info: 'TIFF picture, 1124104, «class BMP », 1124470' });
    const error = await refusal(
      readClipboardImage({ limits: limits(), platform: 'darwin', env: {}, run: fake.run, tempDir: tempRoot() }),
    );
    expect(error.kind).toBe('unsupported');
    expect(error.message).toContain('TIFF picture');
  });

  it('CLIP-6 garbage bytes in the PNG representation are unsupported', async () => {
    const fake = fakeOsascript({ info: '«class PNGf», 20', data: { PNGf: Buffer.from('not a png, just text') } });
    const error = await refusal(
      readClipboardImage({ limits: limits(), platform: 'darwin', env: {}, run: fake.run, tempDir: tempRoot() }),
    );
    expect(error.kind).toBe('unsupported');
  });

  it('CLIP-5 CLIP-6 a declared size over the cap is too_large before anything is written', async () => {
    const fake = fakeOsascript({ info: '«class PNGf», 5000000' });
    const error = await refusal(
      readClipboardImage({
        limits: limits({ maxImageBytes: 1_000_000 }),
        platform: 'darwin',
        env: {},
        run: fake.run,
        tempDir: tempRoot(),
      }),
    );
    expect(error.kind).toBe('too_large');
    expect(error.message).toBe('The clipboard image exceeds the 976.6 KiB host limit (it is 4.8 MiB).');
    expect(fake.commands).toHaveLength(1);
  });

  it('CLIP-5 a temp file that outgrows the cap (the runner killed osascript) is too_large and removed', async () => {
    const root = tempRoot();
    const png = await makeImage('png', 300, 300, { noise: true });
    const cap = 10_000;
    const fake = fakeOsascript({ info: '«class PNGf», 100', data: { PNGf: png } });
    const run = async (command: ReaderCommand): Promise<ReaderResult> => {
      const answer = await fake.run(command);
      return command.watchFile ? { ...answer, overflow: true, code: null, signal: 'SIGKILL' } : answer;
    };
    const error = await refusal(
      readClipboardImage({ limits: limits({ maxImageBytes: cap }), platform: 'darwin', env: {}, run, tempDir: root }),
    );
    expect(error.kind).toBe('too_large');
    expect(readdirSync(root)).toEqual([]);
  });

  it('CLIP-6 osascript failing is reader_failed with its stderr', async () => {
    const fake = fakeOsascript({
      info: '',
      infoResult: { code: 1, stderr: '0:14: execution error: Not authorized to send Apple events to System Events. (-1743)\n' },
    });
    const error = await refusal(
      readClipboardImage({ limits: limits(), platform: 'darwin', env: {}, run: fake.run, tempDir: tempRoot() }),
    );
    expect(error.kind).toBe('reader_failed');
    expect(error.message).toBe(
      'The clipboard reader osascript failed: 0:14: execution error: Not authorized to send Apple events to System Events. (-1743).',
    );
  });

  it('CLIP-6 CLIP-7 a missing osascript is no_reader', async () => {
    const run = async (): Promise<ReaderResult> => result({ found: false, code: null });
    const error = await refusal(readClipboardImage({ limits: limits(), platform: 'darwin', env: {}, run, tempDir: tempRoot() }));
    expect(error.kind).toBe('no_reader');
    expect(error.message).toContain('/usr/bin/osascript');
  });

  it('CLIP-3 parses clipboard info pairs, class codes with spaces included', () => {
    expect(parseClipboardInfo('«class PNGf», 40390, «class BMP », 1124470, TIFF picture, 1124104\n')).toEqual([
      { name: '«class PNGf»', size: 40390 },
      { name: '«class BMP »', size: 1124470 },
      { name: 'TIFF picture', size: 1124104 },
    ]);
    expect(parseClipboardInfo('{{«class PNGf», 5}, {string, 3}}')).toEqual([
      { name: '«class PNGf»', size: 5 },
      { name: 'string', size: 3 },
    ]);
  });

  it('CLIP-3 a temp path with quotes or backslashes is escaped inside the AppleScript string', () => {
    expect(macWriteArgs('PNGf', '/tmp/a"b\\c/clipboard.png')[1]).toBe(
      'set f to open for access (POSIX file "/tmp/a\\"b\\\\c/clipboard.png") with write permission',
    );
  });
});
