/**
 * `transportFetch` (issue 22 item 2): the fetch the MCP SDK's HTTP transports are given, over the
 * providers' node:http transport, against a real HTTP server on 127.0.0.1 and the test proxy.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestProxy, type TestProxy } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTransport, transportFetch } from '../src/index.js';

let server: Server | undefined;
let proxy: TestProxy | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await proxy?.close();
  server = undefined;
  proxy = undefined;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const fetchOver = (env: Record<string, string> = {}) => transportFetch(createTransport({ env }));

describe('transportFetch: fetch over the node:http transport (issue 22 item 2)', () => {
  it('sends the method, headers and a string, byte or form body; returns status, every header and the body', async () => {
    const url = await serve((req, res, body) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.setHeader('mcp-session-id', 'session-7');
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, type: req.headers['content-type'], auth: req.headers.authorization, body }));
    });
    const send = fetchOver();
    const json = await send(`${url}/mcp`, {
      method: 'POST',
      headers: new Headers({ Authorization: 'Bearer t', 'Content-Type': 'application/json' }),
      body: '{"jsonrpc":"2.0"}',
    });
    expect(json.status).toBe(201);
    expect(json.ok).toBe(true);
    expect(json.headers.get('mcp-session-id')).toBe('session-7');
    expect(json.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await json.json()).toEqual({ method: 'POST', type: 'application/json', auth: 'Bearer t', body: '{"jsonrpc":"2.0"}' });
    const bytes = await send(new URL(`${url}/x`), { method: 'put', body: new TextEncoder().encode('bytes') });
    expect(await bytes.json()).toMatchObject({ method: 'PUT', body: 'bytes' });
    const form = await send(url, { method: 'POST', body: new URLSearchParams({ grant_type: 'code', code: 'a b' }) });
    expect(await form.json()).toMatchObject({
      type: 'application/x-www-form-urlencoded;charset=UTF-8',
      body: 'grant_type=code&code=a+b',
    });
  });

  it('streams the body as it arrives, and a cancelled read closes the connection', async () => {
    let closed!: () => void;
    const gone = new Promise<void>((resolve) => (closed = resolve));
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      res.on('close', closed);
      // Never ends: an SSE stream the client stops reading.
    });
    const response = await fetchOver()(url);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: first\n\n');
    await reader.cancel();
    await gone;
  });

  it('an abort rejects the read with an AbortError; no-body statuses and HEAD have a null body', async () => {
    const url = await serve((req, res) => {
      if (req.url === '/empty') return res.writeHead(204).end();
      if (req.method === 'HEAD') return res.writeHead(200, { 'content-length': '5' }).end();
      res.writeHead(200);
      res.write('part');
    });
    const controller = new AbortController();
    const response = await fetchOver()(url, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
    const empty = await fetchOver()(`${url}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const head = await fetchOver()(url, { method: 'HEAD' });
    expect(head.body).toBeNull();
    expect(head.headers.get('content-length')).toBe('5');
  });

  it('a body it cannot send is a TypeError naming it, before anything is sent', async () => {
    let requests = 0;
    const url = await serve((_req, res) => {
      requests++;
      res.end();
    });
    await expect(fetchOver()(url, { method: 'POST', body: new Blob(['x']) })).rejects.toThrow(/not \[object Blob\]/);
    expect(requests).toBe(0);
  });

  it('goes through HTTP_PROXY like the providers (a name only the proxy resolves)', async () => {
    const url = await serve((_req, res) => res.end('through'));
    proxy = await startTestProxy();
    const port = new URL(url).port;
    const response = await fetchOver({ HTTP_PROXY: proxy.url })(`http://mcp.test:${port}/mcp`);
    expect(await response.text()).toBe('through');
    expect(proxy.seen).toEqual([`http://mcp.test:${port}/mcp`]);
  });
});
