/**
 * Real MCP servers for the tests: `@modelcontextprotocol/server-everything` and
 * `@modelcontextprotocol/server-filesystem` from npm over stdio, and server-everything's own
 * server factory behind the SDK's Streamable HTTP and legacy SSE server transports on 127.0.0.1
 * (its bundled HTTP launchers listen on every address, which tests here must not do).
 */
import { createServer as createHttpServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServerSpec } from '../src/index.js';

const require = createRequire(import.meta.url);
const everythingRoot = dirname(require.resolve('@modelcontextprotocol/server-everything/package.json'));
const filesystemRoot = dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json'));
export const EVERYTHING_BIN = join(everythingRoot, 'dist', 'index.js');
export const FILESYSTEM_BIN = join(filesystemRoot, 'dist', 'index.js');

export function stdioSpec(name: string, args: readonly string[], extra: Partial<McpServerSpec> = {}): McpServerSpec {
  return {
    name,
    source: 'home',
    file: '/test/config.json',
    transport: 'stdio',
    command: process.execPath,
    args,
    env: {},
    headers: {},
    trust: false,
    timeoutMs: 30_000,
    ...extra,
  };
}

export const everythingSpec = (name = 'everything', extra: Partial<McpServerSpec> = {}): McpServerSpec =>
  stdioSpec(name, [EVERYTHING_BIN, 'stdio'], extra);

export function httpSpec(
  name: string,
  url: string,
  transport: 'http' | 'sse',
  extra: Partial<McpServerSpec> = {},
): McpServerSpec {
  return { ...stdioSpec(name, []), transport, url, args: [], ...extra };
}

export interface EverythingHttp {
  readonly url: string;
  /** Headers of every request, in order. */
  readonly requests: { method: string; path: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

type ServerFactory = () => { server: { connect(t: unknown): Promise<void>; close(): Promise<void> }; cleanup(id?: string): void };

async function everythingFactory(): Promise<ServerFactory> {
  const module = (await import(join(everythingRoot, 'dist', 'server', 'index.js'))) as { createServer: ServerFactory };
  return module.createServer;
}

/**
 * server-everything over Streamable HTTP (`/mcp`) and legacy HTTP+SSE (`/sse`, `/message`) on 127.0.0.1;
 * with `tls`, over HTTPS with that key and certificate.
 */
export async function startEverythingHttp(tls?: { key: string; cert: string }): Promise<EverythingHttp> {
  const createServer = await everythingFactory();
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  const cleanups: (() => Promise<void>)[] = [];
  const requests: EverythingHttp['requests'] = [];
  const listener: RequestListener = async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers });
    try {
      // A server that moved (307, same origin, as FastMCP's /mcp to /mcp/), and one that sends the client to another origin.
      if (url.pathname === '/moved') {
        res.writeHead(307, { location: '/mcp' }).end();
        return;
      }
      if (url.pathname === '/elsewhere') {
        const { port } = http.address() as AddressInfo;
        res.writeHead(307, { location: `${tls ? 'https' : 'http'}://localhost:${port}/mcp` }).end();
        return;
      }
      if (url.pathname === '/mcp') {
        const id = req.headers['mcp-session-id'];
        let transport = typeof id === 'string' ? streamable.get(id) : undefined;
        if (!transport) {
          const { server, cleanup } = createServer();
          const created = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => crypto.randomUUID(),
            onsessioninitialized: (sessionId) => {
              streamable.set(sessionId, created);
            },
          });
          cleanups.push(async () => {
            cleanup();
            await server.close().catch(() => undefined);
          });
          await server.connect(created);
          transport = created;
        }
        await transport.handleRequest(req, res);
        return;
      }
      if (url.pathname === '/sse' && req.method === 'GET') {
        const { server, cleanup } = createServer();
        const transport = new SSEServerTransport('/message', res);
        sse.set(transport.sessionId, transport);
        cleanups.push(async () => {
          cleanup();
          await server.close().catch(() => undefined);
        });
        await server.connect(transport);
        return;
      }
      if (url.pathname === '/message' && req.method === 'POST') {
        const transport = sse.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) {
          res.writeHead(404).end('no such session');
          return;
        }
        await transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(404).end();
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  };
  const http: Server = tls ? createHttpsServer(tls, listener) : createHttpServer(listener);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    close: async () => {
      for (const cleanup of cleanups) await cleanup();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
