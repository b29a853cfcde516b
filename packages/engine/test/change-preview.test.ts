import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changePreview, parseUnifiedPatch, resultDiffLines } from '../src/change-preview.js';
import { createApprovalPolicy, declinedWithFeedbackText, grantScopeText } from '../src/approval/index.js';

const ws = (): string => mkdtempSync(join(tmpdir(), 'crystal-preview-'));

describe('change previews (TUIX-10)', () => {
  it('TUIX-10 an edit is numbered from the file, with three lines of context and its indentation', async () => {
    const dir = ws();
    writeFileSync(join(dir, 'a.py'), ['def f():', '    x = 1', '    y = 2', '    z = 3', '    return x', ''].join('\n'));
    const lines = await changePreview(dir, 'edit', { path: 'a.py', old_string: '    z = 3', new_string: '    z = 30' });
    expect(lines).toEqual([
      '@@ -1,5 +1,5 @@',
      '  1 │ def f():',
      '  2 │     x = 1',
      '  3 │     y = 2',
      '- 4 │     z = 3',
      '+ 4 │     z = 30',
      '  5 │     return x',
    ]);
  });

  it('TUIX-10 CRLF files match an LF old_string, replace_all changes every occurrence, an ambiguous edit has no preview', async () => {
    const dir = ws();
    writeFileSync(join(dir, 'w.txt'), 'a\r\nb\r\na\r\n');
    const crlf = await changePreview(dir, 'edit', { path: 'w.txt', old_string: 'b\n', new_string: 'B\n' });
    expect(crlf).toContain('+ 2 │ B');
    expect(crlf?.join('')).not.toContain('\r');
    expect(await changePreview(dir, 'edit', { path: 'w.txt', old_string: 'a', new_string: 'c' })).toBeUndefined();
    const all = await changePreview(dir, 'edit', { path: 'w.txt', old_string: 'a', new_string: 'c', replace_all: true });
    expect(all?.filter((l) => l.startsWith('+'))).toHaveLength(2);
  });

  it('TUIX-10 only the final newline changing is one context line and a note, never a stray +', async () => {
    const dir = ws();
    writeFileSync(join(dir, 'n.txt'), 'one\ntwo');
    const lines = await changePreview(dir, 'write', { path: 'n.txt', contents: 'one\ntwo\n' });
    expect(lines).toEqual(['@@ -1,2 +1,2 @@', '  1 │ one', '  2 │ two', '\\ Newline added at end of file']);
  });

  it('TUIX-10 the patch in an edit result parses into the same numbered rows', () => {
    const output = 'Edited a.txt.\n--- a/a.txt\n+++ b/a.txt\n@@ -3,2 +3,3 @@\n keep\n-old\n+new\n+more\n';
    expect(resultDiffLines(output)).toEqual(['@@ -3,2 +3,3 @@', '  3 │ keep', '- 4 │ old', '+ 4 │ new', '+ 5 │ more']);
    expect(parseUnifiedPatch('no patch here')).toEqual([]);
  });
});

describe('deny with feedback (TUIX-12)', () => {
  it('TUIX-12 a denial with feedback gives the model the instruction; the card says what a grant covers', async () => {
    const dir = ws();
    const policy = createApprovalPolicy({
      mode: 'default',
      plan: () => false,
      workspace: dir,
      home: ws(),
      ask: async () => ({ answer: 'deny', feedback: '  use the existing helper  ' }),
    });
    const call = { id: 'c1', name: 'bash', arguments: '{}', input: { command: 'make clean' } };
    const decision = await policy.decide(call, new AbortController().signal);
    expect(decision).toEqual({ allow: false, reason: declinedWithFeedbackText('use the existing helper') });
    expect(declinedWithFeedbackText('use the existing helper')).toContain('\nuse the existing helper\n');
    expect(grantScopeText(call)).toContain('bash running exactly `make clean` in this workspace');
    expect(grantScopeText({ id: 'c2', name: 'todowrite', arguments: '{}', input: {} })).toContain('every todowrite call');
  });
});
