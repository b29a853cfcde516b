/**
 * One MCP server (MCP-1, MCP-5) on the protocol's own SDK, loaded with `import()` only when a
 * server starts, so a session without servers never pays for it. Transports: stdio (a child
 * process; its stderr is kept, not painted), Streamable HTTP and the legacy HTTP+SSE, with the
 * entry's headers on every request. `start()` never rejects: it settles as `ready` or `failed`.
 * A stdio server that exits after it was ready is started once more; a second exit is final and
 * reported. Calls take the entry's timeout and the caller's AbortSignal (the SDK sends
 * `notifications/cancelled` for both).
 */
import { resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerSpec } from './config.js';
import { type McpCallOutcome, mapCallResult, mapResource } from './results.js';

export type McpServerState = 'connecting' | 'ready' | 'failed' | 'closed';

/** What is started for a stdio server; the sandbox hook may rewrite it (see `StdioWrapper`). */
export interface StdioLaunch {
  readonly command: string;
  readonly args: readonly string[];
  /** The complete child environment. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
}

/**
 * The hook point for the OS sandbox and the environment scrub: takes the launch of a stdio
 * server and returns the one to start (say, the command wrapped in the sandbox's runner).
 */
export type StdioWrapper = (launch: StdioLaunch, spec: McpServerSpec) => StdioLaunch;

export interface McpToolInfo {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations?: Readonly<Record<string, unknown>>;
}

export interface McpPromptInfo {
  readonly name: string;
  readonly description?: string;
  readonly arguments: readonly { readonly name: string; readonly description?: string; readonly required?: boolean }[];
}

export interface McpResourceInfo {
  readonly uri: string;
  readonly name?: string;
  readonly mimeType?: string;
}

export interface McpConnectionOptions {
  readonly spec: McpServerSpec;
  /** Relative `cwd` entries resolve here; a stdio server without `cwd` runs here. */
  readonly workspace: string;
  /** The host environment `${VAR}` came from; stdio children get the SDK's safe subset of it plus the entry's `env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly wrapStdio?: StdioWrapper;
  /**
   * How an HTTP or SSE server is reached (default: global `fetch`). The host passes one over its
   * own transport, so proxies, NO_PROXY and extra certificate authorities apply (issue 22 item 2).
   */
  readonly fetch?: McpFetch;
  /** The initialize handshake's limit (default 30 s). */
  readonly connectTimeoutMs?: number;
  /** Called on every state, tool, prompt or resource list change. */
  readonly onChange?: () => void;
  /** One line for the operator (a failure, a restart). */
  readonly onNote?: (text: string) => void;
}

/** A `fetch` for the HTTP and SSE transports (the SDK's FetchLike). */
export type McpFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export const CLIENT_INFO = { name: 'crystal-code', version: '0.1.0' } as const;
const STDERR_TAIL = 2000;
/** Node's timer maximum: a null timeout still needs a number for the SDK (its default is 60 s). */
const NO_TIMEOUT_MS = 2_147_483_647;

export class McpCallError extends Error {}

export class McpConnection {
  state: McpServerState = 'connecting';
  /** Why the server failed, for `/mcp` and notes. */
  error: string | undefined;
  tools: readonly McpToolInfo[] = [];
  prompts: readonly McpPromptInfo[] = [];
  resources: readonly McpResourceInfo[] = [];
  /** How many times a crashed stdio server was started again (at most once). */
  restarts = 0;
  /** The stdio child's process id while it runs. */
  pid: number | undefined;
  /** The server's name and version from the handshake. */
  serverVersion: { name: string; version: string } | undefined;

  private client: Client | undefined;
  private stderr = '';
  private closing = false;
  private settled: Promise<void> = Promise.resolve();

  constructor(private readonly options: McpConnectionOptions) {}

  get spec(): McpServerSpec {
    return this.options.spec;
  }

  get name(): string {
    return this.options.spec.name;
  }

  /** Connects in the background; the promise settles (never rejects) when ready or failed. */
  start(): Promise<void> {
    this.settled = this.connect().catch((error: unknown) => {
      this.fail(`failed to start: ${this.describe(error)}`);
    });
    return this.settled;
  }

  /** Resolves when the current connect attempt has settled. */
  whenSettled(): Promise<void> {
    return this.settled;
  }

  private async connect(): Promise<void> {
    this.state = 'connecting';
    this.error = undefined;
    this.changed();
    const [{ Client }, transport] = await Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), this.transport()]);
    if (this.closing) return;
    const client = new Client(
      { ...CLIENT_INFO },
      {
        capabilities: {},
        listChanged: {
          tools: { onChanged: (_error, tools) => tools && this.setTools(tools as never) },
          prompts: { onChanged: (_error, prompts) => prompts && this.setPrompts(prompts as never) },
          resources: { onChanged: (_error, resources) => resources && this.setResources(resources as never) },
        },
      },
    );
    client.onerror = () => undefined;
    this.client = client;
    await client.connect(transport, { timeout: this.options.connectTimeoutMs ?? 30_000 });
    if (this.closing) {
      await client.close().catch(() => undefined);
      return;
    }
    const version = client.getServerVersion();
    this.serverVersion = version ? { name: version.name, version: version.version } : undefined;
    const capabilities = client.getServerCapabilities() ?? {};
    const timeout = { timeout: this.options.connectTimeoutMs ?? 30_000 };
    const [tools, prompts, resources] = await Promise.all([
      capabilities.tools ? listAll((cursor) => client.listTools(cursor ? { cursor } : {}, timeout), 'tools') : [],
      capabilities.prompts ? listAll((cursor) => client.listPrompts(cursor ? { cursor } : {}, timeout), 'prompts') : [],
      capabilities.resources
        ? listAll((cursor) => client.listResources(cursor ? { cursor } : {}, timeout), 'resources').catch(() => [])
        : [],
    ]);
    this.setTools(tools as never, false);
    this.setPrompts(prompts as never, false);
    this.setResources(resources as never, false);
    // Watch for an exit only once the server is up: an exit during the handshake is a start failure.
    transport.onclose = chain(transport.onclose, () => this.lost(client));
    this.state = 'ready';
    this.changed();
  }

  private async transport(): Promise<Transport> {
    const spec = this.options.spec;
    if (spec.transport === 'stdio') {
      const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      const base: StdioLaunch = {
        command: spec.command as string,
        args: spec.args,
        env: { ...getDefaultEnvironment(), ...spec.env },
        cwd: resolve(this.options.workspace, spec.cwd ?? '.'),
      };
      const launch = this.options.wrapStdio ? this.options.wrapStdio(base, spec) : base;
      const transport = new StdioClientTransport({
        command: launch.command,
        args: [...launch.args],
        env: { ...launch.env },
        cwd: launch.cwd,
        stderr: 'pipe',
      });
      this.stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
      const start = transport.start.bind(transport);
      transport.start = async () => {
        await start();
        this.pid = transport.pid ?? undefined;
      };
      return transport;
    }
    const requestInit: RequestInit = { headers: { ...spec.headers } };
    const url = new URL(spec.url as string);
    const send: McpFetch = this.options.fetch ?? fetch;
    if (spec.transport === 'http') {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      return new StreamableHTTPClientTransport(url, { requestInit, fetch: send });
    }
    const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
    return new SSEClientTransport(url, {
      requestInit,
      fetch: send,
      // The event stream's GET carries the same headers (the SDK's EventSource takes a fetch).
      eventSourceInit: {
        fetch: (input, init) =>
          send(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...spec.headers } }),
      },
    });
  }

  /** The transport closed after the server was ready: a crash unless we closed it. */
  private lost(client: Client): void {
    if (this.closing || this.client !== client) return;
    this.pid = undefined;
    const why = this.stderrTail();
    if (this.spec.transport === 'stdio' && this.restarts === 0) {
      this.restarts += 1;
      this.options.onNote?.(`The MCP server ${this.name} stopped${why}; starting it again.`);
      this.settled = this.connect().catch((error: unknown) => {
        this.fail(`stopped and could not be started again: ${this.describe(error)}`);
      });
      return;
    }
    this.fail(this.spec.transport === 'stdio' ? `stopped again after a restart${why}` : `closed the connection${why}`);
  }

  private fail(reason: string): void {
    if (this.closing) return;
    this.state = 'failed';
    this.error = reason;
    this.pid = undefined;
    const client = this.client;
    this.client = undefined;
    void client?.close().catch(() => undefined);
    this.tools = [];
    this.prompts = [];
    this.resources = [];
    this.changed();
    this.options.onNote?.(
      `The MCP server ${this.name} (${this.spec.transport}, ${this.spec.file}) ${reason}. The session goes on without it; /mcp shows its state.`,
    );
  }

  private stderrTail(): string {
    const lines = this.stderr.trim().split('\n').filter(Boolean);
    return lines.length > 0 ? ` (stderr: ${lines.slice(-3).join(' | ')})` : '';
  }

  private describe(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown } | undefined)?.code;
    if (code === 'ENOENT' && this.spec.transport === 'stdio') {
      return `the command ${JSON.stringify(this.spec.command)} was not found; install it or fix "command" in ${this.spec.file}`;
    }
    const text = `${message.replace(/^MCP error -?\d+: /, '')}${this.stderrTail()}`;
    if (this.spec.transport !== 'stdio' && (code === 401 || (error as Error | undefined)?.name === 'UnauthorizedError')) {
      return `${text}. The server wants authorization, and this version does not do the OAuth sign-in: put a token in the entry's "headers" (for example "Authorization": "Bearer \${TOKEN}") in ${this.spec.file}`;
    }
    return text;
  }

  private changed(): void {
    this.options.onChange?.();
  }

  private setTools(tools: readonly Record<string, unknown>[], notify = true): void {
    this.tools = tools.map((tool) => ({
      name: String(tool.name),
      ...(typeof tool.title === 'string' ? { title: tool.title } : {}),
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      inputSchema: objectSchema(tool.inputSchema),
      ...(isRecord(tool.annotations) ? { annotations: tool.annotations } : {}),
    }));
    if (notify) this.changed();
  }

  private setPrompts(prompts: readonly Record<string, unknown>[], notify = true): void {
    this.prompts = prompts.map((prompt) => ({
      name: String(prompt.name),
      ...(typeof prompt.description === 'string' ? { description: prompt.description } : {}),
      arguments: Array.isArray(prompt.arguments) ? (prompt.arguments as McpPromptInfo['arguments']) : [],
    }));
    if (notify) this.changed();
  }

  private setResources(resources: readonly Record<string, unknown>[], notify = true): void {
    this.resources = resources.map((resource) => ({
      uri: String(resource.uri),
      ...(typeof resource.name === 'string' ? { name: resource.name } : {}),
      ...(typeof resource.mimeType === 'string' ? { mimeType: resource.mimeType } : {}),
    }));
    if (notify) this.changed();
  }

  /** A client for one request: waits out a restart; throws a clear error when the server is down. */
  private async ready(): Promise<Client> {
    if (this.state === 'connecting') await this.settled;
    if (this.state !== 'ready' || !this.client) {
      throw new McpCallError(`The MCP server ${this.name} is not running${this.error ? `: it ${this.error}` : ''}.`);
    }
    return this.client;
  }

  /** `tools/call` under the entry's timeout and the caller's signal. */
  async callTool(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallOutcome> {
    const client = await this.ready();
    const timeoutMs = this.spec.timeoutMs;
    // The SDK never removes its abort listener, so each call gets its own signal linked to the
    // caller's (a turn's signal outlives many calls).
    const own = new AbortController();
    const forward = (): void => own.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        signal: own.signal,
        timeout: timeoutMs ?? NO_TIMEOUT_MS,
      });
      return mapCallResult(result);
    } catch (error) {
      if (signal.aborted) throw error;
      const code = (error as { code?: unknown }).code;
      if (code === -32001 && timeoutMs !== null) {
        throw new McpCallError(`The MCP tool ${tool} of server ${this.name} timed out after ${timeoutMs / 1000} seconds.`);
      }
      if (code === -32000) {
        throw new McpCallError(`The MCP server ${this.name} stopped during the call${this.stderrTail()}.`);
      }
      throw new McpCallError(`The MCP server ${this.name} refused the call: ${this.describe(error)}`);
    } finally {
      signal.removeEventListener('abort', forward);
    }
  }

  /** `prompts/get`: the prompt's messages as plain text, in order. */
  async getPrompt(prompt: string, args: Record<string, string>, signal?: AbortSignal): Promise<string> {
    const client = await this.ready();
    const result = await client.getPrompt({ name: prompt, arguments: args }, signal ? { signal } : {});
    const texts: string[] = [];
    for (const message of result.messages) {
      for (const part of mapCallResult({ content: [message.content] }).content) {
        texts.push(part.type === 'text' ? part.text : `[image ${part.mime}]`);
      }
    }
    return texts.join('\n\n');
  }

  /** `resources/read`: every content item as parts. */
  async readResource(uri: string, signal?: AbortSignal): Promise<ReturnType<typeof mapResource>> {
    const client = await this.ready();
    const result = await client.readResource({ uri }, signal ? { signal } : {});
    return result.contents.flatMap((content) => mapResource(content as Record<string, unknown>));
  }

  async close(): Promise<void> {
    this.closing = true;
    this.state = 'closed';
    const client = this.client;
    this.client = undefined;
    this.pid = undefined;
    await client?.close().catch(() => undefined);
  }
}

async function listAll<T>(
  page: (cursor: string | undefined) => Promise<Record<string, unknown> & { nextCursor?: string }>,
  key: string,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const result = await page(cursor);
    out.push(...((result[key] as T[] | undefined) ?? []));
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return out;
}

/** Providers want an object schema; a server that sends none (or another type) gets an empty one. */
function objectSchema(schema: unknown): Record<string, unknown> {
  if (!isRecord(schema) || schema.type !== 'object') return { type: 'object', properties: {} };
  return schema.properties === undefined ? { ...schema, properties: {} } : schema;
}

function chain(first: (() => void) | undefined, second: () => void): () => void {
  return () => {
    first?.();
    second();
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
