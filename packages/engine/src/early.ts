/**
 * The engine's face before it loads (issue 22: the terminal ready sooner). The terminal paints
 * its first frame and takes keys from this entry alone, then loads the rest of the engine in
 * the steps of `engineStages` (`@crystal/engine/stages`), handling keys between them. Nothing
 * here may import a module that costs start-up time (zod, node:crypto, node:http, the
 * providers), nor name one in an `import()`: the CLI's terminal bundle (dist/terminal.cjs)
 * holds this entry and must not hold the engine. `@crystal/engine` re-exports all of it.
 */

export { UsageError } from './errors.js';
export { fsOperatorMessage, isExpectedFsError } from './fs-errors.js';
export { resolveHome } from './home.js';
export { type ApprovalMode, APPROVAL_MODES, parseApprovalMode } from './approval/modes.js';
export { type PeekFlags, peekStart, type StartPeek } from './config/peek.js';
