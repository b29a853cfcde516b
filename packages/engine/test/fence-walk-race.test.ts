/**
 * SEC-4 for enumeration: glob and list descend folder by folder; a folder swapped for a link out
 * of the workspace between the fence check and the descent must not list one outside name.
 * Also the `mkdir -p` of a write's missing parents: a parent swapped for a link between the check
 * and the mkdir must not create a folder outside.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolExecutor } from '@crystal/core';
import { afterEach, describe, expect, it } from 'vitest';
import { findRipgrep } from '../src/tools/builtin/ripgrep.js';
import { killRacer, raceCall as call, raceExecutor as executor, startRacer, stopRacer } from './racer.js';

const never = new AbortController().signal;
afterEach(killRacer);

/** Inside names are lower case; every outside name holds OUTSIDE. */
function fixture() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-sec4-walk-')));
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  mkdirSync(join(ws, 'd', 'sub'), { recursive: true });
  mkdirSync(join(outside, 'sub'), { recursive: true });
  mkdirSync(join(outside, 'OUTSIDE-DIR'));
  writeFileSync(join(ws, 'd', 'inside.txt'), 'inside\n');
  writeFileSync(join(ws, 'd', 'sub', 'inside-deep.txt'), 'inside\n');
  writeFileSync(join(outside, 'OUTSIDE-ONLY.txt'), 'secret\n');
  writeFileSync(join(outside, 'sub', 'OUTSIDE-DEEP.txt'), 'secret\n');
  writeFileSync(join(outside, 'OUTSIDE-DIR', 'OUTSIDE-NESTED.txt'), 'secret\n');
  return { base, ws, outside };
}

async function text(tools: ToolExecutor, name: string, input: Record<string, unknown>): Promise<string> {
  const [result] = await tools.runBatch([call(name, input)], never);
  return result?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';
}

describe('a walk lists only the folders that were checked (SEC-4)', () => {
  it('SEC-4 1,500 lists raced by a process swapping a folder for a link out: 0 outside names', async () => {
    const { base, ws, outside } = fixture();
    const tools = executor('default', ws, join(base, 'home'));
    await startRacer(ws, outside);
    let outsideNames = 0;
    let insideNames = 0;
    for (let i = 0; i < 500; i++) {
      for (const path of ['d', 'd/sub', '.']) {
        const out = await text(tools, 'list', { path });
        if (out.includes('OUTSIDE')) outsideNames++;
        if (out.includes('inside')) insideNames++;
      }
    }
    expect(outsideNames, `${insideNames} inside listings`).toBe(0);
    expect(insideNames, `${outsideNames} outside listings`).toBeGreaterThan(0);
  });

  for (const [label, rg] of [
    ['the walker', null],
    ['ripgrep', findRipgrep()],
  ] as Array<[string, string | null]>) {
    it.runIf(label === 'the walker' || rg !== null)(
      `SEC-4 600 globs with ${label} raced the same way: 0 outside names`,
      async () => {
        const { base, ws, outside } = fixture();
        const tools = executor('default', ws, join(base, 'home'), rg);
        await startRacer(ws, outside);
        let outsideNames = 0;
        let insideNames = 0;
        for (let i = 0; i < 300; i++) {
          for (const input of [{ pattern: '**/*' }, { pattern: '**/*', path: 'd' }]) {
            const out = await text(tools, 'glob', input);
            if (out.includes('OUTSIDE')) outsideNames++;
            if (out.includes('inside')) insideNames++;
          }
        }
        expect(outsideNames, `${insideNames} inside listings`).toBe(0);
        expect(insideNames, `${outsideNames} outside listings`).toBeGreaterThan(0);
      },
    );
  }
});

describe("a write's missing parent folders are made inside the checked folder (SEC-4)", () => {
  it('SEC-4 1,000 writes needing new parent folders, raced the same way: no folder made outside', async () => {
    const { base, ws, outside } = fixture();
    const tools = executor('edit', ws, join(base, 'home'));
    await startRacer(ws, outside);
    let written = 0;
    for (let i = 0; i < 1000; i++) {
      const out = await text(tools, 'write', { path: `d/new-${i}/deeper/file.txt`, contents: 'x' });
      if (out.startsWith('Created d/new-')) written++;
    }
    await stopRacer(ws);
    expect(readdirSync(outside).sort(), `${written} raced writes got through`).toEqual([
      'OUTSIDE-DIR',
      'OUTSIDE-ONLY.txt',
      'sub',
    ]);
    expect(readdirSync(join(outside, 'sub'))).toEqual(['OUTSIDE-DEEP.txt']);
    // How many raced writes got through depends on the machine's load (a folder renamed while it
    // is verified is refused too); with the race over, a write needing new parents works.
    expect(await text(tools, 'write', { path: 'd/after/the/race.txt', contents: 'x' })).toMatch(
      /^Created d\/after\/the\/race\.txt/,
    );
    expect(readFileSync(join(ws, 'd', 'after', 'the', 'race.txt'), 'utf8')).toBe('x');
  });
});
