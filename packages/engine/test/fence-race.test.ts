import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRipgrep } from '../src/tools/builtin/ripgrep.js';
import { killRacer, raceCall as call, raceExecutor as executor, startRacer } from './racer.js';

const never = new AbortController().signal;
afterEach(killRacer);

function fixture() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-sec4-')));
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  mkdirSync(join(ws, 'd'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(ws, 'd', 'secret.txt'), 'inside text\n');
  writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE SECRET\n');
  return { base, ws, outside };
}

describe('the file a tool opens is the file that was checked (SEC-4)', () => {
  it('SEC-4 2,000 reads raced by a process swapping a folder for a link out: 0 outside reads', async () => {
    const { base, ws, outside } = fixture();
    const tools = executor('default', ws, join(base, 'home'));
    await startRacer(ws, outside, 0.3);
    let outsideReads = 0;
    let insideReads = 0;
    for (let i = 0; i < 2000; i++) {
      const [result] = await tools.runBatch([call('read', { path: 'd/secret.txt' })], never);
      const text = result?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';
      if (text.includes('OUTSIDE')) outsideReads++;
      if (text.includes('inside text')) insideReads++;
    }
    expect(outsideReads, `${insideReads} inside reads`).toBe(0);
    expect(insideReads, `${outsideReads} outside reads`).toBeGreaterThan(0);
  });

  it('SEC-4 2,000 edits and writes raced the same way: 0 outside writes', async () => {
    const { base, ws, outside } = fixture();
    const tools = executor('edit', ws, join(base, 'home'));
    await startRacer(ws, outside, 0.3);
    let written = 0;
    for (let i = 0; i < 2000; i++) {
      // Only the outside file holds SECRET: an edit that finds it wrote outside the fence.
      await tools.runBatch([call('edit', { path: 'd/secret.txt', old_string: 'SECRET', new_string: 'PWNED' })], never);
      if (i % 10 === 0) {
        const [write] = await tools.runBatch([call('write', { path: `d/new-${i}.txt`, contents: 'x' })], never);
        if (write?.isError === false) written++;
      }
    }
    // Under a loaded machine the racer can hold the link state across every one of those 200
    // writes; keep writing (still raced) until one lands, so the test never passes vacuously.
    for (let i = 0; written === 0 && i < 20_000; i++) {
      const [write] = await tools.runBatch([call('write', { path: `d/late-${i}.txt`, contents: 'x' })], never);
      if (write?.isError === false) written++;
    }
    killRacer();
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET\n');
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(written).toBeGreaterThan(0);
  });

  for (const [label, rg] of [
    ['the walker', null],
    ['ripgrep', findRipgrep()],
  ] as Array<[string, string | null]>) {
    it.runIf(label === 'the walker' || rg !== null)(
      `SEC-4 300 greps with ${label} raced the same way: 0 outside matches`,
      async () => {
        const { base, ws, outside } = fixture();
        const tools = executor('default', ws, join(base, 'home'), rg);
        await startRacer(ws, outside, 0.3);
        let outsideMatches = 0;
        for (let i = 0; i < 300; i++) {
          for (const input of [{ pattern: 'SECRET|inside', path: 'd' }, { pattern: 'SECRET|inside' }]) {
            const [result] = await tools.runBatch([call('grep', input)], never);
            const text = result?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';
            if (text.includes('OUTSIDE')) outsideMatches++;
          }
        }
        expect(outsideMatches).toBe(0);
      },
    );
  }
});
