/**
 * The engine's face before it loads (issue 22: the terminal ready sooner). The terminal paints
 * its first frame and takes keys from this entry alone, then loads the rest of the engine in
 * the steps of `engineStages`, handling keys between them. Nothing here may import a module
 * that costs start-up time (zod, node:crypto, node:http, the providers): the whole point is
 * that evaluating it is nearly free. `@crystal/engine` re-exports all of it.
 */
import { createRequire } from 'node:module';

export { UsageError } from './errors.js';
export { fsOperatorMessage, isExpectedFsError } from './fs-errors.js';
export { resolveHome } from './home.js';
export { type ApprovalMode, APPROVAL_MODES, parseApprovalMode } from './approval/modes.js';
export { type PeekFlags, peekStart, type StartPeek } from './config/peek.js';

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
 * A Node built-in, through `require`: the bundle compiled from V8's code cache has no dynamic
 * import hook on Node 20 (packages/cli/src/launch.ts), and the engine's own imports of it are
 * `require`s in the bundle, so this is the same module instance they get.
 */
function builtin(name: string): () => Promise<unknown> {
  return async () => createRequire(import.meta.url)(name);
}
