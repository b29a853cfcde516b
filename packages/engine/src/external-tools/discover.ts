/**
 * Finds external tool sets (TOOLS-4): `<home>/tools/<set>/tools.json` and
 * `<workspace>/.crystal/tools/<set>/tools.json`, immediate subdirectories only. The set is named
 * by its directory; a project directory replaces the home one of the same name, even when its
 * manifest is invalid. `enabled: false` omits a set silently; an invalid manifest skips it with a
 * note naming the file, the key path and what is expected. Discovery never throws: start-up goes on.
 */
import { promises as fs, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { keyLines, lineOfPath, parseJson } from '../config/json-locate.js';
import { mayRunProjectCode, type ProjectCodeTrust } from '../trust.js';
import { isDisabled, ManifestProblem, parseManifest, SET_NAME, type SetManifest, type ToolSource } from './manifest.js';

/** Who decides for an author's `approval: "always"`: `author` honours it, `host` ignores it. */
export type ApprovalSourcePolicy = 'author' | 'host';

export interface DiscoverOptions {
  readonly home: string;
  readonly workspace: string;
  /** Defaults: home `author`, project `host` (§2.2 `externalToolApproval`). */
  readonly approvalSources?: { readonly home?: ApprovalSourcePolicy; readonly project?: ApprovalSourcePolicy };
  /**
   * When given and the workspace's code may not run (SEC-1), project sets are not read at all:
   * their directories are listed in `untrusted` and a home set of the same name stays.
   */
  readonly projectCode?: ProjectCodeTrust;
}

export interface ToolSet {
  readonly name: string;
  readonly source: ToolSource;
  readonly dir: string;
  readonly manifestPath: string;
  /** Whether an author's `approval: "always"` takes effect for this set's tools. */
  readonly authorApproval: boolean;
  readonly manifest: SetManifest;
}

export interface Discovery {
  /** Valid, enabled sets in name order. */
  readonly sets: readonly ToolSet[];
  /** One English note per skipped set. */
  readonly notes: readonly string[];
  /** Project set directories left out because the workspace is not trusted (SEC-1). */
  readonly untrusted?: readonly string[];
}

export const MANIFEST_NAME = 'tools.json';

export function homeToolsDir(home: string): string {
  return join(home, 'tools');
}

export function projectToolsDir(workspace: string): string {
  return join(workspace, '.crystal', 'tools');
}

export async function discoverToolSets(options: DiscoverOptions): Promise<Discovery> {
  const homeRoot = homeToolsDir(options.home);
  const projectRoot = projectToolsDir(options.workspace);
  const found = new Map<string, { source: ToolSource; dir: string }>();
  for (const name of await subdirectories(homeRoot)) found.set(name, { source: 'home', dir: join(homeRoot, name) });
  // When the workspace's `.crystal` is Home itself, its sets are home sets.
  const untrusted: string[] = [];
  if (!sameDir(homeRoot, projectRoot)) {
    const names = await subdirectories(projectRoot);
    if (names.length > 0 && options.projectCode && !mayRunProjectCode(options.projectCode)) {
      untrusted.push(...names.sort().map((name) => join(projectRoot, name)));
    } else {
      for (const name of names) found.set(name, { source: 'project', dir: join(projectRoot, name) });
    }
  }
  const policies = { home: options.approvalSources?.home ?? 'author', project: options.approvalSources?.project ?? 'host' };
  const sets: ToolSet[] = [];
  const notes: string[] = [];
  for (const name of [...found.keys()].sort()) {
    const { source, dir } = found.get(name) as { source: ToolSource; dir: string };
    const outcome = await loadSet(name, source, dir, policies[source] === 'author');
    if (outcome === undefined) continue;
    if (typeof outcome === 'string') notes.push(outcome);
    else sets.push(outcome);
  }
  return untrusted.length > 0 ? { sets, notes, untrusted } : { sets, notes };
}

/** A set, a note explaining why it was skipped, or undefined when it is disabled. */
async function loadSet(
  name: string,
  source: ToolSource,
  dir: string,
  authorApproval: boolean,
): Promise<ToolSet | string | undefined> {
  const manifestPath = join(dir, MANIFEST_NAME);
  const skipped = (where: string, why: string): string => `${where}: ${why}; the ${source} tool set ${name} was skipped.`;
  let text: string;
  try {
    text = await fs.readFile(manifestPath, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return skipped(
      manifestPath,
      code === 'ENOENT' ? `expected a ${MANIFEST_NAME} file` : `cannot be read (${(error as Error).message})`,
    );
  }
  text = text.replace(/^\uFEFF/, '');
  const parsed = parseJson(text);
  if (!parsed.ok) {
    return skipped(
      `${manifestPath}:${parsed.position.line}`,
      `is not valid JSON (${parsed.message}, column ${parsed.position.column})`,
    );
  }
  if (isDisabled(parsed.value)) return undefined;
  if (!SET_NAME.test(name)) {
    return skipped(dir, 'a tool set directory name has 1-64 characters, a letter first, then letters, digits, _ . or -');
  }
  try {
    return { name, source, dir, manifestPath, authorApproval, manifest: parseManifest(parsed.value, name) };
  } catch (error) {
    if (!(error instanceof ManifestProblem)) throw error;
    const line = lineOfPath(keyLines(text), error.keyPath);
    return skipped(`${manifestPath}${line === undefined ? '' : `:${line}`}`, error.message);
  }
}

/**
 * The set folders under `root`, listed synchronously: the two roots rarely exist, and the first
 * `fs.promises` call loads node:fs/promises (~1.5 ms before every `crystal run`'s first request;
 * issue 22). A missing root is found with a stat, not a thrown ENOENT.
 */
async function subdirectories(root: string): Promise<string[]> {
  let entries: import('node:fs').Dirent[];
  try {
    if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) return [];
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory()) names.push(entry.name);
    else if (entry.isSymbolicLink() && statSync(join(root, entry.name), { throwIfNoEntry: false })?.isDirectory())
      names.push(entry.name);
  }
  return names;
}

/**
 * Whether both paths are one existing folder (symbolic links followed), by device and inode: two
 * stats that do not throw for the usual missing Home tools/ (issue 22), where two realpaths did.
 */
function sameDir(a: string, b: string): boolean {
  try {
    const first = statSync(a, { throwIfNoEntry: false });
    const second = first && statSync(b, { throwIfNoEntry: false });
    return second !== undefined && first !== undefined && first.dev === second.dev && first.ino === second.ino;
  } catch {
    return false;
  }
}
