/**
 * HTTPS through a proxy: a CONNECT tunnel, then TLS to the target inside it (transport.ts).
 * node:https and node:tls load with the first tunnel or https address, never for an http:// one
 * (issue 22 item 4), so the agent class is made on first use: `extends https.Agent` at module
 * level would load both when the transport loads.
 */
import http from 'node:http';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ConnectionOptions } from 'node:tls';
import { lazyBuiltin } from '@crystal/core';
import { dialHost, effectivePort, proxyAuthError, TransportSetupError } from './proxy.js';

export type HttpsModule = typeof import('node:https');
export const https = lazyBuiltin<HttpsModule>('node:https');
const tls = lazyBuiltin<typeof import('node:tls')>('node:tls');

/** A keep-alive agent whose connections are TLS inside a CONNECT tunnel through `proxy`. */
export type TunnelAgent = import('node:https').Agent;

/**
 * A request's hold on the CONNECT its tunnel agent makes for it (the `pendingTunnel` request
 * option): `cancel` is set while the proxy has not answered. Until then the request has no
 * socket, so `req.destroy()` (a timeout, an abort) reaches nothing and the request would wait
 * for the proxy for ever (REL-5); `cancel` ends the CONNECT and fails the request with `error`.
 */
export interface PendingTunnel {
  cancel?: ((error: Error) => void) | undefined;
  /** The proxy's host and port (never its credentials), for the timeout's message. */
  proxy?: string | undefined;
}

let TunnelClass: (new (proxy: URL, ca: string[] | undefined) => TunnelAgent) | undefined;

export function tunnelAgent(proxy: URL, ca: string[] | undefined): TunnelAgent {
  TunnelClass ??= defineTunnel();
  return new TunnelClass(proxy, ca);
}

function defineTunnel(): new (proxy: URL, ca: string[] | undefined) => TunnelAgent {
  return class Tunnel extends https().Agent {
    constructor(
      private readonly proxy: URL,
      private readonly ca: string[] | undefined,
    ) {
      super({ keepAlive: true, ...(ca ? { ca } : {}) });
    }

    /** A CONNECT tunnel through the proxy, then TLS to the target inside it. */
    override createConnection(
      options: http.ClientRequestArgs & { servername?: string; pendingTunnel?: PendingTunnel },
      callback?: (error: Error | null, socket: Duplex) => void,
    ): undefined {
      const pending = options.pendingTunnel;
      let answered = false;
      const done = (error: Error | null, socket: Duplex): void => {
        if (answered) return;
        answered = true;
        if (pending) pending.cancel = undefined;
        callback?.(error, socket);
      };
      const socketless = undefined as unknown as Duplex;
      const host = options.host ?? options.hostname ?? 'localhost';
      const port = options.port ?? 443;
      const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      const connect = (this.proxy.protocol === 'https:' ? https() : http).request({
        host: dialHost(this.proxy.hostname),
        port: effectivePort(this.proxy),
        method: 'CONNECT',
        path: authority,
        headers: { host: authority, ...proxyAuthorization(this.proxy) },
        // A tunnel consumes its connection; the keep-alive pool is the TLS sockets inside tunnels.
        agent: false,
        // An https:// proxy is trusted by the same list as the provider (caFile, NODE_EXTRA_CA_CERTS).
        ...(this.ca ? { ca: this.ca } : {}),
      });
      connect.once('connect', (response, socket) => {
        if (response.statusCode === 407) {
          socket.destroy();
          done(proxyAuthError(this.proxy), socketless);
          return;
        }
        const status = response.statusCode ?? 0;
        if (status !== 200) {
          socket.destroy();
          const refused = `the proxy ${this.proxy.host} refused the tunnel to ${authority} (HTTP ${status})`;
          // 5xx and 429: the proxy could not reach the host for now, retried as a network failure.
          // Any other answer (403: its policy blocks the host) would be the same on every retry.
          done(
            status >= 500 || status === 429
              ? new Error(refused)
              : new TransportSetupError(
                  `${refused}. If its policy blocks this host, ask the proxy's administrator, or name the host in NO_PROXY if it can be reached directly.`,
                ),
            socketless,
          );
          return;
        }
        const secure = tls().connect({
          socket,
          servername: options.servername ?? (isIp(host) ? undefined : host),
          ...(this.ca ? { ca: this.ca } : {}),
          ALPNProtocols: ['http/1.1'],
        } as ConnectionOptions);
        done(null, secure);
      });
      connect.on('error', (error) => done(error, socketless));
      if (pending) {
        pending.proxy = this.proxy.host;
        pending.cancel = (error) => {
          done(error, socketless);
          connect.destroy();
        };
      }
      connect.end();
      return undefined;
    }
  };
}

/** Whether a host is an IP address (TLS sends no server name for one); node:net decides, as for NO_PROXY. */
export function isIp(host: string): boolean {
  return isIP(dialHost(host)) !== 0;
}
export function proxyAuthorization(proxy: URL): Record<string, string> {
  if (proxy.username === '') return {};
  const user = decodeURIComponent(proxy.username);
  const password = decodeURIComponent(proxy.password);
  return { 'proxy-authorization': `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}
