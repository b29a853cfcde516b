/**
 * `pathArguments`: input properties rewritten through the workspace fence to absolute paths (the
 * final target of every link), so a tool never resolves a path against its own idea of the root.
 * The approval classifier judges the same properties (credential: Forbidden, outside: Outside
 * Workspace) before the call runs.
 */
import { resolvePath } from '../tools/fence.js';

export function fencePathArguments(
  input: Record<string, unknown>,
  pathArguments: readonly string[],
  workspace: string,
): Record<string, unknown> {
  if (pathArguments.length === 0) return input;
  const out: Record<string, unknown> = { ...input };
  for (const key of pathArguments) {
    const value = input[key];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') out[key] = resolvePath(workspace, value).real;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
      out[key] = value.map((v) => resolvePath(workspace, v).real);
    } else {
      throw new Error(`The path argument ${key} must be a string or an array of strings.`);
    }
  }
  return out;
}

export function inputObject(input: unknown): Record<string, unknown> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new Error('The arguments must be a JSON object.');
  }
  return input as Record<string, unknown>;
}
