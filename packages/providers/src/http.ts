/**
 * One streaming POST over the lean transport: a non-2xx answer becomes a classified
 * ProviderError with its headers and body; a transport failure becomes network, timeout or
 * body_write_closed; a redirect to another origin is refused (SEC-7); a 200 answer that is an
 * HTML page or a JSON error document is classified from its content (REL-7); error text is
 * capped and redacted (SEC-9).
 */
import { ProviderError } from '@crystal/core';
import { cleanErrorText, ERROR_BODY_READ_BYTES } from './error-text.js';
import { abortError, classifyHttpError, classifyTransportError, type HttpErrorInput, isAbortError } from './http-error.js';
import { DEFAULT_TIMEOUTS } from './endpoint.js';
import { defaultTransport, type Transport, type TransportResponse, TransportTimeout } from './transport/transport.js';

export interface PostOptions {
  readonly provider: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly signal?: AbortSignal | undefined;
  readonly transport?: Transport | undefined;
  readonly connectTimeoutMs?: number | undefined;
  readonly firstByteTimeoutMs?: number | undefined;
  /** How long an error body may stall while it is read. */
  readonly idleTimeoutMs?: number | undefined;
  /** Values that must never appear in an error message (the request's key). */
  readonly secrets?: readonly (string | undefined)[] | undefined;
  /** A vendor's own mapping of an error answer (its quota or overflow shapes); defaults to classifyHttpError. */
  readonly classify?: ((input: HttpErrorInput) => ProviderError) | undefined;
  /** The request is written once this settles (ChatRequest.sendAfter); the connection opens meanwhile. */
  readonly sendAfter?: PromiseLike<unknown> | undefined;
}

/** An open response body: one chunk per network read, and a way to end it early. */
export interface OpenStream {
  readonly body: AsyncIterable<Uint8Array>;
  destroy(error: Error): void;
  /** Releases the connection once the stream is done with, so the next request reuses it. */
  close(): Promise<void>;
}

const MAX_REDIRECTS = 5;

export async function postStream(options: PostOptions): Promise<OpenStream> {
  const transport = options.transport ?? defaultTransport();
  const payload = JSON.stringify(options.body);
  let url = options.url;
  let response: TransportResponse;
  for (let hops = 0; ; hops++) {
    try {
      response = await transport.request({
        url,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream, application/x-ndjson, application/json',
          ...options.headers,
        },
        body: payload,
        signal: options.signal,
        connectTimeoutMs: options.connectTimeoutMs,
        firstByteTimeoutMs: options.firstByteTimeoutMs,
        coalesceReads: true,
        // A redirect's hop is made after the first request was written: nothing to wait for.
        ...(hops === 0 && options.sendAfter ? { sendAfter: options.sendAfter } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted || isAbortError(error)) throw abortError();
      throw clean(classifyTransportError(options.provider, error, false), options);
    }
    if (response.status < 300 || response.status >= 400) break;
    url = redirectTarget(options, response, url, hops);
  }
  if (response.status < 200 || response.status >= 300) {
    // An error body that stalls is read only as long as a stream may stay silent (REL-5).
    const open = response;
    const idleMs = options.idleTimeoutMs ?? DEFAULT_TIMEOUTS.idleTimeoutMs;
    const stall = setTimeout(() => open.destroy(new TransportTimeout('idle', idleMs, 'retry.idleTimeoutSeconds')), idleMs);
    stall.unref();
    const text = await response.text(ERROR_BODY_READ_BYTES).finally(() => clearTimeout(stall));
    throw errorAnswer(options, response, text);
  }
  return {
    body: checkedBody(options, response),
    destroy: (error) => response.destroy(error),
    close: () => response.close(),
  };
}

/**
 * SEC-7: a redirect is followed only to the same origin and only when it keeps the method and
 * body (307, 308); a redirect to another origin would carry the key there, so it is refused.
 */
function redirectTarget(options: PostOptions, response: TransportResponse, from: string, hops: number): string {
  const location = response.headers.get('location');
  response.destroy();
  const fail = (message: string): never => {
    throw clean(new ProviderError({ kind: 'unknown', provider: options.provider, status: response.status, message }), options);
  };
  if (!location) return fail(`${options.provider} answered HTTP ${response.status} (a redirect) without a Location.`);
  let target: URL;
  try {
    target = new URL(location, from);
  } catch {
    return fail(`${options.provider} redirected the request to an invalid address: ${location}`);
  }
  const origin = new URL(from).origin;
  if (target.origin !== origin) {
    return fail(
      `${options.provider} redirected the request to another origin (${target.origin}); Crystal does not follow it, so the API key never goes there. If that address is right, set it as the provider's baseUri.`,
    );
  }
  if (response.status !== 307 && response.status !== 308) {
    return fail(
      `${options.provider} redirected the request (HTTP ${response.status}) to ${target.href}; set the provider's baseUri to the final address.`,
    );
  }
  if (hops >= MAX_REDIRECTS) return fail(`${options.provider} redirected the request more than ${MAX_REDIRECTS} times.`);
  return target.href;
}

function errorAnswer(options: PostOptions, response: TransportResponse, text: string): ProviderError {
  const contentType = response.headers.get('content-type') ?? '';
  if (looksHtml(text, contentType)) {
    return clean(
      new ProviderError({
        kind:
          response.status >= 200 && response.status < 300
            ? 'unknown'
            : classifyHttpError({ provider: options.provider, status: response.status }).kind,
        provider: options.provider,
        status: response.status,
        message: `${options.provider} answered HTTP ${response.status} with an HTML page instead of an API response: ${firstLine(text)}`,
      }),
      options,
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text === '' ? undefined : { error: { message: text.slice(0, 500) } };
  }
  return clean(
    (options.classify ?? classifyHttpError)({
      provider: options.provider,
      status: response.status,
      headers: response.headers,
      body,
    }),
    options,
  );
}

function looksHtml(text: string, contentType: string): boolean {
  return /text\/html|application\/xhtml/i.test(contentType) || /^\s*</.test(text);
}

/** The first line of text of an HTML page (tags dropped), for the operator. */
function firstLine(html: string): string {
  const text = html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, '')
    .replace(/<[^>]*>/g, '\n')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
  const line = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  return line === undefined ? '(an empty page)' : JSON.stringify(line.slice(0, 200));
}

/**
 * REL-7: a 2xx body that is an HTML page, or a single JSON document holding an error instead of
 * a stream, is classified from its content (quota stays quota; HTML names the status and first
 * line) instead of failing later as an incomplete stream. NDJSON wires classify error lines in
 * their own decoder.
 */
function checkedBody(options: PostOptions, response: TransportResponse): AsyncIterable<Uint8Array> {
  const iterator = response.body[Symbol.asyncIterator]();
  // Chunks the head check read ahead, handed out before the body goes on.
  let queued: Uint8Array[] | undefined;
  let ended = false;
  const done: IteratorReturnResult<undefined> = { value: undefined, done: true };
  const body: AsyncIterableIterator<Uint8Array> = {
    [Symbol.asyncIterator]: () => body,
    next(): Promise<IteratorResult<Uint8Array>> {
      if (queued === undefined) return checkHead(options, response, iterator).then(start);
      const chunk = queued.shift();
      if (chunk !== undefined) return Promise.resolve({ value: chunk, done: false });
      // Issue 22 item 3: after the head, each read comes straight from the transport's iterator,
      // without a generator step per network read.
      return ended ? Promise.resolve(done) : iterator.next();
    },
    // A reader that stops early leaves the response to its owner, which drains it for the next
    // request (keep-alive) or destroys it; returning the transport's iterator would destroy it.
    return(): Promise<IteratorResult<Uint8Array>> {
      queued = [];
      ended = true;
      return Promise.resolve(done);
    },
  };
  const start = (head: { chunks: Uint8Array[]; ended: boolean }): Promise<IteratorResult<Uint8Array>> => {
    queued = head.chunks;
    ended = head.ended;
    return body.next();
  };
  return body;
}

/**
 * The head of the body: the first read, or for what may be an error document (HTML, or a
 * single JSON object on a wire that is not NDJSON) up to ERROR_BODY_READ_BYTES, which throws
 * the classified error when it is one.
 */
async function checkHead(
  options: PostOptions,
  response: TransportResponse,
  iterator: AsyncIterator<Uint8Array>,
): Promise<{ chunks: Uint8Array[]; ended: boolean }> {
  const contentType = (response.headers.get('content-type') ?? '').toLowerCase();
  const ndjson = /ndjson|jsonl/.test(contentType);
  const first = await iterator.next();
  if (first.done) return { chunks: [], ended: true };
  const head = Buffer.from(first.value);
  const lead = leadingChar(head);
  const htmlType = /text\/html|application\/xhtml/.test(contentType);
  if (!(htmlType || lead === '<' || (lead === '{' && !ndjson))) return { chunks: [first.value], ended: false };
  const chunks: Buffer[] = [head];
  let size = head.length;
  let ended = false;
  while (size < ERROR_BODY_READ_BYTES) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    chunks.push(Buffer.from(next.value));
    size += next.value.length;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (htmlType || lead === '<') {
    response.destroy();
    throw errorAnswer(options, response, text);
  }
  if (ended || size >= ERROR_BODY_READ_BYTES) {
    const document = parseObject(text);
    if (document && 'error' in document && document.error) {
      response.destroy();
      throw errorAnswer(options, response, text);
    }
  }
  return { chunks, ended };
}

function leadingChar(chunk: Buffer): string {
  for (const byte of chunk) {
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09 && byte !== 0xef && byte !== 0xbb && byte !== 0xbf) {
      return String.fromCharCode(byte);
    }
  }
  return '';
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** SEC-9: the same error with its message capped and key-like strings redacted. */
function clean(error: ProviderError, options: { readonly secrets?: readonly (string | undefined)[] | undefined }): ProviderError {
  return cleanProviderError(error, options.secrets);
}

export function cleanProviderError(error: ProviderError, secrets: readonly (string | undefined)[] = []): ProviderError {
  const message = cleanErrorText(error.message, secrets);
  if (message === error.message) return error;
  return new ProviderError({
    kind: error.kind,
    provider: error.provider,
    message,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.code === undefined ? {} : { code: cleanErrorText(error.code, secrets) }),
  });
}

/** Maps an error thrown while a stream was being read. */
export function streamFailure(
  provider: string,
  error: unknown,
  signal: AbortSignal | undefined,
  secrets: readonly (string | undefined)[] = [],
): unknown {
  if (signal?.aborted || isAbortError(error)) return abortError();
  if (error instanceof ProviderError) return cleanProviderError(error, secrets);
  return cleanProviderError(classifyTransportError(provider, error, true), secrets);
}
