/**
 * Issue 22 item 2: MCP servers over HTTP honour the proxy variables as the providers do. The real
 * server-everything (from npm) behind the SDK's Streamable HTTP and SSE transports on 127.0.0.1,
 * the test's CONNECT/forward proxy, and a host name (`mcp.test`) that only the proxy resolves:
 * a request that did not go through the proxy cannot reach the server at all.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestCertificates, startTestProxy, type TestCertificates, type TestProxy } from '@crystal/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EverythingHttp, startEverythingHttp } from '../../mcp/test/servers.js';
import { type Config, type McpHost, startMcpHost } from '../src/index.js';

let http: EverythingHttp | undefined;
let proxy: TestProxy | undefined;
let host: McpHost | undefined;
afterEach(async () => {
  await host?.close();
  await http?.close();
  await proxy?.close();
  host = undefined;
  http = undefined;
  proxy = undefined;
});

let certs: TestCertificates;
beforeAll(() => {
  certs = makeTestCertificates('mcp.test');
});
afterAll(() => rmSync(certs.dir, { recursive: true, force: true }));

async function hostWith(env: NodeJS.ProcessEnv, secure = false): Promise<{ host: McpHost; port: string }> {
  http = await startEverythingHttp(secure ? { key: certs.key, cert: certs.cert } : undefined);
  const port = new URL(http.url).port;
  const home = mkdtempSync(join(tmpdir(), 'crystal-mcp-proxy-'));
  const scheme = secure ? 'https' : 'http';
  const mcpServers = {
    remote: { type: 'http', url: `${scheme}://mcp.test:${port}/mcp` },
    old: { type: 'sse', url: `${scheme}://mcp.test:${port}/sse` },
  };
  const config = { mcpServers, ...(secure ? { caFile: certs.caFile } : {}) } as unknown as Config;
  host = startMcpHost({ home, workspace: home, config, env, imageInput: () => false });
  await host.manager?.whenSettled();
  return { host, port };
}

const never = new AbortController().signal;

describe('MCP servers over HTTP and SSE through the proxy variables (issue 22 item 2)', () => {
  it('HTTP_PROXY: a Streamable HTTP and an SSE server are reached through the proxy, and their tools answer', async () => {
    proxy = await startTestProxy();
    const { host, port } = await hostWith({ HTTP_PROXY: proxy.url });
    expect(host.manager?.status().map((s) => [s.name, s.state])).toEqual([
      ['remote', 'ready'],
      ['old', 'ready'],
    ]);
    for (const [name, message] of [
      ['mcp__remote__echo', 'via streamable http'],
      ['mcp__old__echo', 'via sse'],
    ] as const) {
      const echo = host.tools().find((tool) => tool.name === name);
      const result = await echo?.execute({ message }, { signal: never, callId: name });
      expect(JSON.stringify(result)).toContain(`Echo: ${message}`);
    }
    const seen = (path: string) => proxy?.seen.filter((url) => url.startsWith(`http://mcp.test:${port}${path}`)) ?? [];
    expect(seen('/mcp').length).toBeGreaterThanOrEqual(3);
    expect(seen('/sse')).toHaveLength(1);
    expect(seen('/message').length).toBeGreaterThanOrEqual(2);
  });

  it('HTTPS_PROXY and caFile: https servers are reached through a CONNECT tunnel, trusting the private CA', async () => {
    proxy = await startTestProxy();
    const { host, port } = await hostWith({ HTTPS_PROXY: proxy.url }, true);
    expect(host.manager?.status().map((s) => s.state)).toEqual(['ready', 'ready']);
    const echo = host.tools().find((tool) => tool.name === 'mcp__remote__echo');
    const result = await echo?.execute({ message: 'via a tunnel' }, { signal: never, callId: 'tunnel' });
    expect(JSON.stringify(result)).toContain('Echo: via a tunnel');
    // One CONNECT per connection (keep-alive inside the tunnels), all to the name only the proxy resolves.
    expect(proxy.seen.length).toBeGreaterThanOrEqual(1);
    expect(new Set(proxy.seen)).toEqual(new Set([`mcp.test:${port}`]));
  });

  it('NO_PROXY names the host: the servers are dialled directly (here: no such host), and the proxy sees nothing', async () => {
    proxy = await startTestProxy();
    const { host } = await hostWith({ HTTP_PROXY: proxy.url, NO_PROXY: '.test' });
    expect(host.manager?.status().map((s) => s.state)).toEqual(['failed', 'failed']);
    expect(proxy.seen).toEqual([]);
  });
});

describe('redirects of MCP servers over HTTP: the transport returns them, the SDK follows them within the origin', () => {
  it('a same-origin redirect (307, as FastMCP sends) is followed with its method and body; one to another origin is refused, naming it, and the headers stay', async () => {
    http = await startEverythingHttp();
    const home = mkdtempSync(join(tmpdir(), 'crystal-mcp-redirect-'));
    const mcpServers = {
      moved: { type: 'http', url: `${http.url}/moved`, headers: { authorization: 'Bearer s3cret' } },
      elsewhere: { type: 'http', url: `${http.url}/elsewhere`, headers: { authorization: 'Bearer s3cret' } },
    };
    host = startMcpHost({ home, workspace: home, config: { mcpServers } as unknown as Config, env: {}, imageInput: () => false });
    await host.manager?.whenSettled();
    const status = host.manager?.status() ?? [];
    expect(status.map((s) => [s.name, s.state])).toEqual([
      ['moved', 'ready'],
      ['elsewhere', 'failed'],
    ]);
    const echo = host.tools().find((tool) => tool.name === 'mcp__moved__echo');
    expect(JSON.stringify(await echo?.execute({ message: 'moved' }, { signal: never, callId: 'moved' }))).toContain(
      'Echo: moved',
    );
    const port = new URL(http.url).port;
    expect(status[1]?.error).toContain(`Redirect to http://localhost:${port}/mcp not followed`);
    // The other origin never saw the key: no request reached it by its name.
    expect(http.requests.filter((r) => r.headers.host === `localhost:${port}`)).toEqual([]);
  });
});
