/**
 * The network filter of the sandbox: an HTTP proxy on a Unix socket in a private folder. A
 * sandboxed command has no network of the host's; `socat` bridges 127.0.0.1:3128 in its network
 * namespace to this socket (the session's bridge, bridge.ts, or one of its own) and
 * `HTTP(S)_PROXY` points there, so every HTTPS `CONNECT host:port` and every plain
 * `GET http://host/…` comes here first and `decide(host, port)` says yes or no (an allow list, a
 * grant, or an ask). A refusal is a `403` whose body says `[sandbox]` and how to allow the host.
 * Programs that ignore the proxy variables simply have no network.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The port the bridge listens on inside the sandbox. */
export const PROXY_PORT = 3128;
const MAX_HEAD_BYTES = 64 * 1024;

export interface ProxyConnection {
  readonly host: string;
  readonly port: number;
  /** Aborted when the client goes away (a pending ask can be withdrawn). */
  readonly signal: AbortSignal;
}

export interface NetworkProxyOptions {
  decide(connection: ProxyConnection): Promise<boolean>;
  /** The refusal text for a host, e.g. how to allow it. */
  refusal(host: string): string;
}

export interface NetworkProxy {
  /** The Unix socket on the host; bind its folder into the sandbox. */
  readonly socket: string;
  readonly dir: string;
  close(): void;
}

export async function startNetworkProxy(options: NetworkProxyOptions): Promise<NetworkProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'crystal-sandbox-net-'));
  const socket = join(dir, 'proxy.sock');
  const server = createServer((client) => handle(client, options));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  // The proxy never keeps the agent alive on its own.
  server.unref();
  const close = (): void => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', close);
  return { socket, dir, close };
}

function handle(client: Socket, options: NetworkProxyOptions): void {
  const abort = new AbortController();
  client.on('close', () => abort.abort());
  client.on('error', () => client.destroy());
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) {
      if (head.length > MAX_HEAD_BYTES) reply(client, 431, 'request head too large');
      return;
    }
    client.off('data', onData);
    client.pause();
    void route(client, head.subarray(0, end + 4), head.subarray(end + 4), options, abort.signal);
  };
  client.on('data', onData);
}

async function route(
  client: Socket,
  head: Buffer,
  rest: Buffer,
  options: NetworkProxyOptions,
  signal: AbortSignal,
): Promise<void> {
  const text = head.toString('latin1');
  const firstLine = text.slice(0, text.indexOf('\r\n'));
  const [method = '', target = '', version = 'HTTP/1.1'] = firstLine.split(' ');
  const where = method === 'CONNECT' ? authority(target, 443) : absolute(target);
  if (!where) {
    reply(client, 400, 'the sandbox proxy takes CONNECT host:port or an absolute http:// URL');
    return;
  }
  let allowed = false;
  try {
    allowed = await options.decide({ host: where.host, port: where.port, signal });
  } catch {
    allowed = false;
  }
  if (client.destroyed) return;
  if (!allowed) {
    reply(client, 403, options.refusal(where.host));
    return;
  }
  const upstream = connect(where.port, where.host);
  upstream.on('error', (error) => {
    if (!client.destroyed) reply(client, 502, `[sandbox] could not reach ${where.host}:${where.port} (${error.message})`);
    upstream.destroy();
  });
  upstream.on('connect', () => {
    if (method === 'CONNECT') client.write(`${version} 200 Connection Established\r\n\r\n`);
    else upstream.write(Buffer.concat([Buffer.from(originForm(text, firstLine, method, where.path, version), 'latin1'), rest]));
    if (method === 'CONNECT' && rest.length > 0) upstream.write(rest);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  });
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
}

function authority(target: string, defaultPort: number): { host: string; port: number; path: string } | undefined {
  const match = /^\[?([A-Za-z0-9.:-]+?)\]?(?::(\d+))?$/.exec(target);
  if (!match?.[1]) return undefined;
  const port = match[2] ? Number(match[2]) : defaultPort;
  return port > 0 && port < 65536 ? { host: match[1].toLowerCase(), port, path: '' } : undefined;
}

function absolute(target: string): { host: string; port: number; path: string } | undefined {
  try {
    const url = new URL(target);
    if (url.protocol !== 'http:') return undefined;
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    return { host, port: url.port ? Number(url.port) : 80, path: `${url.pathname}${url.search}` };
  } catch {
    return undefined;
  }
}

function originForm(text: string, firstLine: string, method: string, path: string, version: string): string {
  const headers = text
    .slice(firstLine.length)
    .split('\r\n')
    .filter((line) => !/^proxy-(connection|authorization):/i.test(line))
    .join('\r\n');
  return `${method} ${path || '/'} ${version}${headers}`;
}

function reply(client: Socket, status: number, body: string): void {
  const reason =
    status === 403
      ? 'Forbidden'
      : status === 502
        ? 'Bad Gateway'
        : status === 431
          ? 'Request Header Fields Too Large'
          : 'Bad Request';
  const bytes = Buffer.from(`${body}\n`, 'utf8');
  client.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n${bytes.toString('utf8')}`,
  );
}
