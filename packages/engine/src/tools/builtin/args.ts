/**
 * Argument validation for the built-in tools with `zod/mini`. A bad argument becomes a
 * model-visible failure that names the field and what is expected, so the model can retry.
 */
import * as z from 'zod/mini';
import { ToolFailure } from './failure.js';

/** Tool argument schemas are built at the tool's first call (lazy-schema.ts). */
export { lazySchema } from '../../lazy-schema.js';

interface Issue {
  readonly code?: string;
  readonly message: string;
  readonly path: readonly PropertyKey[];
  readonly input?: unknown;
}

/** Parses a tool's input or throws a `ToolFailure` naming each bad field. */
export function parseArgs<T>(tool: string, schema: z.ZodMiniType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const lines = (result.error.issues as readonly Issue[]).slice(0, 5).map((issue) => describeIssue(tool, issue));
  throw new ToolFailure(lines.join('\n'));
}

function describeIssue(tool: string, issue: Issue): string {
  const field = fieldName(issue.path);
  const expected = issue.message.replace(/^[A-Za-z ]+: /, '');
  if (field === '') return `The arguments of '${tool}' must be a JSON object (${expected}).`;
  const missing = issue.code === 'invalid_type' && /received undefined$/.test(issue.message);
  if (missing) return `Missing argument '${field}' for '${tool}': ${expected.replace(/, received undefined$/, '')}.`;
  return `Invalid argument '${field}' for '${tool}': ${expected}.`;
}

function fieldName(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** Shared argument shapes. */
export const optionalPositiveInt = () => z.optional(z.int().check(z.minimum(1)));
export const optionalNonNegativeInt = () => z.optional(z.int().check(z.minimum(0)));
