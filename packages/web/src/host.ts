/**
 * The Web host (CLI-3, WEBX-1, WEBX-3): a Hono app on a Node HTTP server, bound to loopback by
 * default. It serves the built page from memory, streams controller events to it over SSE, and
 * exposes the conversation face (WEB-11):
 *
 *   GET  /api/state            the scope, the input registry, the queue, prompts and history
 *   GET  /api/events           SSE: a `state` snapshot, then every event of the session
 *   GET  /api/controls         mode, approval mode, model choices, context use, saved sessions
 *   GET  /api/history?scope=   the archive as the page shows it
 *   GET  /api/media/N?scope=   the stored bytes of image N of that session
 *   POST /api/send             one input (input-frame.ts): a message with its images, or an answer
 *   POST /api/cancel           `{ scope }`: interrupts the running turn
 *
 * Every request passes the guard first (security.ts): Host, Origin, then the token.
 */
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { type SessionController, UsageError } from '@crystal/engine';
import { type Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { type AppFiles, findAppDirectory, loadAppFiles } from './app-files.js';
import { BodyError, BodyTooLargeError, readCappedBody } from './capped-body.js';
import { Conversation, ConversationError, type ConversationFace } from './conversation.js';
import { decodeInputFrame, FrameProgress } from './input-frame.js';
import { InputError, parseScopedInput } from './input-registry.js';
import type { PageEvent } from './page-events.js';
import { allowedHosts, guard, newToken, securityHeaders, urlHost } from './security.js';

export interface WebHostOptions {
  readonly controller: SessionController;
  /** The address to bind; 127.0.0.1 by default (WEBX-3). */
  readonly host?: string | undefined;
  /** 0 (default) picks a free port. */
  readonly port?: number | undefined;
  /** The built app folder; found next to the package when absent (app-files.ts). */
  readonly appDir?: string | undefined;
  /** A fixed token (tests); a fresh random one per launch when absent. */
  readonly token?: string | undefined;
}

export interface WebHost {
  /** The URL to open, token included. */
  readonly url: string;
  readonly origin: string;
  readonly token: string;
  readonly port: number;
  readonly conversation: ConversationFace;
  close(): Promise<void>;
}

export const INPUT_CONTENT_TYPE = 'application/x-crystal-input';
const SMALL_BODY_LIMIT = 16 * 1024;
const PING_MS = 15_000;
const RETRY_MS = 1_000;
const FAREWELL_MS = 1_000;

type Env = { Bindings: HttpBindings };

export async function startWebHost(options: WebHostOptions): Promise<WebHost> {
  const appDir = options.appDir ?? findAppDirectory();
  if (!appDir) throw new UsageError("The Web app is not built; run 'npm run build' first (it writes packages/web/dist/app).");
  const files = loadAppFiles(appDir);
  const bind = options.host ?? '127.0.0.1';
  const token = options.token ?? newToken();
  const conversation = new Conversation(options.controller);
  let hosts: ReadonlySet<string> = new Set();
  let port = 0;
  /** Ends each open event stream, with a last event first (the host is stopping). */
  const closers = new Set<(last?: PageEvent) => Promise<void>>();

  const app = new Hono<Env>();
  app.use('*', securityHeaders);
  app.use('*', guard({ token, hosts: () => hosts, cookieName: () => `crystal_token_${port}` }));
  routeApi(app, conversation, closers);
  routeFiles(app, files);
  app.onError((error, c) => {
    if (error instanceof ConversationError) return c.json({ error: error.message, ...error.detail }, error.status);
    if (error instanceof InputError || error instanceof BodyError) return c.json({ error: error.message }, 400);
    process.stderr.write(`crystal web: ${error.stack ?? error.message}\n`);
    return c.json({ error: `The host failed: ${error.message}` }, 500);
  });

  const server = createAdaptorServer({ fetch: app.fetch, hostname: bind, overrideGlobalObjects: false });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(
        error.code === 'EADDRINUSE'
          ? new UsageError(`Port ${options.port} on ${bind} is in use; pick another with --port or leave it out for a free one.`)
          : new UsageError(`Cannot listen on ${bind}:${options.port ?? 0}: ${error.message}`),
      );
    };
    server.once('error', onError);
    server.listen(options.port ?? 0, bind, () => {
      server.off('error', onError);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  hosts = allowedHosts(bind, port);
  const shown = bind === '0.0.0.0' || bind === '::' ? '127.0.0.1' : bind;
  const origin = `http://${urlHost(shown)}:${port}`;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    port,
    conversation,
    close: async () => {
      // The page hears that the session ended (and how to resume it) rather than "Reconnecting…".
      const farewell = conversation.farewell();
      await Promise.all([...closers].map((close) => close(farewell)));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}

function routeApi(app: Hono<Env>, conversation: Conversation, closers: Set<(last?: PageEvent) => Promise<void>>): void {
  app.use('/api/*', async (c, next) => {
    await next();
    c.header('Cache-Control', 'no-store');
  });
  app.get('/api/state', async (c) => c.json(await conversation.state()));
  app.get('/api/controls', async (c) => c.json(await conversation.controls()));
  app.get('/api/history', async (c) => c.json(await conversation.history(c.req.query('scope') ?? '')));
  app.get('/api/media/:number', async (c) => {
    const raw = c.req.param('number');
    if (!/^[1-9][0-9]{0,8}$/.test(raw)) return c.json({ error: 'An image number is a positive whole number.' }, 404);
    const image = await conversation.image(c.req.query('scope') ?? '', Number(raw));
    if (!image) return c.json({ error: `Image ${raw} has no stored file in this session.` }, 404);
    return c.body(new Uint8Array(image.bytes), 200, { 'Content-Type': image.mime, 'Content-Disposition': 'inline' });
  });
  app.post('/api/send', async (c) => {
    if (!isType(c, INPUT_CONTENT_TYPE)) return c.json({ error: `POST /api/send takes ${INPUT_CONTENT_TYPE}.` }, 415);
    const limit = conversation.bodyLimit();
    // Each image is validated as soon as it is in, while later ones are still on the wire.
    let early: Promise<void> = Promise.resolve();
    const progress = new FrameProgress(conversation.batchBounds(), (index, entry, bytes) => {
      early = early.then(() => conversation.prevalidate(index + 1, entry, bytes));
    });
    let body: Buffer;
    try {
      body = await readCappedBody(c.env.incoming, limit, (whole, received) => progress.update(whole, received));
      await early;
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      // The rest of the body is not read into memory: the server discards it after this answer
      // (at most 64 MiB or half a second, then it closes the connection).
      return c.json({ error: error.message, rule: 'body_too_large', limit, received: error.received }, 413);
    }
    const frame = decodeInputFrame(body);
    const { scope, input } = parseScopedInput(frame.manifest);
    if (input.kind !== 'message' && frame.payload.length > 0) return c.json({ error: 'Only a message carries images.' }, 400);
    return c.json(await conversation.send(scope, input, frame.payload));
  });
  app.post('/api/cancel', async (c) => {
    if (!isType(c, 'application/json')) return c.json({ error: 'POST /api/cancel takes application/json.' }, 415);
    const body = await readCappedBody(c.env.incoming, SMALL_BODY_LIMIT);
    let scope: unknown;
    try {
      scope = (JSON.parse(body.toString('utf8')) as { scope?: unknown }).scope;
    } catch {
      throw new InputError('The body must be JSON: { "scope": "<session id>" }.');
    }
    return c.json({ cancelled: conversation.cancel(typeof scope === 'string' ? scope : '') });
  });
  app.get('/api/events', (c) =>
    streamSSE(c, async (stream) => {
      let tail: Promise<void> = Promise.resolve();
      const write = (event: PageEvent): void => {
        const data = JSON.stringify(event);
        tail = tail.then(() => stream.writeSSE({ data })).catch(() => undefined);
      };
      // Events that arrive while the snapshot is read wait behind it, in order.
      const early: PageEvent[] = [];
      let live = false;
      const off = conversation.on((event) => (live ? write(event) : early.push(event)));
      // The last event is out once the response has finished on the socket (or the socket closed).
      const outgoing = c.env.outgoing;
      const done = new Promise<void>((resolve) => {
        outgoing.once('finish', resolve);
        outgoing.once('close', resolve);
      });
      const ended = new Promise<void>((resolve) => {
        const close = async (last?: PageEvent): Promise<void> => {
          closers.delete(close);
          if (last) write(last);
          resolve();
          // A client that does not read cannot hold the host's shutdown up for long.
          await Promise.race([done, new Promise<void>((r) => setTimeout(r, FAREWELL_MS).unref())]);
        };
        closers.add(close);
        stream.onAbort(() => void close());
      });
      const ping = setInterval(() => {
        tail = tail.then(() => stream.write(': ping\n\n').then(() => undefined)).catch(() => undefined);
      }, PING_MS);
      try {
        // A lost connection is retried after a second, so a stopped host is noticed soon (app/main.ts).
        tail = tail.then(() => stream.writeSSE({ data: '{"type":"hello"}', retry: RETRY_MS })).catch(() => undefined);
        write({ type: 'state', state: await conversation.state() });
        live = true;
        for (const event of early.splice(0)) write(event);
        await ended;
      } finally {
        clearInterval(ping);
        off();
        await tail;
      }
    }),
  );
  app.all('/api/*', (c) => c.json({ error: `No API ${c.req.method} ${c.req.path}.` }, 404));
}

function routeFiles(app: Hono<Env>, files: AppFiles): void {
  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.get('*', (c) => {
    const file = files.get(c.req.path);
    if (!file) return c.text('Not found.', 404);
    const html = file.type.startsWith('text/html');
    return c.body(new Uint8Array(file.body), 200, {
      'Content-Type': file.type,
      'Cache-Control': html ? 'no-store' : 'private, max-age=31536000, immutable',
    });
  });
  app.all('*', (c) => c.text('Not found.', 404));
}

function isType(c: Context<Env>, type: string): boolean {
  return (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase() === type;
}
