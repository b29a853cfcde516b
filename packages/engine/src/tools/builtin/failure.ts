/**
 * A tool's model-visible failure. Built-in tools throw it for every refusal and error (a binary
 * file, an edit that does not match, a non-zero exit, a dismissed question), so the call's result
 * is marked `isError` by the `ToolExecutor`, which passes every exception through the host's
 * exception mapper. `builtinExceptionMapper` hands the message over verbatim; any other exception
 * keeps the default mapping.
 */
import { defaultExceptionMapper, type ToolExceptionMapper } from '@crystal/core';

export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
}

/** The exception mapper to give the session's `ToolExecutor`: a `ToolFailure` reaches the model as written. */
export const builtinExceptionMapper: ToolExceptionMapper = (error, call) =>
  error instanceof ToolFailure ? error.message : defaultExceptionMapper(error, call);
