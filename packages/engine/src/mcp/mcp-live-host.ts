/**
 * The MCP host of a session with servers configured (MCP-2, MCP-5): the manager starts them in
 * the background, their tools join the catalog each round. Loaded by `startMcpHost` only when a
 * server is configured (issue 22 item 4), so a session without servers never loads the client.
 */
import { McpManager, type McpServerSpec } from '@crystal/mcp';
import type { ExternalTool } from '../external-tools/external-tool.js';
import type { McpHost, McpHostOptions } from './mcp-host.js';
import { createMcpTool } from './mcp-tool.js';

export function liveMcpHost(options: McpHostOptions, servers: McpServerSpec[], notes: string[]): McpHost {
  const manager = new McpManager({
    servers,
    workspace: options.workspace,
    env: options.env ?? process.env,
    ...(options.wrapStdio ? { wrapStdio: options.wrapStdio } : {}),
    ...(options.onNote ? { onNote: options.onNote } : {}),
    ...(options.onChange ? { onChange: options.onChange } : {}),
  });
  if (options.autoStart !== false) manager.start();
  const context = { imageInput: options.imageInput };
  const tools = (): ExternalTool[] => manager.tools().map((tool) => createMcpTool(tool, context));
  return {
    manager,
    servers,
    notes,
    tools,
    facts: (name) => (name.startsWith('mcp__') ? tools().find((tool) => tool.name === name)?.facts : undefined),
    settle: (limitMs) => {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, limitMs);
      });
      return Promise.race([manager.whenSettled(), limit])
        .finally(() => clearTimeout(timer))
        .then(() => {
          for (const status of manager.status().filter((s) => s.state === 'connecting')) {
            options.onNote?.(
              `The MCP server ${status.name} has not come up within ${limitMs / 1000} seconds; the turn starts without it, and its tools join a later round if it does.`,
            );
          }
        });
    },
    close: () => manager.close(),
  };
}
