/**
 * The engine in steps (issue 22: the terminal ready sooner), apart from `@crystal/engine/early`:
 * each step names a part of the engine in an `import()`, so a bundler that follows them puts the
 * whole engine beside whatever imports this file. The CLI's terminal bundle holds the early entry
 * but not this one.
 */
import { lazyBuiltin } from '@crystal/core';

/**
 * The engine in pieces, its heavy leaves first, each a few milliseconds of module evaluation: a
 * caller that yields to the event loop between them (`await stage()` then `setImmediate`)
 * keeps handling keys while the engine loads. What is left of the engine loads with its first
 * static import after them (a few modules); the steps only make that cheaper. A bundler that
 * wraps each lazily imported module (esbuild) evaluates exactly the named module and what it
 * imports.
 */
export const engineStages: readonly (() => Promise<unknown>)[] = [
  // The small ones first: a key typed right after the first frame waits for one of them.
  builtin('node:fs/promises'),
  builtin('node:child_process'),
  builtin('node:zlib'),
  builtin('node:http'),
  builtin('node:https'),
  builtin('node:crypto'),
  () => import('./config/schema.js'),
  () => import('@crystal/providers'),
  () => import('./config/json-edit.js'),
  () => import('./session.js'),
  () => import('./workspace-tools.js'),
  () => import('./controller.js'),
];

/**
 * A Node built-in, through core's lazyBuiltin (process.getBuiltinModule, else `require`), not
 * import(): the bundle compiled from V8's code cache has no dynamic import hook on Node 20
 * (packages/cli/src/launch.ts). It is the same module instance the engine's own imports get.
 */
function builtin(name: `node:${string}`): () => Promise<unknown> {
  const load = lazyBuiltin(name);
  return async () => load();
}
