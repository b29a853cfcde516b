/**
 * The lean HTTP transport every provider wire (and later an MCP client) uses: `node:http` /
 * `node:https` with keep-alive agents, HTTP(S)_PROXY / NO_PROXY (CONNECT tunnels for https,
 * absolute-form for http), extra CA certificates, connect and first-byte timeouts, and abort.
 *
 * Why not global `fetch`: measured on this machine, one bare GET costs ~65 ms of in-process time
 * with fetch (loading undici) against ~30 ms over `node:http`, and a 2,000-token streamed
 * request plus parse 85 ms against 30 ms; undici's own `request` (v7, from npm) was slower
 * still here (~105 ms, mostly loading it). `bench/transport.mjs` keeps the comparison.
 *
 * It never follows redirects (the caller decides, SEC-7) and never decodes content encodings
 * (no `accept-encoding` is sent).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { Readable } from 'node:stream';
import { lazyBuiltin } from '@crystal/core';
import { type BodyReader, bodyReader } from './body-reader.js';
import { coalesceReads, type ReadCoalescer } from './read-coalescer.js';
import { dialHost, effectivePort, type ProxyEnv, proxyAuthError, proxyFor, TransportSetupError } from './proxy.js';
import {
  type HttpsModule,
  https,
  isIp,
  type PendingTunnel,
  proxyAuthorization,
  type TunnelAgent,
  tunnelAgent,
} from './tunnel.js';

// Issue 22 item 4: node:https and node:tls load for the first https address, node:zlib for the
// first compressed body; an http:// provider with plain replies loads neither.
const tls = lazyBuiltin<typeof import('node:tls')>('node:tls');
const zlib = lazyBuiltin<typeof import('node:zlib')>('node:zlib');

export interface TransportRequest {
  readonly url: string;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  readonly signal?: AbortSignal | undefined;
  /** Time allowed to open the connection (TCP, proxy tunnel and TLS), in ms. */
  readonly connectTimeoutMs?: number | undefined;
  /** Time allowed between the connection and the response headers, in ms. */
  readonly firstByteTimeoutMs?: number | undefined;
  /**
   * A streamed reply: while its frames come fast, reads are gathered into fewer wake-ups
   * (read-coalescer.ts). The first bytes, and the first after a quiet gap, are never delayed.
   */
  readonly coalesceReads?: boolean | undefined;
  /**
   * The request (its headers and body) is written once this settles, either way; the connection
   * is opened meanwhile, and the first-byte timeout runs from the later of the two (issue 22:
   * the engine's save of the user message, REL-1, overlaps the request's preparation).
   */
  readonly sendAfter?: PromiseLike<unknown> | undefined;
}

export interface TransportResponse {
  readonly status: number;
  readonly url: string;
  readonly headers: {
    get(name: string): string | null;
    /** Every header as received (a repeated one once per value), names in lower case. */
    entries(): Iterable<[string, string]>;
  };
  /** The body, one Buffer per network read. */
  readonly body: AsyncIterable<Uint8Array>;
  /** Reads at most `maxBytes` of the body as UTF-8 and discards the rest. */
  text(maxBytes: number): Promise<string>;
  /** Ends the response early; a pending read rejects with `error`. */
  destroy(error?: Error): void;
  /** Releases the connection for reuse: reads what is left of the body (briefly), then resolves. */
  close(): Promise<void>;
}

export interface Transport {
  request(request: TransportRequest): Promise<TransportResponse>;
}

export interface TransportOptions {
  /** Where HTTPS_PROXY / HTTP_PROXY / NO_PROXY are read (default `process.env`). */
  readonly env?: ProxyEnv | undefined;
  /** A PEM file of extra certificate authorities, added to the default ones (and NODE_EXTRA_CA_CERTS). */
  readonly caFile?: string | undefined;
  /** How long a finished stream's remaining bytes are read in the background, in ms (default 2 s). */
  readonly drainGraceMs?: number | undefined;
}

/** A timeout of the transport; `setting` names the config key that sets it. */
export class TransportTimeout extends Error {
  override readonly name = 'TransportTimeout';
  readonly code = 'ETIMEDOUT';
  constructor(
    readonly phase: 'connect' | 'first-byte' | 'idle',
    readonly ms: number,
    readonly setting: string,
    /** A connect timeout while this proxy had not answered the tunnel's CONNECT (host:port). */
    readonly proxy?: string,
  ) {
    super(
      phase === 'connect'
        ? proxy !== undefined
          ? `the proxy ${proxy} did not answer the CONNECT within ${seconds(ms)} (${setting})`
          : `no connection within ${seconds(ms)} (${setting})`
        : phase === 'first-byte'
          ? `no response within ${seconds(ms)} of connecting (${setting})`
          : `no stream event for ${seconds(ms)} (${setting})`,
    );
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

export function transportAbortError(): Error {
  const error = new Error('The request was cancelled.');
  error.name = 'AbortError';
  return error;
}

const crypto = lazyBuiltin<typeof import('node:crypto')>('node:crypto');

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The text of NODE_EXTRA_CA_CERTS, or undefined when it cannot be read (as Node, which warned at start). */
function readExtraCa(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The certificates of `caFile`, checked: Node's TLS takes a `ca` entry that holds no certificate
 * without a word, and the user would only see every request fail as untrusted. So a file with no
 * PEM certificate (a DER `.cer`, a key, the wrong file) or a damaged one is an error naming it.
 */
function readCaFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`Cannot read the certificate file ${file} (caFile): ${(error as Error).message}`);
  }
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    throw new Error(
      `The certificate file ${file} (caFile) holds no PEM certificate (no -----BEGIN CERTIFICATE----- block); a DER file converts with: openssl x509 -inform der -in ${file} -out ${file}.pem`,
    );
  }
  blocks.forEach((block, index) => {
    try {
      new (crypto().X509Certificate)(block);
    } catch (error) {
      throw new Error(`Certificate ${index + 1} of ${blocks.length} in ${file} (caFile) is damaged: ${(error as Error).message}`);
    }
  });
  return text;
}

export function createTransport(options: TransportOptions = {}): Transport {
  const env = options.env ?? process.env;
  const drainGraceMs = options.drainGraceMs ?? DRAIN_GRACE_MS;
  // Node reads NODE_EXTRA_CA_CERTS once at start into its default store; an explicit list
  // (for caFile, or an environment other than the process's) must name it again.
  let ca: string[] | undefined;
  const extra = env.NODE_EXTRA_CA_CERTS;
  if (options.caFile !== undefined || (extra && extra !== process.env.NODE_EXTRA_CA_CERTS)) {
    ca = [...tls().rootCertificates];
    // Node skips an unreadable NODE_EXTRA_CA_CERTS with a warning at start; so does this list.
    const extraText = extra ? readExtraCa(extra) : undefined;
    if (extraText !== undefined) ca.push(extraText);
    if (options.caFile !== undefined) ca.push(readCaFile(options.caFile));
  }
  const httpAgent = new http.Agent({ keepAlive: true });
  let httpsPool: http.Agent | undefined;
  const httpsAgent = (): http.Agent => {
    httpsPool ??= new (https().Agent)({ keepAlive: true, ...(ca ? { ca } : {}) });
    return httpsPool;
  };
  const tunnels = new Map<string, TunnelAgent>();

  function route(target: URL): {
    module: typeof http | HttpsModule;
    agent: http.Agent;
    host: string;
    port: number;
    path: string;
    extraHeaders: Record<string, string>;
    /** A plain http request sent to this proxy (its 407 is the proxy's, not the server's). */
    proxy?: URL;
  } {
    const proxy = proxyFor(target, env);
    if (!proxy) {
      const secure = target.protocol === 'https:';
      return {
        module: secure ? https() : http,
        agent: secure ? httpsAgent() : httpAgent,
        host: dialHost(target.hostname),
        port: effectivePort(target),
        path: `${target.pathname}${target.search}`,
        extraHeaders: {},
      };
    }
    const proxySecure = proxy.protocol === 'https:';
    if (target.protocol === 'https:') {
      let agent = tunnels.get(proxy.href);
      if (!agent) {
        agent = tunnelAgent(proxy, ca);
        tunnels.set(proxy.href, agent);
      }
      return {
        module: https(),
        agent,
        host: dialHost(target.hostname),
        port: effectivePort(target),
        path: `${target.pathname}${target.search}`,
        extraHeaders: {},
      };
    }
    // Plain http through a proxy: the absolute-form request line, sent to the proxy itself.
    return {
      module: proxySecure ? https() : http,
      agent: proxySecure ? httpsAgent() : httpAgent,
      host: dialHost(proxy.hostname),
      port: effectivePort(proxy),
      path: target.href,
      extraHeaders: { host: target.host, ...proxyAuthorization(proxy) },
      proxy,
    };
  }

  return {
    request(request) {
      return new Promise<TransportResponse>((resolve, reject) => {
        const target = new URL(request.url);
        if (target.protocol !== 'http:' && target.protocol !== 'https:') {
          reject(
            new TransportSetupError(`Only http and https addresses can be requested, not ${target.protocol} (${target.href}).`),
          );
          return;
        }
        if (request.signal?.aborted) {
          reject(transportAbortError());
          return;
        }
        const way = route(target);
        const body = request.body;
        const headers: Record<string, string | number> = { ...request.headers, ...way.extraHeaders };
        if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
        // A tunnel agent's CONNECT, while the proxy has not answered (tunnel.ts): a timeout or an abort ends it too.
        const pendingTunnel: PendingTunnel = {};
        const req = way.module.request({
          host: way.host,
          port: way.port,
          method: request.method ?? 'GET',
          path: way.path,
          headers,
          agent: way.agent,
          pendingTunnel,
          ...(target.protocol === 'https:' && !isIp(way.host) ? { servername: target.hostname } : {}),
        } as http.RequestOptions);
        const stop = (error: Error): void => {
          pendingTunnel.cancel?.(error);
          req.destroy(error);
        };
        let settled = false;
        let timer: NodeJS.Timeout | undefined;
        const clear = (): void => {
          if (timer) clearTimeout(timer);
          timer = undefined;
        };
        const fail = (error: Error): void => {
          clear();
          request.signal?.removeEventListener('abort', onAbort);
          if (!settled) {
            settled = true;
            reject(error);
          }
        };
        const onAbort = (): void => {
          stop(transportAbortError());
        };
        request.signal?.addEventListener('abort', onAbort, { once: true });

        // The first-byte clock starts once the connection is open and the request written.
        let connected = false;
        let sent = request.sendAfter === undefined;
        const startFirstByte = (): void => {
          clear();
          const ms = request.firstByteTimeoutMs;
          if (ms !== undefined) {
            timer = setTimeout(() => stop(new TransportTimeout('first-byte', ms, 'retry.firstByteTimeoutSeconds')), ms);
            timer.unref();
          }
        };
        const onConnected = (): void => {
          connected = true;
          clear();
          if (sent) startFirstByte();
        };
        if (request.connectTimeoutMs !== undefined) {
          const ms = request.connectTimeoutMs;
          timer = setTimeout(() => {
            const proxy = pendingTunnel.cancel ? pendingTunnel.proxy : undefined;
            stop(new TransportTimeout('connect', ms, 'retry.connectTimeoutSeconds', proxy));
          }, ms);
          timer.unref();
        }
        req.once('socket', (socket) => {
          // A TLS socket says `encrypted` (asking node:tls would load it for an http:// request).
          const secure = (socket as { encrypted?: boolean }).encrypted === true;
          if (req.reusedSocket || (!socket.connecting && !secure)) {
            onConnected();
            return;
          }
          socket.once(secure ? 'secureConnect' : 'connect', onConnected);
        });
        req.on('error', fail);
        req.once('response', (res) => {
          clear();
          if (res.statusCode === 407 && way.proxy) {
            res.destroy();
            fail(proxyAuthError(way.proxy));
            return;
          }
          settled = true;
          const onAbortResponse = (): void => {
            res.destroy(transportAbortError());
          };
          request.signal?.removeEventListener('abort', onAbort);
          request.signal?.addEventListener('abort', onAbortResponse, { once: true });
          res.once('close', () => request.signal?.removeEventListener('abort', onAbortResponse));
          resolve(wrapResponse(res, target.href, request.coalesceReads ? coalesceReads(res) : undefined, drainGraceMs));
        });
        if (request.sendAfter === undefined) {
          req.end(body);
          return;
        }
        const send = (): void => {
          // Aborted or failed while waiting: nothing is written.
          if (req.destroyed) return;
          sent = true;
          req.end(body);
          if (connected) startFirstByte();
        };
        request.sendAfter.then(send, send);
      });
    },
  };
}

/** How long a finished stream's remaining bytes are read to keep its connection alive. */
const DRAIN_GRACE_MS = 2000;
/**
 * How long `close()` waits for the end of a finished stream's body before it returns: the end
 * (the chunked terminator) normally comes with the last event or right after it, and the next
 * request then finds the connection in the pool. A server that keeps the body open does not hold
 * the reply's last events back longer than this (it held them for the whole grace, 2 s).
 */
const DRAIN_WAIT_MS = 50;

/**
 * The body as sent, decoded when a server compresses it although no `accept-encoding` was sent
 * (some proxies do); the frame cap and timeouts then apply to the decoded bytes.
 */
function decodedBody(res: http.IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib().createGunzip()
      : encoding === 'deflate'
        ? zlib().createInflate()
        : encoding === 'br'
          ? zlib().createBrotliDecompress()
          : undefined;
  if (!decoder) return res;
  // A reader of the decoded body sees errors through its iterator; with no reader (the body
  // closed early) an error must not become an uncaught exception.
  decoder.on('error', () => {});
  res.on('error', (error) => decoder.destroy(error));
  res.on('close', () => {
    if (!res.complete) decoder.destroy(new Error('aborted'));
  });
  return res.pipe(decoder);
}

function wrapResponse(
  res: http.IncomingMessage,
  url: string,
  coalescer: ReadCoalescer | undefined,
  drainGraceMs: number,
): TransportResponse {
  // Readers see errors through the body's iterator; one destroyed with nobody reading must not crash.
  res.on('error', () => {});
  const stream = decodedBody(res);
  let reader: BodyReader | undefined;
  const body: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => (reader ??= bodyReader(stream)) };
  return {
    status: res.statusCode ?? 0,
    url,
    headers: {
      get(name: string): string | null {
        const value = res.headers[name.toLowerCase()];
        if (value === undefined) return null;
        return Array.isArray(value) ? value.join(', ') : value;
      },
      *entries(): Iterable<[string, string]> {
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          if (Array.isArray(value)) for (const one of value) yield [name, one];
          else yield [name, value];
        }
      },
    },
    body,
    async text(maxBytes: number): Promise<string> {
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of body as AsyncIterable<Buffer>) {
          const room = maxBytes - size;
          chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          size += Math.min(chunk.length, room);
          if (size >= maxBytes) break;
        }
      } catch {
        // a body cut short: what arrived is the text
      }
      res.destroy();
      return new TextDecoder().decode(Buffer.concat(chunks));
    },
    destroy(error?: Error): void {
      res.destroy(error);
    },
    close(): Promise<void> {
      // The rest is read now, not after a coalescing window.
      coalescer?.release();
      if (res.destroyed || res.readableEnded) return Promise.resolve();
      reader?.stop();
      // The stream's last event was read before the body's end (the chunked terminator may be
      // parsed and still unread, or on the way): read the rest so the agent takes the socket
      // back for the next request, within a short grace. `resume()` would not do it while the
      // body's async iterator keeps a 'readable' listener, so read directly.
      return new Promise<void>((resolve) => {
        const grace = setTimeout(() => res.destroy(), drainGraceMs);
        grace.unref();
        // After DRAIN_WAIT_MS the caller goes on and the rest is read in the background, where it
        // does not keep the process alive (a `crystal run` whose server keeps the body open exits).
        const wait = setTimeout(() => {
          res.socket?.unref();
          resolve();
        }, DRAIN_WAIT_MS);
        const done = (): void => {
          clearTimeout(grace);
          clearTimeout(wait);
          res.off('readable', drain);
          // The agent takes the socket back on a later tick; the next request should find it there.
          setImmediate(resolve);
        };
        const drain = (): void => {
          while (res.read() !== null) {
            // discard
          }
        };
        res.once('end', done);
        res.once('close', done);
        res.once('error', done);
        res.on('readable', drain);
        if (stream !== res) stream.resume();
        drain();
      });
    },
  };
}

let shared: Transport | undefined;

/** The process-wide transport (proxy variables from `process.env`, no extra CA file). */
export function defaultTransport(): Transport {
  shared ??= createTransport();
  return shared;
}
