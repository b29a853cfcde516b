/**
 * Composes `@crystal/mcp` into a session (MCP-2, MCP-5): reads `mcpServers` from Home
 * `config.json` and the project's `.mcp.json` (project servers only when the workspace may run
 * project code), starts the servers in the background and offers their tools to the catalog each
 * round. Nothing here waits for a server.
 */
import {
  McpManager,
  type McpServerSpec,
  mergeServers,
  parseMcpServers,
  projectServersFile,
  readServersFile,
  type StdioWrapper,
} from '@crystal/mcp';
import type { ExternalToolFacts } from '../approval/classifier.js';
import { configPath } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { ExternalTool } from '../external-tools/external-tool.js';
import { realPath } from '../tools/fence.js';
import { mcpFetch } from '../transport-options.js';
import { createMcpTool } from './mcp-tool.js';
import { mayRunProjectServers } from './project-trust.js';

export interface McpHostOptions {
  readonly home: string;
  readonly workspace: string;
  readonly config: Config;
  readonly env?: NodeJS.ProcessEnv;
  readonly imageInput: () => boolean;
  readonly onNote?: (text: string) => void;
  readonly onChange?: (server: string) => void;
  /** The OS sandbox hook for stdio servers (none yet: identity). */
  readonly wrapStdio?: StdioWrapper;
  /** Who decides whether project servers may start (default: the workspace trust store). */
  readonly mayRunProjectCode?: (home: string, workspace: string) => boolean;
  /** Start the servers now (default true); `false` leaves it to `start()`. */
  readonly autoStart?: boolean;
}

export interface McpHost {
  /** Undefined when no server is configured. */
  readonly manager: McpManager | undefined;
  readonly servers: readonly McpServerSpec[];
  /** Configuration notes (bad entries, untrusted project servers). */
  readonly notes: readonly string[];
  tools(): ExternalTool[];
  facts(name: string): ExternalToolFacts | undefined;
  /**
   * Resolves when every server is ready or failed, or after `limitMs`, whichever is first. Only
   * `crystal run` waits (its one turn would otherwise start without the tools); the interactive
   * surfaces never do, and a server slower than the limit still joins at a later round.
   */
  settle(limitMs: number): Promise<void>;
  close(): Promise<void>;
}

/** How long `crystal run` lets its MCP servers come up before the first round. */
export const RUN_MCP_STARTUP_MS = 10_000;

/** The servers a workspace would start, with the notes about the ones it would not. */
export function configuredServers(options: Pick<McpHostOptions, 'home' | 'workspace' | 'config' | 'env' | 'mayRunProjectCode'>): {
  servers: McpServerSpec[];
  notes: string[];
  untrusted: McpServerSpec[];
} {
  const env = options.env ?? process.env;
  const home = parseMcpServers(options.config.mcpServers, configPath(options.home), 'home', env);
  const notes = [...home.notes];
  let project: McpServerSpec[] = [];
  let untrusted: McpServerSpec[] = [];
  const file = projectServersFile(options.workspace);
  // Home itself as the workspace has no project servers.
  if (realPath(options.workspace) !== realPath(options.home)) {
    const read = readServersFile(file, 'project', env);
    if (read.servers.length > 0 || read.notes.length > 0) {
      const allowed = (options.mayRunProjectCode ?? mayRunProjectServers)(options.home, options.workspace);
      if (allowed) {
        project = [...read.servers];
        notes.push(...read.notes);
      } else if (read.servers.length > 0) {
        untrusted = [...read.servers];
        const names = read.servers.map((s) => s.name).join(', ');
        notes.push(
          `${file} lists MCP servers (${names}) that were not started: project servers are project code and this workspace is not trusted. Trust the workspace to start them.`,
        );
      }
    }
  }
  return { servers: mergeServers(home.servers, project), notes, untrusted };
}

export function startMcpHost(options: McpHostOptions): McpHost {
  const { servers, notes } = configuredServers(options);
  if (servers.length === 0) {
    return {
      manager: undefined,
      servers,
      notes,
      tools: () => [],
      facts: () => undefined,
      settle: async () => undefined,
      close: async () => undefined,
    };
  }
  const env = options.env ?? process.env;
  const remote = servers.some((server) => server.transport !== 'stdio');
  const manager = new McpManager({
    servers,
    workspace: options.workspace,
    env,
    // Issue 22 item 2: HTTP and SSE servers go through the proxies and caFile the model does.
    ...(remote ? { fetch: mcpFetch(options.home, options.config, env) } : {}),
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
