/**
 * A scripted fake provider on 127.0.0.1: real HTTP, real SSE/NDJSON framing, real status codes
 * and headers. Every request is recorded so tests assert on what went over the wire.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { FakeReply, FakeScript } from './script.js';
import type { WireEncoder } from './wire.js';
import { answerModels, DEFAULT_FAKE_MODELS, type FakeModel } from './models-endpoint.js';
import { wireByName } from './wires/index.js';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** Header names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;
  readonly rawBody: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  readonly body: unknown;
}

export interface FakeProviderOptions {
  readonly wire?: WireEncoder | string;
  readonly replies?: readonly FakeReply[];
  readonly whenExhausted?: FakeScript['whenExhausted'];
  readonly port?: number;
  /** Chooses the reply from the request itself (used when the order of requests is not fixed). */
  readonly replyFor?: (request: { readonly path: string; readonly body: unknown }) => FakeReply;
  /** What the wire's model-list endpoint serves (default DEFAULT_FAKE_MODELS). */
  readonly models?: readonly FakeModel[];
  /** When set, a model-list request with another key gets the wire's 401. */
  readonly requireKey?: string;
  /** Serve HTTPS with this key and certificate (PEM) instead of plain HTTP. */
  readonly tls?: { readonly key: string; readonly cert: string };
}

export class FakeProvider {
  readonly requests: RecordedRequest[] = [];
  /** TCP connections accepted so far (keep-alive reuse shows as fewer connections than requests). */
  connections = 0;
  private readonly queue: FakeReply[];
  private last: FakeReply | undefined;
  private readonly sockets = new Set<import('node:net').Socket>();

  private replyFor: FakeProviderOptions['replyFor'];
  private models: readonly FakeModel[] = DEFAULT_FAKE_MODELS;
  private requireKey: string | undefined;

  private constructor(
    private readonly server: Server,
    readonly wire: WireEncoder,
    replies: readonly FakeReply[],
    private readonly whenExhausted: 'repeat-last' | 'error',
  ) {
    this.queue = [...replies];
    server.on('connection', (socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(options: FakeProviderOptions = {}): Promise<FakeProvider> {
    const wire =
      typeof options.wire === 'string' || options.wire === undefined ? wireByName(options.wire ?? 'openai') : options.wire;
    const server = options.tls ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }) : createServer();
    const fake = new FakeProvider(server, wire, options.replies ?? [], options.whenExhausted ?? 'repeat-last');
    fake.replyFor = options.replyFor;
    if (options.models) fake.models = options.models;
    fake.requireKey = options.requireKey;
    server.on('request', (req, res) => void fake.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The server root, e.g. `http://127.0.0.1:PORT/`. */
  get url(): string {
    return `${'addContext' in this.server ? 'https' : 'http'}://127.0.0.1:${this.port}/`;
  }

  /** The API root an OpenAI-style SDK takes (`…/v1/`). */
  get baseUri(): string {
    return `${this.url}v1/`;
  }

  /** The `baseUri` a config entry of `protocol` takes for this server (the adapter appends the wire's path). */
  baseUriFor(protocol: string): string {
    return protocol === 'openai' || protocol === 'deepseek' || protocol === 'responses' ? this.baseUri : this.url;
  }

  enqueue(...replies: FakeReply[]): void {
    this.queue.push(...replies);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private nextReply(): FakeReply {
    const next = this.queue.shift();
    if (next) {
      this.last = next;
      return next;
    }
    if (this.whenExhausted === 'repeat-last' && this.last) return this.last;
    return { error: { status: 500, message: 'fake provider: no scripted reply left' } };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (await this.handleModels(req, res)) return;
    if (this.replyFor) return this.handleWith(req, res, this.replyFor);
    const reply = this.nextReply();
    const path = req.url ?? '/';
    if (reply.hangUpOnRequest) {
      this.requests.push({ method: req.method ?? 'GET', path, headers: lowerHeaders(req), rawBody: '', body: undefined });
      req.socket.destroy();
      return;
    }
    const rawBody = await readBody(req);
    let body: unknown;
    try {
      body = rawBody === '' ? undefined : JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    this.requests.push({ method: req.method ?? 'GET', path, headers: lowerHeaders(req), rawBody, body });

    await this.respond(res, reply, path, body);
  }

  /** Answers the wire's model-list endpoints (SETUP-3); false when the request is not one. */
  private async handleModels(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const path = req.url ?? '/';
    const method = req.method ?? 'GET';
    const isList = /\/(models|api\/tags|api\/show)(\?|$)/.test(path);
    if (!isList) return false;
    const rawBody = await readBody(req);
    let body: unknown;
    try {
      body = rawBody === '' ? undefined : JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    const answer = answerModels(this.wire.name, method, path, body, this.models);
    if (!answer) return false;
    const headers = lowerHeaders(req);
    this.requests.push({ method, path, headers, rawBody, body });
    if (this.requireKey !== undefined) {
      const given =
        headers['x-api-key'] ??
        headers['x-goog-api-key'] ??
        (headers.authorization?.startsWith('Bearer ') ? headers.authorization.slice(7) : undefined);
      if (given !== this.requireKey) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify(this.wire.errorBody(401, 'fake provider: invalid API key')));
        return true;
      }
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
    return true;
  }

  /** Reads the request first, then lets `replyFor` choose the reply from it. */
  private async handleWith(
    req: IncomingMessage,
    res: ServerResponse,
    choose: NonNullable<FakeProviderOptions['replyFor']>,
  ): Promise<void> {
    const path = req.url ?? '/';
    const rawBody = await readBody(req);
    let body: unknown;
    try {
      body = rawBody === '' ? undefined : JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    this.requests.push({ method: req.method ?? 'GET', path, headers: lowerHeaders(req), rawBody, body });
    const reply = choose({ path, body });
    await this.respond(res, reply, path, body);
  }

  private async respond(res: ServerResponse, reply: FakeReply, path: string, body: unknown): Promise<void> {
    if (reply.noAnswer) return;
    if (reply.raw) {
      res.writeHead(reply.raw.status ?? 200, { 'content-type': reply.raw.contentType ?? 'text/plain' });
      res.end(reply.raw.body);
      return;
    }
    if (reply.error) {
      const { status, headers = {}, message = `fake error ${reply.error.status}` } = reply.error;
      const payload = reply.error.body ?? this.wire.errorBody(status, message);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
      return;
    }
    const encoded = this.wire.encodeStream(reply, { path, body });
    res.writeHead(200, {
      'content-type': encoded.contentType,
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...(reply.headers ?? {}),
    });
    if (reply.stallAfter !== undefined) {
      res.flushHeaders();
      for (const chunk of encoded.chunks.slice(0, reply.stallAfter)) res.write(chunk);
      return;
    }
    if (reply.trickleMs !== undefined) {
      for (const char of encoded.chunks.join('')) {
        await sleep(reply.trickleMs);
        if (res.destroyed) return;
        res.write(char);
      }
      res.end();
      return;
    }
    const drop = reply.dropAfter;
    const chunks = drop === undefined ? encoded.chunks : encoded.chunks.slice(0, drop);
    for (const chunk of chunks) {
      if (reply.delayMs) await sleep(reply.delayMs);
      if (res.destroyed) return;
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    }
    if (drop !== undefined && drop < encoded.chunks.length) {
      // Flush what was written, then cut the connection without ending the chunked body.
      await new Promise<void>((resolve) => res.write('', () => resolve()));
      res.socket?.destroy();
      return;
    }
    res.end();
  }
}

function lowerHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const startFakeProvider = (options?: FakeProviderOptions): Promise<FakeProvider> => FakeProvider.start(options);
