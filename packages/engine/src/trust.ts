/**
 * Workspace trust for the interactive surfaces (reference §2.4; CLI-8: `crystal run` never asks).
 * A yes is stored in `trusted.json` as the git root, or the directory itself outside a
 * repository; a no records nothing, so the next launch asks again. `{home}/space` is always
 * trusted. A corrupt `trusted.json` is an error naming the file, never silently replaced.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from './errors.js';
import { findGitRoot } from './tools/builtin/git-root.js';
import { realPath } from './tools/fence.js';

export function trustFile(home: string): string {
  return join(home, 'trusted.json');
}

/** The directory a trust answer covers: the git root, or the workspace itself. */
export function trustRoot(home: string, workspace: string): string {
  const dir = realPath(resolve(workspace));
  const space = realPath(join(home, 'space'));
  if (dir === space || dir.startsWith(`${space}/`)) return space;
  return findGitRoot(dir) ?? dir;
}

function readTrusted(home: string): string[] {
  const file = trustFile(home);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  try {
    const value = JSON.parse(text) as { trusted?: unknown };
    return Array.isArray(value.trusted) ? value.trusted.filter((t): t is string => typeof t === 'string') : [];
  } catch (error) {
    throw new ConfigError(
      file,
      undefined,
      undefined,
      `is not valid JSON (${(error as Error).message}); fix or delete it, it was left unchanged.`,
    );
  }
}

export function isTrusted(home: string, workspace: string): boolean {
  const root = trustRoot(home, workspace);
  if (root === realPath(join(home, 'space'))) return true;
  return readTrusted(home).includes(root);
}

export async function trustWorkspace(home: string, workspace: string): Promise<string> {
  const root = trustRoot(home, workspace);
  const trusted = readTrusted(home);
  if (!trusted.includes(root)) {
    // Loaded here: the check above runs before the engine loads (interactive/early.ts), the writer needs node:crypto.
    const { writeFileAtomic } = await import('./atomic-write.js');
    await writeFileAtomic(trustFile(home), `${JSON.stringify({ trusted: [...trusted, root] }, null, 2)}\n`);
  }
  return root;
}

/**
 * What decides whether project-supplied code may run (SEC-1, CLI-8): plugin and exec tool sets
 * from `<workspace>/.crystal/tools`, and later project MCP servers and hooks.
 */
export interface ProjectCodeTrust {
  readonly home: string;
  readonly workspace: string;
  /**
   * The operator's explicit yes for this process, whatever `trusted.json` says:
   * `crystal run --trust-workspace`, or `"workspaceTrust": false` on the interactive surfaces.
   */
  readonly granted?: boolean;
}

/**
 * The one answer to "may this project's code run here?" (SEC-1). Every loader of project code
 * asks it; `crystal run` never asks the operator, it only reads the answer.
 */
export function mayRunProjectCode(trust: ProjectCodeTrust): boolean {
  return trust.granted === true || isTrusted(trust.home, trust.workspace);
}

/** The one note a run prints when it left project code out (CLI-8). */
export function untrustedProjectCodeNote(trust: ProjectCodeTrust, skipped: readonly string[]): string {
  const root = trustRoot(trust.home, trust.workspace);
  return (
    `Workspace ${root} is not trusted, so its project code was not loaded: ${skipped.join(', ')}. ` +
    'Built-in and Home tools are available. To load it, open crystal there once and answer yes, or pass --trust-workspace.'
  );
}
