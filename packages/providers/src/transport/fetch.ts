/**
 * `fetch` over the transport (issue 22 item 2): what the MCP SDK's HTTP transports are given, so
 * an MCP server over Streamable HTTP or SSE goes through the same proxies (HTTPS_PROXY,
 * HTTP_PROXY, NO_PROXY), extra certificate authorities (caFile, NODE_EXTRA_CA_CERTS) and
 * keep-alive pool as the providers. Node 20's global `fetch` reads none of the proxy variables.
 *
 * Not a whole fetch, on purpose: a request body is a string, bytes or form parameters (what the
 * SDK sends); a redirect is returned, not followed (the transport never follows one; the SDK
 * decides, within the origin); the response body streams as the transport reads it.
 */
import type { Transport, TransportResponse } from './transport.js';

export type FetchFunction = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function transportFetch(transport: Transport): FetchFunction {
  return async (url, init = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body = requestBody(init.body, headers);
    const response = await transport.request({
      url: String(url),
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(init.signal ? { signal: init.signal } : {}),
    });
    return toResponse(response, method);
  };
}

function requestBody(body: RequestInit['body'], headers: Record<string, string>): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    return body.toString();
  }
  throw new TypeError(
    `This fetch sends a string, bytes or URLSearchParams as a request body, not ${Object.prototype.toString.call(body)}.`,
  );
}

function toResponse(response: TransportResponse, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of response.headers.entries()) headers.append(name, value);
  if (NULL_BODY.has(response.status) || method === 'HEAD') {
    void response.close();
    return new Response(null, { status: response.status, headers });
  }
  const reader = response.body[Symbol.asyncIterator]();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const read = await reader.next();
        if (read.done) controller.close();
        else controller.enqueue(read.value);
      } catch (error) {
        controller.error(error);
      }
    },
    cancel(reason) {
      response.destroy(reason instanceof Error ? reason : undefined);
    },
  });
  return new Response(stream, { status: response.status, headers });
}
