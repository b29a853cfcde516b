/**
 * MCP in the composer (MCP-6), shared by every surface: `/mcp` (status, tools, errors per
 * server), server prompts as slash commands `/mcp__<server>__<prompt> args`, and `@server:uri`
 * mentions that attach a resource's text to the message.
 */
import type { McpManager } from '@crystal/mcp';
import type { McpHost } from './mcp-host.js';

/** The `/mcp` report. */
export function mcpStatusText(host: McpHost): string {
  const manager = host.manager;
  const lines: string[] = [];
  if (!manager || manager.size === 0) {
    lines.push('No MCP servers. Add one with `crystal mcp add`, in config.json "mcpServers", or in the project .mcp.json.');
  } else {
    for (const status of manager.status()) {
      const state = status.state === 'ready' && status.restarts > 0 ? 'ready (restarted once)' : status.state;
      lines.push(`${status.name}  ${state}  ${status.transport}  ${status.source} (${status.file})`);
      if (status.error) lines.push(`  error: ${status.error}`);
      if (status.tools.length > 0) lines.push(`  tools: ${status.tools.join(', ')}`);
      if (status.prompts.length > 0) {
        const commands = manager
          .prompts()
          .filter((p) => p.server === status.name)
          .map((p) => `/${p.command}`);
        lines.push(`  prompts: ${commands.join(', ')}`);
      }
      if (status.resources.length > 0) lines.push(`  resources: ${status.resources.length} (attach with @${status.name}:<uri>)`);
    }
  }
  for (const note of host.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}

/** `/mcp__server__prompt …`: the command name when it is one, else undefined. */
export function mcpPromptCommandOf(text: string): { command: string; args: string } | undefined {
  const match = /^\/(mcp__[A-Za-z0-9_-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { command: match[1] as string, args: (match[2] ?? '').trim() };
}

const MENTION = /(^|\s)@([A-Za-z0-9][A-Za-z0-9_.-]{0,63}):(\S+)/g;

/**
 * Appends the text of every `@server:uri` resource of a configured server to the message (the
 * mention stays where it was typed). A mention of an unknown server is left as typed; a resource
 * that cannot be read is an error naming it, so nothing is sent half-attached.
 */
export async function attachMcpResources(text: string, manager: McpManager | undefined, signal?: AbortSignal): Promise<string> {
  if (!manager || !text.includes('@')) return text;
  const blocks: string[] = [];
  const seen = new Set<string>();
  for (const match of text.matchAll(MENTION)) {
    const server = match[2] as string;
    const uri = (match[3] as string).replace(/[.,;:!?)]+$/, '');
    if (!manager.connection(server) || seen.has(`${server} ${uri}`)) continue;
    seen.add(`${server} ${uri}`);
    let parts: Awaited<ReturnType<McpManager['readResource']>>;
    try {
      parts = await manager.readResource(server, uri, signal);
    } catch (error) {
      throw new Error(`@${server}:${uri} could not be read: ${(error as Error).message}`);
    }
    const body = parts.map((part) => (part.type === 'text' ? part.text : `[image ${part.mime}: not attached]`)).join('\n');
    blocks.push(`<resource server="${server}" uri="${uri}">\n${body}\n</resource>`);
  }
  return blocks.length === 0 ? text : `${text}\n\n${blocks.join('\n\n')}`;
}
