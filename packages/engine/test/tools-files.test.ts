import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParsedToolCall, ToolExecutor } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { resolvePath } from '../src/tools/fence.js';
import { createBuiltinTools } from '../src/tools/catalog.js';
import { BINARY_REFUSAL, builtinExceptionMapper, type ToolHost, TodoStore } from '../src/tools/builtin/index.js';

function workspace(): { base: string; ws: string; host: ToolHost } {
  const base = mkdtempSync(join(tmpdir(), 'crystal-files-'));
  const ws = join(base, 'ws');
  mkdirSync(ws);
  writeFileSync(join(base, 'outside.txt'), 'outside line\n');
  return { base, ws, host: { workspace: ws, bashTimeoutMs: null, todos: new TodoStore(), rgPath: null } };
}

async function call(h: ToolHost, name: string, input: unknown) {
  const executor = new ToolExecutor({ tools: createBuiltinTools(h), mapException: builtinExceptionMapper });
  const parsed: ParsedToolCall = { id: 'c1', name, arguments: JSON.stringify(input), input };
  const [result] = await executor.runBatch([parsed], new AbortController().signal);
  return { text: result?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '', isError: result?.isError };
}

describe('read', () => {
  it('TOOLS-2 numbers lines as %6d|<line> and pages with a 1-based offset and a limit', async () => {
    const { ws, host } = workspace();
    writeFileSync(join(ws, 'f.txt'), 'alpha\nbeta\r\ngamma\ndelta');
    expect(await call(host, 'read', { path: 'f.txt' })).toEqual({
      text: '     1|alpha\n     2|beta\n     3|gamma\n     4|delta',
      isError: false,
    });
    expect((await call(host, 'read', { path: 'f.txt', offset: 2, limit: 2 })).text).toBe(
      '     2|beta\n     3|gamma\n[truncated after 3 lines; file has at least 4 lines]',
    );
    expect((await call(host, 'read', { path: 'f.txt', offset: 4 })).text).toBe('     4|delta');
  });

  it('TOOLS-2 an empty file, an offset past the end, a folder and a missing file', async () => {
    const { ws, host } = workspace();
    writeFileSync(join(ws, 'empty.txt'), '');
    writeFileSync(join(ws, 'f.txt'), 'a\nb\n');
    expect(await call(host, 'read', { path: 'empty.txt' })).toEqual({ text: '(empty file)', isError: false });
    expect(await call(host, 'read', { path: 'f.txt', offset: 3 })).toEqual({
      text: 'File has 2 lines; offset 3 is past the end.',
      isError: true,
    });
    expect((await call(host, 'read', { path: '.' })).text).toBe('. is a folder; use list to see its entries.');
    expect((await call(host, 'read', { path: 'nope.txt' })).text).toBe('File not found: nope.txt.');
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    expect(await call(host, 'read', { path: 'pipe' })).toEqual({
      text: 'pipe is not a regular file (a FIFO) and will not be read.',
      isError: true,
    });
    expect((await call(host, 'read', { path: '/proc/self/status' })).text).toMatch(/^ {5}1\|Name:/);
  });

  it('TOOLS-2 refuses binary files (a NUL byte in the first 8 KiB) and sends images to view_image', async () => {
    const { ws, host } = workspace();
    writeFileSync(join(ws, 'blob.dat'), Buffer.from([0x61, 0x62, 0x00, 0x63]));
    writeFileSync(join(ws, 'late-nul.txt'), Buffer.concat([Buffer.alloc(9000, 'a'), Buffer.from([0])]));
    writeFileSync(join(ws, 'pic'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]));
    expect(await call(host, 'read', { path: 'blob.dat' })).toEqual({ text: BINARY_REFUSAL, isError: true });
    expect((await call(host, 'read', { path: 'late-nul.txt' })).isError).toBe(false);
    const image = await call(host, 'read', { path: 'pic' });
    expect(image.isError).toBe(true);
    expect(image.text).toBe('pic is an image; read only returns text. Use view_image to look at it.');
  });

  it('TOOLS-3 refuses credential paths', async () => {
    const { ws, host } = workspace();
    writeFileSync(join(ws, '.env'), 'KEY=1\n');
    mkdirSync(join(ws, '.ssh'));
    writeFileSync(join(ws, '.ssh', 'config'), 'Host x\n');
    expect(await call(host, 'read', { path: '.env' })).toEqual({
      text: '.env is a credentials path; reading it is refused.',
      isError: true,
    });
    expect((await call(host, 'read', { path: '.ssh/config' })).isError).toBe(true);
    expect((await call(host, 'write', { path: '.env', contents: 'x' })).isError).toBe(true);
  });

  it('TOOLS-3 a path through .. or a link out is read by the tool but the fence calls it outside (approval decides)', async () => {
    const { base, ws, host } = workspace();
    symlinkSync(join(base, 'outside.txt'), join(ws, 'link-out.txt'));
    expect(await call(host, 'read', { path: '../outside.txt' })).toEqual({ text: '     1|outside line', isError: false });
    expect(await call(host, 'read', { path: 'link-out.txt' })).toEqual({ text: '     1|outside line', isError: false });
    expect(resolvePath(ws, '../outside.txt')).toMatchObject({ inside: false, real: join(base, 'outside.txt') });
    expect(resolvePath(ws, 'link-out.txt')).toMatchObject({ inside: false, real: join(base, 'outside.txt') });
  });

  it('TOOLS-2 a 50 MB file is streamed: the first lines come back with the truncation note', async () => {
    const { ws, host } = workspace();
    const line = (i: number): string => `${String(i).padStart(9, '0')} ${'x'.repeat(40)}\n`;
    const count = 1_000_000;
    const parts: string[] = [];
    for (let i = 1; i <= count; i++) parts.push(line(i));
    writeFileSync(join(ws, 'big.txt'), parts.join(''));
    expect(statSync(join(ws, 'big.txt')).size).toBeGreaterThan(50_000_000);
    const result = await call(host, 'read', { path: 'big.txt' });
    const lines = result.text.split('\n');
    expect(lines[0]).toBe(`     1|000000001 ${'x'.repeat(40)}`);
    const shown = lines.length - 1;
    expect(shown).toBeGreaterThan(1000);
    expect(lines.at(-1)).toBe(`[truncated after ${shown} lines; file has at least ${shown + 1} lines]`);
    expect(result.text.length).toBeLessThanOrEqual(100_000);
    expect((await call(host, 'read', { path: 'big.txt', offset: 999_999, limit: 5 })).text).toBe(
      `999999|000999999 ${'x'.repeat(40)}\n1000000|001000000 ${'x'.repeat(40)}`,
    );
    expect((await call(host, 'read', { path: 'big.txt', offset: count + 1 })).text).toBe(
      `File has ${count} lines; offset ${count + 1} is past the end.`,
    );
  });

  it('TOOLS-2 one line longer than the output cap is cut and says so, not buffered whole', async () => {
    const { ws, host } = workspace();
    writeFileSync(join(ws, 'wide.txt'), `${'y'.repeat(3_000_000)}\nsecond\n`);
    const result = await call(host, 'read', { path: 'wide.txt' });
    expect(result.text).toBe(`     1|${'y'.repeat(99_700)} [line cut at 99700 characters]\n     2|second`);
    expect((await call(host, 'read', { path: 'wide.txt', offset: 2 })).text).toBe('     2|second');
  });

  it('TOOLS-2 a bad argument type is a model-visible error naming the field', async () => {
    const { host } = workspace();
    expect(await call(host, 'read', { path: 3 })).toEqual({
      text: "Invalid argument 'path' for 'read': expected string, received number.",
      isError: true,
    });
    expect((await call(host, 'read', { path: 'f', offset: 'ten' })).text).toBe(
      "Invalid argument 'offset' for 'read': expected number, received string.",
    );
    expect((await call(host, 'read', { path: 'f', offset: 0 })).text).toBe(
      "Invalid argument 'offset' for 'read': expected number to be >=1.",
    );
    expect((await call(host, 'read', 'f.txt')).text).toBe(
      "The arguments of 'read' must be a JSON object (expected object, received string).",
    );
  });
});

describe('write', () => {
  it('TOOLS-2 creates parent folders, reports Created/Wrote with the character count and a diff', async () => {
    const { ws, host } = workspace();
    const created = await call(host, 'write', { path: 'src/deep/new.ts', contents: 'one\ntwo\n' });
    expect(created.isError).toBe(false);
    expect(created.text.split('\n')[0]).toBe('Created src/deep/new.ts (8 characters).');
    expect(created.text).toContain('+++ b/src/deep/new.ts');
    expect(created.text).toContain('+two');
    expect(readFileSync(join(ws, 'src/deep/new.ts'), 'utf8')).toBe('one\ntwo\n');
    expect(statSync(join(ws, 'src/deep')).mode & 0o777).toBe(0o777 & ~process.umask());
    const wrote = await call(host, 'write', { path: 'src/deep/new.ts', contents: 'one\nTWO\n' });
    expect(wrote.text.split('\n')[0]).toBe('Wrote src/deep/new.ts (8 characters).');
    expect(wrote.text).toContain('-two\n+TWO');
    expect(readdirSync(join(ws, 'src/deep'))).toEqual(['new.ts']);
  });

  it('TOOLS-2 keeps the mode of an existing file and writes through a link to its target', async () => {
    const { ws, host } = workspace();
    writeFileSync(join(ws, 'run.sh'), 'echo 1\n');
    chmodSync(join(ws, 'run.sh'), 0o751);
    symlinkSync(join(ws, 'run.sh'), join(ws, 'alias.sh'));
    await call(host, 'write', { path: 'alias.sh', contents: 'echo 2\n' });
    expect(readFileSync(join(ws, 'run.sh'), 'utf8')).toBe('echo 2\n');
    expect(statSync(join(ws, 'run.sh')).mode & 0o7777).toBe(0o751);
    expect(lstatSync(join(ws, 'alias.sh')).isSymbolicLink()).toBe(true);
  });

  it('TOOLS-2 refuses more than 2 MiB and caps the diff at 60 lines', async () => {
    const { host } = workspace();
    const big = await call(host, 'write', { path: 'big.txt', contents: 'x'.repeat(2 * 1024 * 1024 + 1) });
    expect(big).toEqual({
      text: 'contents is 2097153 bytes; write takes at most 2097152 bytes (2 MiB). Split the file.',
      isError: true,
    });
    const many = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n');
    const result = await call(host, 'write', { path: 'many.txt', contents: many });
    const lines = result.text.split('\n');
    expect(lines).toHaveLength(62);
    expect(lines.at(-1)).toMatch(/^\[diff cut: \d+ more lines\]$/);
  });
});

describe('edit', () => {
  it('TOOLS-2 replaces one exact unique match and returns Edited <path>. with a diff', async () => {
    const { ws, host } = workspace();
    writeFileSync(join(ws, 'a.ts'), 'const a = 1;\nconst b = 2;\n');
    const result = await call(host, 'edit', { path: 'a.ts', old_string: 'b = 2', new_string: 'b = 3' });
    expect(result.isError).toBe(false);
    expect(result.text.split('\n')[0]).toBe('Edited a.ts.');
    expect(result.text).toContain('-const b = 2;\n+const b = 3;');
    expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toBe('const a = 1;\nconst b = 3;\n');
  });

  it('TOOLS-2 the reference errors: empty, identical, not found, not unique', async () => {
    const { ws, host } = workspace();
    writeFileSync(join(ws, 'a.ts'), 'x x x\n');
    const edit = (old_string: string, new_string: string) => call(host, 'edit', { path: 'a.ts', old_string, new_string });
    expect(await edit('', 'y')).toEqual({ text: 'old_string cannot be empty.', isError: true });
    expect(await edit('x', 'x')).toEqual({ text: 'old_string and new_string are identical.', isError: true });
    expect(await edit('zzz', 'y')).toEqual({ text: 'old_string was not found.', isError: true });
    expect(await edit('x', 'y')).toEqual({ text: 'old_string matches 3 times; it must be unique.', isError: true });
    expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toBe('x x x\n');
    expect((await call(host, 'edit', { path: 'none.ts', old_string: 'a', new_string: 'b' })).text).toBe(
      'File not found: none.ts.',
    );
  });

  it('TOOLS-2 replace_all changes every occurrence', async () => {
    const { ws, host } = workspace();
    writeFileSync(join(ws, 'a.ts'), 'x x x\n');
    const result = await call(host, 'edit', { path: 'a.ts', old_string: 'x', new_string: 'y', replace_all: true });
    expect(result.text.split('\n').slice(0, 2)).toEqual(['Edited a.ts.', 'Replaced 3 occurrences.']);
    expect(readFileSync(join(ws, 'a.ts'), 'utf8')).toBe('y y y\n');
  });

  it('TOOLS-2 matches \\n against CRLF files, keeps their line ends, a BOM and the file mode', async () => {
    const { ws, host } = workspace();
    writeFileSync(join(ws, 'w.txt'), '\uFEFFone\r\ntwo\r\nthree\r\n');
    chmodSync(join(ws, 'w.txt'), 0o640);
    const result = await call(host, 'edit', { path: 'w.txt', old_string: 'one\ntwo', new_string: 'one\n2' });
    expect(result.isError).toBe(false);
    expect(readFileSync(join(ws, 'w.txt'), 'utf8')).toBe('\uFEFFone\r\n2\r\nthree\r\n');
    expect(statSync(join(ws, 'w.txt')).mode & 0o777).toBe(0o640);
  });

  it('TOOLS-2 a bad argument type is an error naming the field', async () => {
    const { host } = workspace();
    expect((await call(host, 'edit', { path: 'a', old_string: 'x', new_string: 'y', replace_all: 'yes' })).text).toBe(
      "Invalid argument 'replace_all' for 'edit': expected boolean, received string.",
    );
  });
});

describe('list', () => {
  it('TOOLS-2 immediate entries sorted, folders with /, skip list and credentials left out, links not entered', async () => {
    const { base, ws, host } = workspace();
    for (const dir of ['src', 'node_modules', 'dist', 'bin', 'obj', '.git', '.vs', 'Zeta']) mkdirSync(join(ws, dir));
    writeFileSync(join(ws, 'src', 'inner.ts'), '');
    for (const file of ['b.txt', 'a.txt', '.env', 'id_rsa', 'bin.txt']) writeFileSync(join(ws, file), '');
    mkdirSync(join(base, 'away'));
    symlinkSync(join(base, 'away'), join(ws, 'link-dir'));
    expect(await call(host, 'list', {})).toEqual({
      text: ['Zeta/', 'a.txt', 'b.txt', 'bin.txt', 'link-dir/', 'src/'].join('\n'),
      isError: false,
    });
    expect((await call(host, 'list', { path: 'src' })).text).toBe('inner.ts');
    expect((await call(host, 'list', { path: 'Zeta' })).text).toBe('(empty directory)');
    expect((await call(host, 'list', { limit: 2 })).text).toBe('Zeta/\na.txt\n[showing 2 of 6 entries; continue with offset 2]');
    expect((await call(host, 'list', { offset: 4, limit: 2 })).text).toBe('link-dir/\nsrc/');
    expect((await call(host, 'list', { path: 'a.txt' })).text).toBe('a.txt is a file, not a folder; use read to see it.');
    expect((await call(host, 'list', { path: 'missing' })).text).toBe('Path not found: missing.');
  });
});
