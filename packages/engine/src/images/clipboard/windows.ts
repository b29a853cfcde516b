/**
 * Windows clipboard images through Windows PowerShell (CLIP-1, CLIP-2): the clipboard's raw
 * `PNG` format first, then the bitmap converted to PNG. PowerShell checks the size against the
 * cap before it prints anything and hands the bytes to the host as Base64 text after a status
 * line; the host's read of that text is bounded by the Base64 length of the cap (CLIP-5).
 *
 * The script goes as `-EncodedCommand` (UTF-16LE Base64), so no quoting rule of the Windows
 * command line can change it. `-STA`: the clipboard API needs a single-threaded apartment.
 */
import { win32 } from 'node:path';
import { exitStatus, type RawClipboardImage, type ReaderContext, runReader } from './context.js';
import { ClipboardError, noImage, readerFailed, tooLarge } from './errors.js';

/** Windows PowerShell under `%SystemRoot%` when known (not a look-alike earlier on PATH), else `powershell.exe`. */
export function powershellPath(env: NodeJS.ProcessEnv): string {
  const root = env.SystemRoot ?? env.SYSTEMROOT ?? env.windir;
  return root ? win32.join(root, 'System32', 'WindowsPowerShell', 'v1.0', 'powershell.exe') : 'powershell.exe';
}

/**
 * Prints one of: `PNG` or `BITMAP`, a newline and the Base64 bytes; `NONE`; `TOO-LARGE <bytes>`.
 * A failure goes to stderr with exit code 1.
 */
export function windowsClipboardScript(maxBytes: number): string {
  return [
    "$ErrorActionPreference = 'Stop'",
    'try {',
    '  Add-Type -AssemblyName System.Windows.Forms',
    '  Add-Type -AssemblyName System.Drawing',
    `  $limit = ${maxBytes}`,
    '  $bytes = $null',
    "  $kind = 'PNG'",
    '  $data = [System.Windows.Forms.Clipboard]::GetDataObject()',
    "  if ($data -ne $null -and $data.GetDataPresent('PNG')) {",
    "    $png = $data.GetData('PNG')",
    '    if ($png -is [System.IO.Stream]) {',
    '      if ($png.Length -gt $limit) { [Console]::Out.Write("TOO-LARGE $($png.Length)"); exit 0 }',
    '      $buffer = New-Object System.IO.MemoryStream',
    '      $png.CopyTo($buffer)',
    '      $bytes = $buffer.ToArray()',
    '    } elseif ($png -is [byte[]]) {',
    '      $bytes = $png',
    '    }',
    '  }',
    '  if ($bytes -eq $null -and [System.Windows.Forms.Clipboard]::ContainsImage()) {',
    "    $kind = 'BITMAP'",
    '    $image = [System.Windows.Forms.Clipboard]::GetImage()',
    '    $buffer = New-Object System.IO.MemoryStream',
    '    $image.Save($buffer, [System.Drawing.Imaging.ImageFormat]::Png)',
    '    $image.Dispose()',
    '    $bytes = $buffer.ToArray()',
    '  }',
    "  if ($bytes -eq $null) { [Console]::Out.Write('NONE'); exit 0 }",
    '  if ($bytes.Length -gt $limit) { [Console]::Out.Write("TOO-LARGE $($bytes.Length)"); exit 0 }',
    '  [Console]::Out.Write("$kind`n")',
    '  [Console]::Out.Write([Convert]::ToBase64String($bytes))',
    '  exit 0',
    '} catch {',
    '  [Console]::Error.WriteLine($_.Exception.Message)',
    '  exit 1',
    '}',
  ].join('\n');
}

export function windowsClipboardArgs(maxBytes: number): string[] {
  const encoded = Buffer.from(windowsClipboardScript(maxBytes), 'utf16le').toString('base64');
  return ['-NoProfile', '-NonInteractive', '-STA', '-EncodedCommand', encoded];
}

/** The longest answer for an image of `maxBytes` bytes: a status line and its Base64. */
export function windowsOutputBytes(maxBytes: number): number {
  return 'BITMAP\r\n'.length + Math.ceil(maxBytes / 3) * 4 + 2;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Parses the script's answer (see `windowsClipboardScript`). */
export function parseWindowsOutput(text: string, maxBytes: number): { bytes: Uint8Array; type: string } {
  const clean = text.replace(/^\uFEFF/, '').trimStart();
  const newline = clean.indexOf('\n');
  const status = (newline === -1 ? clean : clean.slice(0, newline)).trim();
  if (status === 'NONE') throw noImage();
  const large = /^TOO-LARGE (\d+)$/.exec(status);
  if (large) throw tooLarge(maxBytes, Number(large[1]));
  if (status !== 'PNG' && status !== 'BITMAP') {
    throw readerFailed('powershell', '', `it printed an unexpected answer (${JSON.stringify(status.slice(0, 40))})`);
  }
  const base64 = clean.slice(newline + 1).replace(/\s+/g, '');
  if (newline === -1 || base64.length % 4 !== 0 || !BASE64.test(base64)) {
    throw readerFailed('powershell', '', 'its Base64 output is not valid Base64');
  }
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length > maxBytes) throw tooLarge(maxBytes, bytes.length);
  if (bytes.length === 0) throw noImage();
  return { bytes, type: status };
}

export async function readWindowsClipboard(context: ReaderContext): Promise<RawClipboardImage> {
  const maxBytes = context.limits.maxImageBytes;
  const command = powershellPath(context.env);
  const result = await runReader(context, 'powershell', {
    command,
    args: windowsClipboardArgs(maxBytes),
    maxOutputBytes: windowsOutputBytes(maxBytes),
  });
  if (!result.found) {
    throw new ClipboardError('no_reader', `Pasting an image needs Windows PowerShell (${command}), which was not found.`);
  }
  if (result.overflow) throw tooLarge(maxBytes);
  if (result.code !== 0) throw readerFailed('powershell', result.stderr, exitStatus(result));
  const { bytes, type } = parseWindowsOutput(Buffer.from(result.stdout).toString('latin1'), maxBytes);
  return { bytes, reader: 'powershell', type };
}
