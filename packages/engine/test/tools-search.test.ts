import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParsedToolCall, ToolExecutor } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { resolvePath } from '../src/tools/fence.js';
import { createBuiltinTools } from '../src/tools/catalog.js';
import { builtinExceptionMapper, findRipgrep, type ToolHost, TodoStore } from '../src/tools/builtin/index.js';
import { ripgrepMatches, walkerMatches } from '../src/tools/builtin/grep.js';
import { compilePattern } from '../src/tools/builtin/pattern.js';
import { ripgrepFiles, verifiedFiles } from '../src/tools/builtin/file-list.js';
import { searchScope, WALK_YIELD_DIRS, walkFiles } from '../src/tools/builtin/walker.js';

function put(path: string, data: string | Buffer): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, data);
}

/** A hostile workspace: ignored files, skipped folders, links out, binaries, a big file, credentials. */
function fixture(): { base: string; ws: string } {
  const base = mkdtempSync(join(tmpdir(), 'crystal-search-'));
  const ws = join(base, 'ws');
  put(join(base, 'outside', 'secret.txt'), 'needle outside\n');
  put(join(base, 'outside', 'dir', 'deep.ts'), 'needle deep outside\n');
  put(join(ws, '.gitignore'), 'ignored.txt\n*.log\n!keep.log\nbuild/\n');
  put(join(ws, 'a.ts'), 'const needle = 1;\nfunction foo() {}\nneedle again\n');
  put(join(ws, 'a', 'b.ts'), 'export const x = "needle";\n');
  put(join(ws, 'a.txt'), 'no match here\n');
  put(join(ws, 'B.md'), '# Needle in caps\n');
  put(join(ws, 'ignored.txt'), 'needle\n');
  put(join(ws, 'x.log'), 'needle\n');
  put(join(ws, 'keep.log'), 'needle kept by negation\n');
  put(join(ws, 'build', 'out.js'), 'needle\n');
  put(join(ws, 'node_modules', 'pkg', 'index.js'), 'needle\n');
  put(join(ws, 'dist', 'x.js'), 'needle\n');
  put(join(ws, 'bin', 'x.sh'), 'needle\n');
  put(join(ws, 'obj', 'x.cs'), 'needle\n');
  put(join(ws, '.vs', 'x'), 'needle\n');
  put(join(ws, '.git', 'config'), 'needle\n');
  put(join(ws, '.hidden', 'h.ts'), 'hidden needle\n');
  put(join(ws, 'sub', '.gitignore'), 'local.ts\n');
  put(join(ws, 'sub', 'local.ts'), 'needle\n');
  put(join(ws, 'sub', 'kept.ts'), 'needle in sub\n');
  put(join(ws, 'sub', 'y.log'), 'needle in a log under sub\n');
  put(join(ws, 'sub', 'inner', '.gitignore'), '!local.ts\n');
  put(join(ws, 'sub', 'inner', 'local.ts'), 'needle re-included\n');
  put(join(ws, 'data.bin'), Buffer.concat([Buffer.from('needle\n'), Buffer.from([0, 1, 2]), Buffer.from('\nneedle\n')]));
  put(join(ws, 'crlf.txt'), 'needle\r\nsecond\r\n');
  put(join(ws, '.env'), 'API_KEY=needle\n');
  put(join(ws, 'keys', 'server.pem'), 'needle\n');
  symlinkSync(join(base, 'outside'), join(ws, 'link-out'));
  symlinkSync(join(base, 'outside', 'secret.txt'), join(ws, 'link-file'));
  symlinkSync(join(ws, 'a.ts'), join(ws, 'link-in.ts'));
  return { base, ws };
}

const NEEDLE_LINES = [
  '.hidden/h.ts:1:hidden needle',
  'a/b.ts:1:export const x = "needle";',
  'a.ts:1:const needle = 1;',
  'a.ts:3:needle again',
  'crlf.txt:1:needle',
  'keep.log:1:needle kept by negation',
  'sub/inner/local.ts:1:needle re-included',
  'sub/kept.ts:1:needle in sub',
];

const ALL_FILES = [
  '.gitignore',
  '.hidden/h.ts',
  'B.md',
  'a/b.ts',
  'a.ts',
  'a.txt',
  'crlf.txt',
  'data.bin',
  'keep.log',
  'sub/.gitignore',
  'sub/inner/.gitignore',
  'sub/inner/local.ts',
  'sub/kept.ts',
];

async function call(h: ToolHost, name: string, input: unknown) {
  const executor = new ToolExecutor({ tools: createBuiltinTools(h), mapException: builtinExceptionMapper });
  const parsed: ParsedToolCall = { id: 'c1', name, arguments: JSON.stringify(input), input };
  const [result] = await executor.runBatch([parsed], new AbortController().signal);
  return { text: result?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '', isError: result?.isError };
}

const WAYS = [
  ['ripgrep on PATH', undefined],
  ['built-in walker', null],
] as const;

it('TOOLS-2 ripgrep is installed here, so the ripgrep way really runs', () => {
  expect(findRipgrep()).toBe('/usr/bin/rg');
});

describe.each(WAYS)('glob and grep through the %s', (_way, rgPath) => {
  const open = () => {
    const f = fixture();
    return { ...f, host: { workspace: f.ws, bashTimeoutMs: null, todos: new TodoStore(), rgPath } satisfies ToolHost };
  };

  it('TOOLS-2 grep prints relpath:line:text sorted by path then line, honouring .gitignore, the skip list and binaries', async () => {
    const { host } = open();
    const result = await call(host, 'grep', { pattern: 'needle' });
    expect(result).toEqual({ text: NEEDLE_LINES.join('\n'), isError: false });
  });

  it('TOOLS-3 enumeration never follows links out of the workspace (grep and glob)', async () => {
    const { host, ws } = open();
    const grep = await call(host, 'grep', { pattern: 'outside' });
    expect(grep.text).toBe('No matches.');
    const glob = await call(host, 'glob', { pattern: '**/*' });
    expect(glob.text).not.toContain('link');
    expect(glob.text).not.toContain('secret');
    expect(resolvePath(ws, 'link-out/secret.txt').inside).toBe(false);
  });

  it('TOOLS-2 glob lists files sorted by path with the same rules, credentials and over-size files aside', async () => {
    const { host, ws } = open();
    const result = await call(host, 'glob', { pattern: '**/*' });
    expect(result.text).toBe(ALL_FILES.join('\n'));
    writeFileSync(join(ws, 'huge.txt'), Buffer.alloc(8 * 1024 * 1024 + 1, 'needle\n'));
    expect((await call(host, 'glob', { pattern: 'huge.txt' })).text).toBe('huge.txt');
    expect((await call(host, 'grep', { pattern: 'needle', glob: 'huge.txt' })).text).toBe('No matches.');
    writeFileSync(join(ws, 'edge.txt'), Buffer.alloc(8 * 1024 * 1024, 'needle\n'));
    expect((await call(host, 'grep', { pattern: 'needle', glob: 'edge.txt' })).text).toContain('edge.txt:1:needle');
  });

  it('TOOLS-2 glob matches the relative path, or the base name when the pattern has no slash, and pages', async () => {
    const { host } = open();
    expect((await call(host, 'glob', { pattern: '*.ts' })).text).toBe(
      ['.hidden/h.ts', 'a/b.ts', 'a.ts', 'sub/inner/local.ts', 'sub/kept.ts'].join('\n'),
    );
    expect((await call(host, 'glob', { pattern: 'sub/*.ts' })).text).toBe('sub/kept.ts');
    expect((await call(host, 'glob', { pattern: '*.ts', path: 'sub' })).text).toBe('sub/inner/local.ts\nsub/kept.ts');
    expect((await call(host, 'glob', { pattern: '*.ts', limit: 2 })).text).toBe(
      '.hidden/h.ts\na/b.ts\n[showing 2 of 5 files; continue with offset 2]',
    );
    expect((await call(host, 'glob', { pattern: '*.ts', offset: 4, limit: 2 })).text).toBe('sub/kept.ts');
    expect((await call(host, 'glob', { pattern: '*.nothing' })).text).toBe("No files match '*.nothing'.");
  });

  it('TOOLS-2 grep filters by a glob on the relative path or the base name', async () => {
    const { host } = open();
    expect((await call(host, 'grep', { pattern: 'needle', glob: '*.ts' })).text).toBe(
      NEEDLE_LINES.filter((l) => /^[^:]*\.ts:/.test(l)).join('\n'),
    );
    expect((await call(host, 'grep', { pattern: 'needle', glob: 'sub/**' })).text).toBe(
      'sub/inner/local.ts:1:needle re-included\nsub/kept.ts:1:needle in sub',
    );
  });

  it('TOOLS-2 grep in a sub-folder still honours the .gitignore above it, and a named file is searched as is', async () => {
    const { host } = open();
    expect((await call(host, 'grep', { pattern: 'needle', path: 'sub' })).text).toBe(
      'sub/inner/local.ts:1:needle re-included\nsub/kept.ts:1:needle in sub',
    );
    expect((await call(host, 'grep', { pattern: 'needle', path: 'a.ts' })).text).toBe(
      'a.ts:1:const needle = 1;\na.ts:3:needle again',
    );
    expect((await call(host, 'grep', { pattern: 'needle', path: 'build' })).text).toBe('build/out.js:1:needle');
  });

  it('TOOLS-2 grep takes (?i), look-ahead and other JavaScript regular expressions', async () => {
    const { host } = open();
    expect((await call(host, 'grep', { pattern: '(?i)^# NEEDLE' })).text).toBe('B.md:1:# Needle in caps');
    expect((await call(host, 'grep', { pattern: 'need(?=le again)' })).text).toBe('a.ts:3:needle again');
    expect((await call(host, 'grep', { pattern: '^needle$' })).text).toBe('crlf.txt:1:needle');
    expect((await call(host, 'grep', { pattern: 'zzz-not-there' })).text).toBe('No matches.');
  });

  it('TOOLS-2 an invalid regular expression is a model-visible error naming the pattern', async () => {
    const { host } = open();
    const result = await call(host, 'grep', { pattern: 'foo(' });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^Invalid regular expression 'foo\(': Unterminated group\./);
  });

  it('TOOLS-2 grep stops at 500 matches and says so', async () => {
    const { host, ws } = open();
    writeFileSync(join(ws, 'many.txt'), 'hit\n'.repeat(600));
    const result = await call(host, 'grep', { pattern: '^hit$' });
    const lines = result.text.split('\n');
    expect(lines).toHaveLength(501);
    expect(lines[0]).toBe('many.txt:1:hit');
    expect(lines[499]).toBe('many.txt:500:hit');
    expect(lines[500]).toBe('[truncated to 500 matches]');
  });

  it('TOOLS-2 a bad argument type is an error naming the field', async () => {
    const { host } = open();
    expect(await call(host, 'grep', { pattern: 7 })).toEqual({
      text: "Invalid argument 'pattern' for 'grep': expected string, received number.",
      isError: true,
    });
    expect((await call(host, 'glob', { pattern: '*', limit: 5000 })).text).toBe(
      "Invalid argument 'limit' for 'glob': expected number to be <=1000.",
    );
  });
});

describe('ripgrep and the walker agree', () => {
  it('TOOLS-2 the ripgrep path itself (no fallback) yields exactly what the walker yields', async () => {
    const { ws } = fixture();
    const rg = findRipgrep() as string;
    for (const path of ['.', 'sub', 'a']) {
      const scope = await searchScope(ws, path);
      const viaRg: string[] = [];
      for await (const file of ripgrepFiles(scope, rg, undefined)) viaRg.push(file.rel);
      const viaWalker: string[] = [];
      for await (const file of walkFiles(scope)) viaWalker.push(file.rel);
      expect(viaRg).toEqual(viaWalker);
      for (const pattern of ['needle', '(?i)NEEDLE', 'x\\s*=', '\\d']) {
        const compiled = compilePattern(pattern);
        const a: string[] = [];
        for await (const m of ripgrepMatches(scope, compiled, undefined, rg)) a.push(`${m.absolute}:${m.line}:${m.text}`);
        const b: string[] = [];
        for await (const m of walkerMatches(scope, compiled, undefined)) b.push(`${m.absolute}:${m.line}:${m.text}`);
        expect(a, `${path} ${pattern}`).toEqual(b);
        if (pattern === 'needle' && path === '.') expect(a.length).toBe(NEEDLE_LINES.length);
      }
    }
  });

  it('TOOLS-2 a catastrophic pattern cannot freeze the engine: the walker stops it with an error naming it', async () => {
    const { ws } = fixture();
    writeFileSync(join(ws, 'evil.txt'), `${'a'.repeat(40)}!\n`);
    const h: ToolHost = { workspace: ws, bashTimeoutMs: null, todos: new TodoStore(), rgPath: null };
    expect(await call(h, 'grep', { pattern: '(a+)+$', path: 'evil.txt' })).toEqual({
      text: "The regular expression '(a+)+$' took too long on evil.txt; simplify it (nested quantifiers such as (a+)+ backtrack without end).",
      isError: true,
    });
    // ripgrep's engine does not backtrack and reports no candidate line, so that way answers at once.
    expect((await call({ ...h, rgPath: undefined }, 'grep', { pattern: '(a+)+$', glob: 'evil.txt' })).text).toBe('No matches.');
  });

  it('TOOLS-2 a pattern ripgrep cannot compile makes the ripgrep path throw, so grep falls back to the walker', async () => {
    const { ws } = fixture();
    const scope = await searchScope(ws, '.');
    const run = async () => {
      for await (const _ of ripgrepMatches(scope, compilePattern('(a)\\1'), undefined, findRipgrep() as string)) {
        // nothing
      }
    };
    await expect(run()).rejects.toThrow(/ripgrep failed/);
  });
});

/** Event-loop turns while `run` runs (a key press or a frame would be handled in one of them). */
async function turnsDuring(run: () => Promise<void>): Promise<number> {
  let turns = 0;
  let running = true;
  const tick = (): void => {
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    await run();
  } finally {
    running = false;
  }
  return turns;
}

describe('the walker keeps the event loop running', () => {
  it(`TOOLS-2 a walk lets the event loop run every ${WALK_YIELD_DIRS} folders (folders are listed synchronously), and lists every file`, async () => {
    const ws = mkdtempSync(join(tmpdir(), 'crystal-walk-live-'));
    const folders = WALK_YIELD_DIRS * 3 + 5;
    for (let d = 0; d < folders; d++) put(join(ws, `d${String(d).padStart(4, '0')}`, 'f.ts'), 'x\n');
    const scope = await searchScope(ws, '.');
    const files: string[] = [];
    const turns = await turnsDuring(async () => {
      for await (const file of walkFiles(scope)) files.push(file.rel);
    });
    expect(files).toHaveLength(folders);
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  it(`TOOLS-2 SEC-4 checking what ripgrep listed lets the event loop run every ${WALK_YIELD_DIRS} folders, even when one read of its output names hundreds`, async () => {
    const ws = mkdtempSync(join(tmpdir(), 'crystal-rg-live-'));
    const folders = WALK_YIELD_DIRS * 5 + 3;
    const listed = Array.from({ length: folders }, (_, d) => {
      put(join(ws, `d${d}`, 'f'), 'x\n');
      return { absolute: join(ws, `d${d}`, 'f'), rel: `d${d}/f` };
    });
    // One batch naming every folder, as when ripgrep's whole listing arrives in one read.
    let kept: readonly unknown[] = [];
    const turns = await turnsDuring(async () => {
      kept = await verifiedFiles(listed, new Map());
    });
    expect(kept).toHaveLength(folders);
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});
