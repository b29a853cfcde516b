/**
 * Issue 22 item 2: HTTPS_PROXY / HTTP_PROXY / NO_PROXY are honoured (a CONNECT tunnel for https,
 * the absolute form for http) and extra CA certificates (`caFile`) are trusted. Real servers on
 * 127.0.0.1: a forward proxy that dials only 127.0.0.1, and a TLS fake provider whose
 * certificate is signed by a CA made with openssl at test time. `provider.test` is a name only
 * the proxy "resolves", so a success proves the request went through it.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { FakeProvider, makeTestCertificates, startTestProxy, type TestCertificates, type TestProxy } from '@crystal/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createChatClient, createTransport, noProxyMatches, proxyFor, TransportTimeout } from '../src/index.js';
import { isIp } from '../src/transport/tunnel.js';
import { collect, failure } from './stream-helpers.js';

let certs: TestCertificates;
let fake: FakeProvider | undefined;
let proxy: TestProxy | undefined;
beforeAll(() => {
  certs = makeTestCertificates('provider.test');
});
afterAll(() => rmSync(certs.dir, { recursive: true, force: true }));
afterEach(async () => {
  await fake?.close();
  await proxy?.close();
  fake = undefined;
  proxy = undefined;
});

const reply = { text: 'through the proxy', usage: { input: 3, output: 3 } };

async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ready(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(ready()).toBe(true);
}

describe('proxies and certificates (issue 22 item 2)', () => {
  it('HTTPS_PROXY: an https provider is reached through a CONNECT tunnel, trusting caFile', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [reply], tls: { key: certs.key, cert: certs.cert } });
    proxy = await startTestProxy();
    const transport = createTransport({ env: { HTTPS_PROXY: proxy.url }, caFile: certs.caFile });
    const c = await createChatClient(
      { name: 'acme', protocol: 'anthropic', baseUri: `https://provider.test:${fake.port}/`, apiKey: 'sk-proxy' },
      { id: 'acme-model' },
      { transport },
    );
    const events = await collect(c);
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
    expect(proxy.seen).toEqual([`provider.test:${fake.port}`]);
    expect(fake.requests[0]?.headers['x-api-key']).toBe('sk-proxy');
    // The next round reuses the tunnel (keep-alive inside it): no second CONNECT.
    await collect(c);
    expect(fake.requests).toHaveLength(2);
    expect(proxy.seen).toHaveLength(1);
  });

  it('https_proxy (lower case) with credentials sends Proxy-Authorization on the CONNECT', async () => {
    fake = await FakeProvider.start({ wire: 'openai', replies: [reply], tls: { key: certs.key, cert: certs.cert } });
    proxy = await startTestProxy();
    const transport = createTransport({
      env: { https_proxy: proxy.url.replace('http://', 'http://user:p%40ss@') },
      caFile: certs.caFile,
    });
    const c = await createChatClient(
      { name: 'acme', protocol: 'openai', baseUri: `https://provider.test:${fake.port}/v1/`, apiKey: 'sk-proxy' },
      { id: 'acme-model' },
      { transport },
    );
    await collect(c);
    expect(proxy.authorizations).toEqual([`Basic ${Buffer.from('user:p@ss').toString('base64')}`]);
  });

  it('an https:// proxy signed by the caFile CA is trusted too: the CONNECT goes over TLS to it, then TLS to the provider inside', async () => {
    fake = await FakeProvider.start({ wire: 'openai', replies: [reply], tls: { key: certs.key, cert: certs.cert } });
    proxy = await startTestProxy({ tls: { key: certs.key, cert: certs.cert } });
    expect(proxy.url.startsWith('https://127.0.0.1:')).toBe(true);
    const c = await createChatClient(
      { name: 'acme', protocol: 'openai', baseUri: `https://provider.test:${fake.port}/v1/`, apiKey: 'k' },
      { id: 'acme-model' },
      { transport: createTransport({ env: { HTTPS_PROXY: proxy.url }, caFile: certs.caFile }) },
    );
    expect((await collect(c)).at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
    expect(proxy.seen).toEqual([`provider.test:${fake.port}`]);
    // A plain http provider through the same https:// proxy: the absolute-form request over TLS to it.
    const plain = await FakeProvider.start({ wire: 'openai', replies: [reply] });
    try {
      const http = await createChatClient(
        { name: 'acme', protocol: 'openai', baseUri: `http://provider.test:${plain.port}/v1/`, apiKey: 'k' },
        { id: 'acme-model' },
        { transport: createTransport({ env: { HTTP_PROXY: proxy.url }, caFile: certs.caFile }) },
      );
      expect((await collect(http)).at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
      expect(proxy.seen[1]).toBe(`http://provider.test:${plain.port}/v1/chat/completions`);
    } finally {
      await plain.close();
    }
  });

  it('a proxy written as an IPv6 address ([::1]) is dialled without its brackets, for a tunnel and a plain http request', async () => {
    fake = await FakeProvider.start({ wire: 'openai', replies: [reply], tls: { key: certs.key, cert: certs.cert } });
    proxy = await startTestProxy({ host: '::1' });
    expect(proxy.url.startsWith('http://[::1]:')).toBe(true);
    const transport = createTransport({ env: { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url }, caFile: certs.caFile });
    const c = await createChatClient(
      { name: 'acme', protocol: 'openai', baseUri: `https://provider.test:${fake.port}/v1/`, apiKey: 'k' },
      { id: 'acme-model' },
      { transport },
    );
    // Before: getaddrinfo ENOTFOUND [::1].
    expect((await collect(c)).at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
    const plain = await FakeProvider.start({ wire: 'openai', replies: [reply] });
    try {
      const http = await createChatClient(
        { name: 'acme', protocol: 'openai', baseUri: `http://provider.test:${plain.port}/v1/`, apiKey: 'k' },
        { id: 'acme-model' },
        { transport },
      );
      expect((await collect(http)).at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
      expect(proxy.seen).toEqual([`provider.test:${fake.port}`, `http://provider.test:${plain.port}/v1/chat/completions`]);
    } finally {
      await plain.close();
    }
  });

  it('HTTP_PROXY: an http provider is reached with an absolute-form request through the proxy', async () => {
    fake = await FakeProvider.start({ wire: 'gemini', replies: [reply] });
    proxy = await startTestProxy();
    const transport = createTransport({ env: { HTTP_PROXY: proxy.url } });
    const c = await createChatClient(
      { name: 'acme', protocol: 'gemini', baseUri: `http://provider.test:${fake.port}/`, apiKey: 'g-key' },
      { id: 'gemini-x' },
      { transport },
    );
    const events = await collect(c);
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
    expect(proxy.seen).toHaveLength(1);
    expect(proxy.seen[0]).toMatch(new RegExp(`^http://provider\\.test:${fake.port}/v1beta/models/`));
  });

  it('a private CA without caFile is refused at once with a message naming caFile, not retried as a network error', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [reply], tls: { key: certs.key, cert: certs.cert } });
    const c = await createChatClient(
      { name: 'acme', protocol: 'anthropic', baseUri: `https://127.0.0.1:${fake.port}/`, apiKey: 'k' },
      { id: 'acme-model' },
      { transport: createTransport({ env: {} }) },
    );
    const error = await failure(c);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('caFile');
    expect(fake.requests).toHaveLength(0);
  });

  it('caFile: a provider signed by a private CA is trusted directly (no proxy)', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [reply], tls: { key: certs.key, cert: certs.cert } });
    const c = await createChatClient(
      { name: 'acme', protocol: 'anthropic', baseUri: `https://127.0.0.1:${fake.port}/`, apiKey: 'k' },
      { id: 'acme-model' },
      { transport: createTransport({ env: {}, caFile: certs.caFile }) },
    );
    const events = await collect(c);
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
  });

  it('an unreadable NODE_EXTRA_CA_CERTS is skipped as Node skips it, so caFile still works (it used to fail the start, blaming caFile)', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [reply], tls: { key: certs.key, cert: certs.cert } });
    const c = await createChatClient(
      { name: 'acme', protocol: 'anthropic', baseUri: `https://127.0.0.1:${fake.port}/`, apiKey: 'k' },
      { id: 'acme-model' },
      { transport: createTransport({ env: { NODE_EXTRA_CA_CERTS: join(certs.dir, 'missing.pem') }, caFile: certs.caFile }) },
    );
    expect((await collect(c)).at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
  });

  it('a proxy address that is not a URL fails at once, naming the variable', async () => {
    const c = await createChatClient(
      { name: 'acme', protocol: 'openai', baseUri: 'https://api.example.com/v1/', apiKey: 'k' },
      { id: 'm' },
      { transport: createTransport({ env: { HTTPS_PROXY: 'http://[bad' } }) },
    );
    const error = await failure(c);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('HTTPS_PROXY');
  });

  it('credentials with a stray % fail at once, naming the variable and the fix, never showing the password', async () => {
    const client = (proxyUrl: string) =>
      createChatClient(
        { name: 'acme', protocol: 'openai', baseUri: 'http://api.example.com/v1/', apiKey: 'k' },
        { id: 'm' },
        { transport: createTransport({ env: { HTTP_PROXY: proxyUrl } }) },
      );
    // Before: a URIError inside every request, reported as a retried network failure.
    const stray = await failure(await client('http://ops:s3cr%et@127.0.0.1:9'));
    expect(stray.retryable).toBe(false);
    expect(stray.message).toContain('HTTP_PROXY');
    expect(stray.message).toContain('%25');
    expect(stray.message).toContain('http://***@127.0.0.1:9');
    expect(stray.message).not.toContain('s3cr');
    // An address that is not a URL does not print its password either.
    const bad = await failure(await client('http://ops:hunter2@[bad'));
    expect(bad.message).toContain('HTTP_PROXY');
    expect(bad.message).not.toContain('hunter2');
    expect(proxyFor(new URL('http://api.example.com/'), { HTTP_PROXY: 'http://ops:a%25b@proxy:1' })?.password).toBe('a%25b');
  });

  it('a proxy that asks for credentials (407) fails at once, saying where they go, for a tunnel and for a plain http request; refused credentials are named as such, never shown', async () => {
    // 407 to a CONNECT and to an absolute-form request alike.
    const server = createServer((_req, res) => {
      res.writeHead(407, { 'proxy-authenticate': 'Basic', 'content-type': 'text/html' }).end('<html>Proxy auth required</html>');
    });
    server.on('connect', (_req, socket: Socket) => {
      socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const failureThrough = async (baseUri: string, proxyUrl: string) =>
        failure(
          await createChatClient(
            { name: 'acme', protocol: 'anthropic', baseUri, apiKey: 'k' },
            { id: 'm' },
            { transport: createTransport({ env: { HTTPS_PROXY: proxyUrl, HTTP_PROXY: proxyUrl } }) },
          ),
        );
      for (const baseUri of ['https://provider.test/', 'http://provider.test/']) {
        const error = await failureThrough(baseUri, `http://127.0.0.1:${port}`);
        expect(error.retryable).toBe(false);
        expect(error.message).toContain(
          `the proxy 127.0.0.1:${port} asks for credentials (HTTP 407); put them in the proxy variable as http://user:password@127.0.0.1:${port}`,
        );
        const refused = await failureThrough(baseUri, `http://ops:hunter2@127.0.0.1:${port}`);
        expect(refused.retryable).toBe(false);
        expect(refused.message).toContain(`the proxy 127.0.0.1:${port} refused the credentials of the proxy variable (HTTP 407)`);
        expect(refused.message).not.toContain('hunter2');
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a proxy that refuses the tunnel by policy (403) fails at once, saying what to do; a 502 or 503 from it (the host unreachable for now) is retried', async () => {
    let status = 403;
    const server = createServer();
    server.on('connect', (_req, socket: Socket) => {
      socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-length: 0\r\n\r\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const tunnelFailure = async () =>
        failure(
          await createChatClient(
            { name: 'acme', protocol: 'openai', baseUri: 'https://provider.test/v1/', apiKey: 'k' },
            { id: 'm' },
            { transport: createTransport({ env: { HTTPS_PROXY: `http://127.0.0.1:${port}` } }) },
          ),
        );
      for (const refused of [403, 400, 405]) {
        status = refused;
        const error = await tunnelFailure();
        expect(error.retryable).toBe(false);
        expect(error.message).toContain(`the proxy 127.0.0.1:${port} refused the tunnel to provider.test:443 (HTTP ${refused})`);
        expect(error.message).toContain('NO_PROXY');
      }
      for (const passing of [502, 503, 504, 429]) {
        status = passing;
        const error = await tunnelFailure();
        expect(error.retryable).toBe(true);
        expect(error.message).toContain(`(HTTP ${passing})`);
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('REL-5 a proxy that never answers the CONNECT, or a tunnel whose TLS never completes: the connect timeout ends the request, an abort ends it at once, and the proxy connection is closed', async () => {
    // A proxy that holds every connection; with `answer` it says 200 to the CONNECT and then stays silent.
    const held: { socket: Socket; closed: Promise<void> }[] = [];
    let answer = false;
    const server = createNetServer((socket) => {
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      held.push({ socket, closed });
      socket.once('data', () => {
        if (answer) socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const transport = createTransport({ env: { HTTPS_PROXY: `http://127.0.0.1:${port}` } });
      const request = (extra: { connectTimeoutMs?: number; signal?: AbortSignal }) =>
        transport.request({ url: 'https://provider.test/v1/chat', method: 'POST', body: '{}', ...extra }).then(
          () => new Error('the request was answered'),
          (error: Error) => error,
        );

      // Before: the timer's req.destroy() waited for a socket the tunnel never gave, and the request hung for ever.
      const timedOut = await request({ connectTimeoutMs: 300 });
      expect(timedOut).toBeInstanceOf(TransportTimeout);
      expect(timedOut.message).toBe(
        `the proxy 127.0.0.1:${port} did not answer the CONNECT within 0.3 s (retry.connectTimeoutSeconds)`,
      );
      await held[0]?.closed;

      // An abort (Ctrl+C, SIGTERM) while the CONNECT waits ends the request at once.
      const controller = new AbortController();
      const pending = request({ signal: controller.signal });
      await until(() => held.length === 2);
      controller.abort();
      expect((await pending).name).toBe('AbortError');
      await held[1]?.closed;

      // The tunnel opens but TLS inside it never completes: the same timeout.
      answer = true;
      const handshake = await request({ connectTimeoutMs: 300 });
      expect(handshake).toBeInstanceOf(TransportTimeout);
      expect(handshake.message).toBe('no connection within 0.3 s (retry.connectTimeoutSeconds)');
      await held[2]?.closed;
      expect(held).toHaveLength(3);
    } finally {
      for (const { socket } of held) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('NO_PROXY and loopback hosts bypass the proxy', () => {
    const env = { HTTPS_PROXY: 'http://proxy.corp:3128', NO_PROXY: 'internal.corp,.svc.local,api.example.com:8443' };
    expect(proxyFor(new URL('https://api.openai.com/v1/'), env)?.host).toBe('proxy.corp:3128');
    expect(proxyFor(new URL('https://internal.corp/v1/'), env)).toBeUndefined();
    expect(proxyFor(new URL('https://llm.internal.corp/v1/'), env)).toBeUndefined();
    expect(proxyFor(new URL('https://a.svc.local/'), env)).toBeUndefined();
    expect(proxyFor(new URL('https://api.example.com:8443/'), env)).toBeUndefined();
    expect(proxyFor(new URL('https://api.example.com/'), env)?.host).toBe('proxy.corp:3128');
    expect(proxyFor(new URL('https://127.0.0.1:11434/'), env)).toBeUndefined();
    expect(proxyFor(new URL('http://localhost:11434/'), { HTTP_PROXY: 'proxy:1' })).toBeUndefined();
    expect(proxyFor(new URL('http://ollama.lan/'), { https_proxy: 'proxy:1' })).toBeUndefined();
    expect(proxyFor(new URL('http://ollama.lan/'), { http_proxy: 'proxy:1' })?.href).toBe('http://proxy:1/');
    expect(noProxyMatches('anything.example', 443, '*')).toBe(true);
    // A fully qualified name (a trailing dot) is the same host, in the address and in NO_PROXY.
    expect(proxyFor(new URL('https://Internal.Corp./v1/'), env)).toBeUndefined();
    expect(proxyFor(new URL('https://api.example.com.:8443/'), env)).toBeUndefined();
    expect(proxyFor(new URL('https://vault.corp/'), { ...env, NO_PROXY: 'vault.corp.' })).toBeUndefined();
    expect(proxyFor(new URL('http://localhost.:11434/'), { HTTP_PROXY: 'proxy:1' })).toBeUndefined();
  });

  it('NO_PROXY IP ranges (10.0.0.0/8, fd00::/8) bypass the proxy for hosts written as IP addresses in them', () => {
    const env = { HTTP_PROXY: 'http://proxy.corp:3128', NO_PROXY: '10.0.0.0/8, 192.168.1.0/24,[fd00::]/8,172.16.5.4:8000' };
    const via = (url: string) => proxyFor(new URL(url), env)?.host;
    expect(via('http://10.1.2.3:8000/v1/')).toBeUndefined();
    expect(via('http://10.255.255.255/')).toBeUndefined();
    expect(via('http://11.0.0.1/')).toBe('proxy.corp:3128');
    expect(via('http://192.168.1.77/')).toBeUndefined();
    expect(via('http://192.168.2.1/')).toBe('proxy.corp:3128');
    expect(via('http://[fd12:3456::1]:11434/')).toBeUndefined();
    expect(via('http://[fe80::1]/')).toBe('proxy.corp:3128');
    // An address entry with a port: that port only.
    expect(via('http://172.16.5.4:8000/')).toBeUndefined();
    expect(via('http://172.16.5.4:8001/')).toBe('proxy.corp:3128');
    // Names are not looked up (as curl and Go): a name in the range's network still goes through the proxy.
    expect(via('http://llm.corp.internal/')).toBe('proxy.corp:3128');
    // The same IPv6 address however it is written; an IPv4 range never matches an IPv6 host.
    expect(noProxyMatches('fd00:0:0:0:0:0:0:1', 80, 'fd00::1')).toBe(true);
    expect(noProxyMatches('::ffff:10.0.0.1', 80, '10.0.0.0/8')).toBe(false);
    // A malformed range is skipped, never thrown: the other entries still count.
    expect(noProxyMatches('10.0.0.1', 80, '10.0.0.0/40,10.0.0.0/33,1.2.3/8')).toBe(false);
    expect(noProxyMatches('10.0.0.1', 80, '10.0.0.0/99, 10.0.0.1')).toBe(true);
    expect(noProxyMatches('10.0.0.1', 80, '0.0.0.0/0')).toBe(true);
  });

  it('TLS names the server unless the host is an IP address (the same node:net test as NO_PROXY)', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '::1', '[::1]', 'fd00::1', '[fe80::1]']) expect(isIp(ip)).toBe(true);
    for (const name of ['provider.test', 'api.openai.com', 'localhost', '1.2.3.4.example', '1.2.3.4.5'])
      expect(isIp(name)).toBe(false);
  });
});
