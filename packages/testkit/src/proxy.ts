/**
 * A forward proxy on 127.0.0.1 for tests: CONNECT tunnels (https) and absolute-form requests
 * (http). Whatever host a request names, the proxy dials 127.0.0.1 on the named port, so a test
 * can use a name only the proxy "resolves" and prove the request went through it.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';

export interface TestProxy {
  readonly url: string;
  /** `CONNECT host:port` targets and absolute-form URLs, in order. */
  readonly seen: string[];
  /** Proxy-Authorization headers received, in order. */
  readonly authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/** With `tls`, the proxy itself speaks TLS (an `https://` proxy address); `host` is where it listens (default 127.0.0.1). */
export async function startTestProxy(options: { tls?: { key: string; cert: string }; host?: string } = {}): Promise<TestProxy> {
  const host = options.host ?? '127.0.0.1';
  const seen: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const sockets = new Set<Socket>();
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    seen.push(req.url ?? '');
    authorizations.push(req.headers['proxy-authorization']);
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute-form request expected');
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = request(
      {
        host: '127.0.0.1',
        port: Number(target.port || 80),
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  };
  const server: Server = options.tls ? createTlsServer(options.tls, handler) : createServer(handler);
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req, client: Socket, head) => {
    seen.push(req.url ?? '');
    authorizations.push(req.headers['proxy-authorization']);
    const port = Number(/:(\d+)$/.exec(req.url ?? '')?.[1] ?? 443);
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    url: `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`,
    seen,
    authorizations,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
