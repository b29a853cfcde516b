/**
 * The Windows clipboard reader (CLIP-1, CLIP-2, CLIP-5, CLIP-6) through an injected runner that
 * plays Windows PowerShell: the exact command line, the script it carries, and the parser of
 * its Base64 answer.
 */
import { describe, expect, it } from 'vitest';
import {
  ClipboardError,
  parseWindowsOutput,
  powershellPath,
  type ReaderCommand,
  type ReaderResult,
  readClipboardImage,
  windowsClipboardArgs,
  windowsOutputBytes,
} from '../src/images/clipboard/index.js';
import { limits, makeImage } from './images-fixtures.js';

const ENV = { SystemRoot: 'C:\\Windows' };
const POWERSHELL = 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe';

function answer(stdout: string, partial: Partial<ReaderResult> = {}): ReaderResult {
  const bytes = Buffer.from(stdout, 'latin1');
  return {
    found: true,
    code: 0,
    signal: null,
    stdout: bytes,
    stderr: '',
    outputBytes: bytes.length,
    overflow: false,
    timedOut: false,
    ...partial,
  };
}

function fakePowerShell(result: ReaderResult): { run: (c: ReaderCommand) => Promise<ReaderResult>; commands: ReaderCommand[] } {
  const commands: ReaderCommand[] = [];
  return {
    commands,
    run: async (command) => {
      commands.push(command);
      return result;
    },
  };
}

function decodeScript(args: readonly string[]): string {
  return Buffer.from(args[4] as string, 'base64').toString('utf16le');
}

async function refusal(promise: Promise<unknown>): Promise<ClipboardError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClipboardError);
  return error as ClipboardError;
}

const read = (run: (c: ReaderCommand) => Promise<ReaderResult>, cap?: number) =>
  readClipboardImage({ limits: limits(cap ? { maxImageBytes: cap } : {}), platform: 'win32', env: ENV, run });

describe('Windows clipboard through Windows PowerShell', () => {
  it('CLIP-1 CLIP-2 runs Windows PowerShell with the exact command line and parses its Base64 PNG', async () => {
    const png = await makeImage('png', 16, 9);
    const fake = fakePowerShell(answer(`PNG\r\n${png.toString('base64')}\r\n`));
    const image = await read(fake.run);
    expect(image).toMatchObject({ reader: 'powershell', mime: 'image/png', width: 16, height: 9 });
    expect(Buffer.from(image.bytes).equals(png)).toBe(true);

    expect(fake.commands).toHaveLength(1);
    const command = fake.commands[0] as ReaderCommand;
    const cap = limits().maxImageBytes;
    expect(command.command).toBe(POWERSHELL);
    expect(command.args).toEqual(['-NoProfile', '-NonInteractive', '-STA', '-EncodedCommand', windowsClipboardArgs(cap)[4]]);
    // CLIP-5: the read of the Base64 answer is bounded by the Base64 length of the cap.
    expect(command.maxOutputBytes).toBe(windowsOutputBytes(cap));
    expect(command.maxOutputBytes).toBeLessThan(Math.ceil((cap * 4) / 3) + 64);
  });

  it('CLIP-2 the script reads the PNG format before the bitmap conversion, checks the cap, and prints Base64', () => {
    const script = decodeScript(windowsClipboardArgs(1234567));
    const png = script.indexOf("$data.GetDataPresent('PNG')");
    const bitmap = script.indexOf('[System.Windows.Forms.Clipboard]::GetImage()');
    expect(png).toBeGreaterThan(0);
    expect(bitmap).toBeGreaterThan(png);
    expect(script).toContain('$limit = 1234567');
    expect(script).toContain('if ($png.Length -gt $limit) { [Console]::Out.Write("TOO-LARGE $($png.Length)"); exit 0 }');
    expect(script).toContain('[Console]::Out.Write([Convert]::ToBase64String($bytes))');
    expect(script.indexOf('if ($bytes.Length -gt $limit)')).toBeLessThan(script.indexOf('ToBase64String'));
  });

  it('CLIP-2 a bitmap converted to PNG is accepted', async () => {
    const png = await makeImage('png', 5, 5);
    const image = await read(fakePowerShell(answer(`BITMAP\n${png.toString('base64')}`)).run);
    expect(Buffer.from(image.bytes).equals(png)).toBe(true);
  });

  it('CLIP-6 NONE is no_image', async () => {
    expect((await refusal(read(fakePowerShell(answer('NONE')).run))).kind).toBe('no_image');
  });

  it('CLIP-5 CLIP-6 TOO-LARGE from PowerShell is too_large with the size', async () => {
    const error = await refusal(read(fakePowerShell(answer('TOO-LARGE 31457280')).run));
    expect(error.kind).toBe('too_large');
    expect(error.message).toBe('The clipboard image exceeds the 20 MiB host limit (it is 30 MiB).');
  });

  it('CLIP-5 output passing the bound (the runner killed PowerShell) is too_large', async () => {
    const fake = fakePowerShell(answer('PNG\nAAAA', { overflow: true, code: null, signal: 'SIGKILL' }));
    expect((await refusal(read(fake.run))).kind).toBe('too_large');
  });

  it('CLIP-6 Base64 of bytes that are no image is unsupported', async () => {
    const error = await refusal(
      read(fakePowerShell(answer(`PNG\n${Buffer.from('hello, not an image').toString('base64')}`)).run),
    );
    expect(error.kind).toBe('unsupported');
  });

  it('CLIP-6 malformed Base64 or an unknown status is reader_failed', async () => {
    expect((await refusal(read(fakePowerShell(answer('PNG\n@@@not base64@@@')).run))).kind).toBe('reader_failed');
    const odd = await refusal(read(fakePowerShell(answer('WHAT')).run));
    expect(odd.kind).toBe('reader_failed');
    expect(odd.message).toContain('"WHAT"');
  });

  it('CLIP-6 PowerShell exiting non-zero is reader_failed with its stderr', async () => {
    const fake = fakePowerShell(
      answer('', { code: 1, stderr: 'Current thread must be set to single thread apartment (STA) mode.\r\n' }),
    );
    const error = await refusal(read(fake.run));
    expect(error.kind).toBe('reader_failed');
    expect(error.message).toBe(
      'The clipboard reader powershell failed: Current thread must be set to single thread apartment (STA) mode.',
    );
  });

  it('CLIP-6 CLIP-7 a missing PowerShell is no_reader', async () => {
    const error = await refusal(read(fakePowerShell(answer('', { found: false, code: null })).run));
    expect(error.kind).toBe('no_reader');
    expect(error.message).toContain('Windows PowerShell');
  });

  it('CLIP-1 without SystemRoot the command is powershell.exe', () => {
    expect(powershellPath({})).toBe('powershell.exe');
    expect(powershellPath({ windir: 'D:\\Win' })).toBe('D:\\Win\\System32\\WindowsPowerShell\\v1.0\\powershell.exe');
  });

  it('CLIP-2 the parser tolerates a BOM and CRLF line ends, and refuses decoded bytes over the cap', () => {
    const bytes = Buffer.from([1, 2, 3, 4, 5, 6]);
    expect(Buffer.from(parseWindowsOutput(`\uFEFFPNG\r\n${bytes.toString('base64')}\r\n`, 100).bytes).equals(bytes)).toBe(true);
    expect(() => parseWindowsOutput(`PNG\n${bytes.toString('base64')}`, 5)).toThrow(/exceeds the 5 bytes host limit/);
  });
});
