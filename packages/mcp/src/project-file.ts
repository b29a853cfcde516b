/**
 * The project's `.mcp.json` (MCP-2), Claude Code's file: `{ "mcpServers": { … } }` at the
 * workspace root. A missing file holds no servers; an unreadable or invalid one gives one note.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type McpServerSource, type ParsedServers, parseMcpServers } from './config.js';

export const PROJECT_FILE = '.mcp.json';

export function projectServersFile(workspace: string): string {
  return join(workspace, PROJECT_FILE);
}

/** Reads `mcpServers` from a JSON file; `source` says whose file it is. */
export function readServersFile(
  file: string,
  source: McpServerSource,
  env: Readonly<Record<string, string | undefined>>,
): ParsedServers & { readonly exists: boolean } {
  let text: string | undefined;
  try {
    // A project without .mcp.json is the usual case: asked without an exception (issue 22).
    text = statSync(file, { throwIfNoEntry: false }) === undefined ? undefined : readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { servers: [], notes: [], exists: false };
    return {
      servers: [],
      notes: [`${file} cannot be read (${(error as Error).message}); its MCP servers were not started.`],
      exists: true,
    };
  }
  if (text === undefined) return { servers: [], notes: [], exists: false };
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    return {
      servers: [],
      notes: [`${file} is not valid JSON (${(error as Error).message}); fix it to start its MCP servers.`],
      exists: true,
    };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      servers: [],
      notes: [`${file}: expected an object such as {"mcpServers": {}}; its MCP servers were not started.`],
      exists: true,
    };
  }
  return { ...parseMcpServers((value as Record<string, unknown>).mcpServers, file, source, env), exists: true };
}
