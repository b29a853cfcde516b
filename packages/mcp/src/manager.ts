/**
 * The MCP servers of one session (MCP-1..6) behind one seam: `tools()` is the tool set the host's
 * catalog asks each round (a server that comes up later joins at the next round), `prompts()` and
 * `readResource()` feed slash commands and `@server:uri` attachments, `status()` feeds `/mcp`.
 * `start()` returns at once; servers connect in the background, and a failing one gives one note.
 */
import type { McpServerSpec } from './config.js';
import { McpConnection, type McpConnectionOptions, type McpFetch, type McpServerState, type StdioWrapper } from './connection.js';
import { mcpPromptCommand, mcpToolName } from './names.js';
import type { McpCallOutcome } from './results.js';

/** One MCP tool as the host's catalog sees it. */
export interface McpTool {
  /** `mcp__<server>__<tool>`. */
  readonly name: string;
  readonly server: string;
  /** The tool's own name on its server. */
  readonly tool: string;
  readonly description: string;
  /** The server's JSON Schema for the arguments. */
  readonly parameters: Record<string, unknown>;
  /** Tool annotations (`readOnlyHint`, …): hints for the approval card, never a pass. */
  readonly annotations: Readonly<Record<string, unknown>>;
  /** The server entry says `"trust": true`. */
  readonly trusted: boolean;
  readonly source: McpServerSpec['source'];
  call(input: Record<string, unknown>, signal: AbortSignal): Promise<McpCallOutcome>;
}

/** A server prompt offered as the slash command `/mcp__<server>__<prompt>`. */
export interface McpPrompt {
  readonly command: string;
  readonly server: string;
  readonly prompt: string;
  readonly description: string;
  readonly arguments: readonly { readonly name: string; readonly description?: string; readonly required?: boolean }[];
}

export interface McpServerStatus {
  readonly name: string;
  readonly source: McpServerSpec['source'];
  readonly file: string;
  readonly transport: McpServerSpec['transport'];
  readonly state: McpServerState;
  readonly error?: string;
  readonly tools: readonly string[];
  readonly prompts: readonly string[];
  readonly resources: readonly string[];
  readonly restarts: number;
}

export interface McpManagerOptions {
  readonly servers: readonly McpServerSpec[];
  readonly workspace: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The sandbox hook for stdio servers (see `StdioWrapper`). */
  readonly wrapStdio?: StdioWrapper;
  /** How HTTP and SSE servers are reached (see McpConnectionOptions.fetch). */
  readonly fetch?: McpFetch;
  readonly connectTimeoutMs?: number;
  readonly onNote?: (text: string) => void;
  /** A server's state or lists changed (the host may publish an event). */
  readonly onChange?: (server: string) => void;
}

export class McpManager {
  private readonly connections: McpConnection[];
  private readonly noted = new Set<string>();
  private started = false;

  constructor(private readonly options: McpManagerOptions) {
    this.connections = options.servers.map((spec) => {
      const connection: McpConnectionOptions = {
        spec,
        workspace: options.workspace,
        ...(options.env ? { env: options.env } : {}),
        ...(options.wrapStdio ? { wrapStdio: options.wrapStdio } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
        onChange: () => options.onChange?.(spec.name),
        ...(options.onNote ? { onNote: options.onNote } : {}),
      };
      return new McpConnection(connection);
    });
  }

  get size(): number {
    return this.connections.length;
  }

  /** Starts every server in the background and returns at once. */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const connection of this.connections) void connection.start();
  }

  /** Resolves once every server is ready or failed (tests, `/mcp`, `crystal mcp list`). */
  async whenSettled(): Promise<void> {
    this.start();
    for (let settled = false; !settled; ) {
      const pending = this.connections.map((c) => c.whenSettled());
      await Promise.all(pending);
      settled = this.connections.every((c) => c.state !== 'connecting');
    }
  }

  connection(server: string): McpConnection | undefined {
    return this.connections.find((c) => c.name === server);
  }

  /** The tools of every ready server, in server order, then the server's own order. */
  tools(): McpTool[] {
    const seen = new Set<string>();
    const out: McpTool[] = [];
    for (const connection of this.connections) {
      if (connection.state !== 'ready') continue;
      for (const info of connection.tools) {
        const name = mcpToolName(connection.name, info.name);
        if (seen.has(name)) {
          this.noteOnce(
            `tool:${name}`,
            `The MCP tool ${info.name} of server ${connection.name} was left out: another MCP tool is also named ${name}.`,
          );
          continue;
        }
        seen.add(name);
        out.push({
          name,
          server: connection.name,
          tool: info.name,
          description: info.description ?? info.title ?? `The ${info.name} tool of the MCP server ${connection.name}.`,
          parameters: info.inputSchema,
          annotations: info.annotations ?? {},
          trusted: connection.spec.trust,
          source: connection.spec.source,
          call: (input, signal) => connection.callTool(info.name, input, signal),
        });
      }
    }
    return out;
  }

  prompts(): McpPrompt[] {
    return this.connections
      .filter((c) => c.state === 'ready')
      .flatMap((c) =>
        c.prompts.map((p) => ({
          command: mcpPromptCommand(c.name, p.name),
          server: c.name,
          prompt: p.name,
          description: p.description ?? `The ${p.name} prompt of the MCP server ${c.name}.`,
          arguments: p.arguments,
        })),
      );
  }

  /**
   * Runs a prompt command: `args` is what followed the command, given to the prompt's arguments
   * in order, or as `name=value` pairs; a missing required argument is an error naming it.
   */
  async runPrompt(command: string, args: string, signal?: AbortSignal): Promise<string> {
    // The slash picker offers names in lower case; an exact match wins over a case-blind one.
    const prompts = this.prompts();
    const prompt =
      prompts.find((p) => p.command === command) ?? prompts.find((p) => p.command.toLowerCase() === command.toLowerCase());
    if (!prompt) throw new Error(`/${command} is not a prompt of a running MCP server; /mcp lists them.`);
    const values = promptArguments(prompt, args);
    return (this.connection(prompt.server) as McpConnection).getPrompt(prompt.prompt, values, signal);
  }

  /** `@server:uri`: reads one resource of a running server. */
  async readResource(server: string, uri: string, signal?: AbortSignal): ReturnType<McpConnection['readResource']> {
    const connection = this.connection(server);
    if (!connection) throw new Error(`@${server}:${uri}: there is no MCP server named ${server}.`);
    return connection.readResource(uri, signal);
  }

  status(): McpServerStatus[] {
    return this.connections.map((c) => ({
      name: c.name,
      source: c.spec.source,
      file: c.spec.file,
      transport: c.spec.transport,
      state: c.state,
      ...(c.error ? { error: c.error } : {}),
      tools: c.tools.map((t) => t.name),
      prompts: c.prompts.map((p) => p.name),
      resources: c.resources.map((r) => r.uri),
      restarts: c.restarts,
    }));
  }

  async close(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.close()));
  }

  private noteOnce(key: string, text: string): void {
    if (this.noted.has(key)) return;
    this.noted.add(key);
    this.options.onNote?.(text);
  }
}

/** `a b "c d"` in argument order, or `name=value` pairs; quotes group words. */
export function promptArguments(prompt: McpPrompt, text: string): Record<string, string> {
  const words = [...text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
  const values: Record<string, string> = {};
  const names = prompt.arguments.map((a) => a.name);
  const named = words.length > 0 && words.every((w) => /^[A-Za-z_][\w-]*=/.test(w) && names.includes(w.split('=')[0] as string));
  if (named) {
    for (const word of words) {
      const at = word.indexOf('=');
      values[word.slice(0, at)] = word.slice(at + 1);
    }
  } else {
    const positional = [...words];
    for (const [index, name] of names.entries()) {
      if (positional.length === 0) break;
      // The last argument takes the rest of the text.
      values[name] = index === names.length - 1 ? positional.splice(0).join(' ') : (positional.shift() as string);
    }
  }
  const missing = prompt.arguments.filter((a) => a.required && !(a.name in values)).map((a) => a.name);
  if (missing.length > 0) {
    const usage = prompt.arguments.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(' ');
    throw new Error(`/${prompt.command} needs ${missing.join(', ')}: /${prompt.command} ${usage}`);
  }
  return values;
}
