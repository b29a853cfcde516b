import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ParsedToolCall } from '@crystal/core';
import { describe, expect, it } from 'vitest';
import { run } from './security-helpers.js';

let id = 0;
const call = (name: string, input: Record<string, unknown>): ParsedToolCall => ({
  id: `s${++id}`,
  name,
  arguments: JSON.stringify(input),
  input,
});

describe('special files are skipped, never opened (SEC-5)', () => {
  it('SEC-5 read, edit, write, grep, glob and list on a FIFO and a device finish with a clear result', async () => {
    const ws = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-sec5-')));
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    writeFileSync(join(ws, 'a.txt'), 'hello\n');
    const h = run('full', ws, join(ws, '..', 'no-home'), 'once');
    const text = async (c: ParsedToolCall) => {
      const result = await h.call(c);
      return { error: result?.isError, text: result?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') };
    };
    expect(await text(call('read', { path: 'pipe' }))).toEqual({
      error: true,
      text: 'pipe is not a regular file (a FIFO) and will not be read.',
    });
    expect((await text(call('edit', { path: 'pipe', old_string: 'a', new_string: 'b' }))).text).toContain(
      'not a regular file (a FIFO)',
    );
    expect((await text(call('write', { path: 'pipe', contents: 'x' }))).text).toContain('not a regular file (a FIFO)');
    expect((await text(call('grep', { pattern: 'x', path: 'pipe' }))).text).toContain('not a regular file (a FIFO)');
    expect((await text(call('grep', { pattern: 'hello' }))).text).toBe('a.txt:1:hello');
    expect((await text(call('glob', { pattern: '*' }))).text).toBe('a.txt');
    expect((await text(call('list', {}))).text).toContain('pipe');
    // A device outside the workspace, approved by the operator: still never read.
    expect((await text(call('read', { path: '/dev/zero' }))).text).toBe(
      '/dev/zero is not a regular file (a device) and will not be read.',
    );
    expect((await text(call('grep', { pattern: 'x', path: '/dev/zero' }))).text).toContain('not a regular file (a device)');
  });
});
