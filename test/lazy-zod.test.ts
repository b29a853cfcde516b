/**
 * Issue 22 item 4: the CLI bundle forwards the engine's zod calls to zod required on the first
 * call (scripts/lazy-zod.mjs). What it forwards is read off the engine's sources; a use it could
 * not forward fails the build, not a start. (That the bundle makes its first request before zod
 * loads is asserted end to end in packages/cli/test/run-startup-builtins.test.ts.)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a build script (JavaScript) without declarations.
import { engineZodCalls } from '../scripts/lazy-zod.mjs';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A repository root whose engine holds `files` (name -> text). */
function engineWith(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'crystal-lazy-zod-'));
  roots.push(root);
  mkdirSync(join(root, 'packages/engine/src/tools'), { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, 'packages/engine/src', name), text);
  return root;
}

describe('issue 22 item 4: zod in the bundle is forwarded, not loaded at start', () => {
  it('issue 22 the forwarded functions are the ones the engine calls (this repository: object, optional, config, enum, ...)', () => {
    const names = engineZodCalls(join(__dirname, '..')) as string[];
    for (const name of ['object', 'string', 'optional', 'config', 'enum', 'int', 'minimum']) expect(names).toContain(name);
    // Types (z.ZodMiniType, z.output<...>) are not values and are not forwarded.
    expect(names).not.toContain('ZodMiniType');
    expect(names).not.toContain('output');
  });

  it('issue 22 calls in comments and types are ignored; a file importing zod only for types is not read', () => {
    const root = engineWith({
      'a.ts':
        "import * as z from 'zod/mini';\n/** never `z.config` here */\nexport const s = () => z.object({ n: z.number() });\ntype T = z.output<ReturnType<typeof s>>;\n",
      'b.ts': "import type * as z from 'zod/mini';\nexport type U = z.ZodMiniType; // z.loose\nconst u = 'http://x'; // z.gone\n",
    });
    expect(engineZodCalls(root)).toEqual(['number', 'object']);
  });

  it('issue 22 a zod function read as a value (passed on, not called) fails the build with the file named', () => {
    const root = engineWith({ 'tools/c.ts': "import * as z from 'zod/mini';\nexport const f = [1].map(z.string);\n" });
    expect(() => engineZodCalls(root)).toThrow(/tools\/c\.ts uses z\.string without calling it/);
  });

  it('issue 22 another form of importing zod fails the build with the file named', () => {
    const root = engineWith({ 'd.ts': "import { object } from 'zod/mini';\nexport const o = () => object({});\n" });
    expect(() => engineZodCalls(root)).toThrow(/d\.ts imports zod other than as/);
  });
});
