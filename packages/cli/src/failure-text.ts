/**
 * What `crystal` prints for an error that ends a command. Its own module, loaded by `import()`
 * from main.ts, so the entry never imports the engine's whole barrel (issue 22 item 4: a barrel
 * loaded by `import()` would keep every engine module in the chunks each command loads).
 */
import { fsOperatorMessage, isExpectedFsError, UsageError } from '@crystal/engine';

/** A UsageError or an expected file-system failure in one line; anything else is a defect, with its stack. */
export function failureText(error: unknown): string {
  // REL-13: an expected file-system failure (ENOSPC, EROFS, ENOENT, EACCES, …) says what failed,
  // the path and what to do; only a defect shows a stack.
  return error instanceof UsageError || isExpectedFsError(error)
    ? fsOperatorMessage(error)
    : `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
}
