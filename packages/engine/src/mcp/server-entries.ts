/**
 * Edits `mcpServers` in Home `config.json` (scope `home`) or the project's `.mcp.json` (scope
 * `project`) for `crystal mcp add|remove` (MCP-6). Every other key of the file is kept; a file
 * that is not valid JSON is an error naming it and is never rewritten; writes are atomic.
 * A new entry is checked as start-up checks it, so a bad one is refused before it is saved.
 */
import { readFileSync } from 'node:fs';
import { parseMcpServers, projectServersFile } from '@crystal/mcp';
import { writeFileAtomic } from '../atomic-write.js';
import { configPath } from '../config/load.js';
import { UsageError } from '../errors.js';

export type ServerScope = 'home' | 'project';

export function serverFileFor(scope: ServerScope, home: string, workspace: string): string {
  return scope === 'home' ? configPath(home) : projectServersFile(workspace);
}

function readObject(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`${file} cannot be read (${(error as Error).message}).`);
  }
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UsageError(`${file} is not valid JSON (${(error as Error).message}); fix it first, it was left unchanged.`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(`${file}: expected a JSON object at the top level; fix it first, it was left unchanged.`);
  }
  return value as Record<string, unknown>;
}

function serversOf(file: string, content: Record<string, unknown>): Record<string, unknown> {
  const servers = content.mcpServers ?? {};
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) {
    throw new UsageError(`${file}: mcpServers must be an object; fix it first, it was left unchanged.`);
  }
  return servers as Record<string, unknown>;
}

/** The entries of one file, as written. */
export function readServerEntries(file: string): Record<string, unknown> {
  return serversOf(file, readObject(file));
}

export async function addServerEntry(
  file: string,
  scope: ServerScope,
  name: string,
  entry: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  const content = readObject(file);
  const servers = serversOf(file, content);
  if (name in servers) throw new UsageError(`An MCP server named ${name} is already in ${file}; remove it first.`);
  const check = parseMcpServers({ [name]: entry }, file, scope, env);
  if (check.notes.length > 0) throw new UsageError((check.notes[0] as string).replace(/; the MCP server .* was skipped\.$/, '.'));
  const next = { ...content, mcpServers: { ...servers, [name]: entry } };
  // .mcp.json is a project file others read (and commit); config.json stays owner-only.
  await writeFileAtomic(file, `${JSON.stringify(next, null, 2)}\n`, scope === 'project' ? 0o644 : 0o600);
}

/** Removes the entry; false when the file has no such server. */
export async function removeServerEntry(file: string, scope: ServerScope, name: string): Promise<boolean> {
  const content = readObject(file);
  const servers = serversOf(file, content);
  if (!(name in servers)) return false;
  const { [name]: _removed, ...rest } = servers;
  await writeFileAtomic(
    file,
    `${JSON.stringify({ ...content, mcpServers: rest }, null, 2)}\n`,
    scope === 'project' ? 0o644 : 0o600,
  );
  return true;
}
