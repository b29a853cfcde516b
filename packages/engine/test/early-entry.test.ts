import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The Node built-ins a fresh process has loaded after importing `entry` (the built ES module). */
function builtinsAfter(entry: string): string[] {
  const url = new URL(`../dist/${entry}`, import.meta.url).href;
  const script = `await import(${JSON.stringify(url)}); console.log(JSON.stringify(process.moduleLoadList));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    encoding: 'utf8',
  });
  return (JSON.parse(out) as string[]).filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13));
}

const HEAVY = ['crypto', 'http', 'https', 'zlib', 'child_process'];

describe('@crystal/engine/early (issue 22)', () => {
  it('TUI-1 the entry the first frame is painted from loads none of the engine heavy built-ins; the whole engine loads node:http only (the rest at first use)', () => {
    expect(builtinsAfter('early.js').filter((m) => HEAVY.includes(m))).toEqual([]);
    // The whole engine loads the transport's node:http when it loads; node:crypto, https, zlib and
    // child_process load when first used (core's lazyBuiltin, issue 22 item 4), so not even it does.
    expect(builtinsAfter('index.js').filter((m) => HEAVY.includes(m))).toEqual(['http']);
  });
});
