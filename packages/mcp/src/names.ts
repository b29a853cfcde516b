/**
 * Tool names the model sees (MCP-3): `mcp__<server>__<tool>`, as Claude Code names them. Every
 * character outside `[A-Za-z0-9_-]` becomes `_` (the providers' tool-name alphabet); a name over
 * 64 characters keeps its first 55 and ends in `_` plus 8 hex digits of a hash of the full name.
 */
import { sha256Hex } from '@crystal/core';

export const MAX_TOOL_NAME = 64;

export function normalizeName(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_');
}

export function mcpToolName(server: string, tool: string): string {
  const name = `mcp__${normalizeName(server)}__${normalizeName(tool)}`;
  if (name.length <= MAX_TOOL_NAME) return name;
  const hash = sha256Hex(`${server}\u0000${tool}`).slice(0, 8);
  return `${name.slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}

/** The slash command of a server prompt (MCP-6): `mcp__<server>__<prompt>`. */
export function mcpPromptCommand(server: string, prompt: string): string {
  return mcpToolName(server, prompt);
}
