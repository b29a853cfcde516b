import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rankPaths, WorkspaceFileIndex } from '../src/file-mentions.js';
import { findRipgrep } from '../src/tools/builtin/index.js';

/** A workspace with ignored folders at two depths, a negation, a skip folder and a credential. */
function workspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'crystal-mentions-'));
  const put = (rel: string, text = ''): void => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  mkdirSync(join(root, '.git'));
  put('.gitignore', 'build/\n*.log\n');
  put('src/app/main.ts');
  put('src/app/main.test.ts');
  put('src/lib/util.ts');
  put('src/lib/.gitignore', 'generated/\n!keep.log\n');
  put('src/lib/generated/out.ts');
  put('src/lib/keep.log');
  put('src/lib/debug.log');
  put('build/main.js');
  put('node_modules/pkg/main.js');
  put('docs/guide.md');
  put('.env');
  for (let i = 0; i < 300; i++) put(`many/d${i % 7}/file${i}.ts`);
  return root;
}

describe('@ completion listing (TUIX-5)', () => {
  it('TUIX-5 a cold completion (ranked while ripgrep walks) answers what a warm one (ranked over the listing) does, gitignore rules at every depth kept', async () => {
    const root = workspace();
    const rg = findRipgrep();
    expect(rg).not.toBeNull();
    for (const query of ['main', 'mainTS', 'lib', 'keep', 'file1', 'd3file', 'zzz']) {
      const index = new WorkspaceFileIndex(() => root, rg);
      const cold = await index.complete(query);
      const warm = await index.complete(query);
      expect(cold).toEqual(warm);
      expect(cold).toEqual(rankPaths(query, await index.files()));
    }
    const files = [...(await new WorkspaceFileIndex(() => root, rg).files())].sort();
    expect(files).toContain('src/app/main.ts');
    expect(files).toContain('src/lib/keep.log');
    for (const hidden of ['src/lib/generated/out.ts', 'src/lib/debug.log', 'build/main.js', 'node_modules/pkg/main.js', '.env'])
      expect(files).not.toContain(hidden);
    // The walker (no ripgrep) lists the same files.
    const walked = [...(await new WorkspaceFileIndex(() => root, null).files())].sort();
    expect(walked).toEqual(files);
  });
});
