import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { McpManager, type McpServerSpec } from '../src/index.js';
import { everythingSpec, FILESYSTEM_BIN, httpSpec, startEverythingHttp, stdioSpec } from './servers.js';

const never = new AbortController().signal;
const open: McpManager[] = [];

async function settled(servers: McpServerSpec[], workspace = tmpdir()): Promise<{ manager: McpManager; notes: string[] }> {
  const notes: string[] = [];
  const manager = new McpManager({ servers, workspace, onNote: (text) => notes.push(text) });
  open.push(manager);
  await manager.whenSettled();
  return { manager, notes };
}

function tool(manager: McpManager, name: string) {
  const found = manager.tools().find((t) => t.name === name);
  if (!found)
    throw new Error(
      `no tool ${name}; have ${manager
        .tools()
        .map((t) => t.name)
        .join(', ')}`,
    );
  return found;
}

afterEach(async () => {
  for (const manager of open.splice(0)) await manager.close();
});

describe('MCP-1 transports against real servers', () => {
  it('MCP-1 stdio: server-everything from npm lists its tools and echoes through tools/call', async () => {
    const { manager, notes } = await settled([everythingSpec()]);
    expect(notes).toEqual([]);
    expect(manager.status()[0]).toMatchObject({ name: 'everything', state: 'ready', transport: 'stdio' });
    const names = manager.tools().map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-tiny-image']));
    const result = await tool(manager, 'mcp__everything__echo').call({ message: 'hi there' }, never);
    expect(result).toEqual({ content: [{ type: 'text', text: 'Echo: hi there' }], isError: false });
  });

  it('MCP-1 stdio: the entry env reaches the server, host secrets do not (the SDK default environment plus env)', async () => {
    process.env.CRYSTAL_MCP_TEST_SECRET = 'host-secret';
    try {
      const { manager } = await settled([everythingSpec('everything', { env: { ENTRY_VAR: 'from-entry' } })]);
      const out = await tool(manager, 'mcp__everything__get-env').call({}, never);
      const env = JSON.parse((out.content[0] as { text: string }).text) as Record<string, string>;
      expect(env.ENTRY_VAR).toBe('from-entry');
      expect(env.PATH).toBe(process.env.PATH);
      expect(env.CRYSTAL_MCP_TEST_SECRET).toBeUndefined();
    } finally {
      delete process.env.CRYSTAL_MCP_TEST_SECRET;
    }
  });

  it('MCP-1 stdio: server-filesystem from npm reads a file of its allowed directory', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-mcp-fs-')));
    writeFileSync(join(dir, 'note.txt'), 'filesystem says hello');
    const { manager } = await settled([stdioSpec('fs', [FILESYSTEM_BIN, dir])]);
    expect(manager.status()[0]?.state).toBe('ready');
    const read = tool(manager, 'mcp__fs__read_text_file');
    expect(read.parameters).toMatchObject({ type: 'object', properties: { path: expect.any(Object) } });
    const out = await read.call({ path: join(dir, 'note.txt') }, never);
    expect(out.content).toEqual([{ type: 'text', text: 'filesystem says hello' }]);
    const outside = await read.call({ path: '/etc/hostname' }, never);
    expect(outside.isError).toBe(true);
  });

  it('MCP-1 Streamable HTTP: server-everything behind the SDK transport; the entry headers go on every request', async () => {
    const http = await startEverythingHttp();
    try {
      const { manager, notes } = await settled([
        httpSpec('remote', `${http.url}/mcp`, 'http', { headers: { Authorization: 'Bearer token-1', 'X-Team': 'crystal' } }),
      ]);
      expect(notes).toEqual([]);
      const out = await tool(manager, 'mcp__remote__echo').call({ message: 'over http' }, never);
      expect(out.content).toEqual([{ type: 'text', text: 'Echo: over http' }]);
      const mcp = http.requests.filter((r) => r.path === '/mcp');
      expect(mcp.length).toBeGreaterThanOrEqual(3);
      for (const request of mcp) {
        expect(request.headers.authorization).toBe('Bearer token-1');
        expect(request.headers['x-team']).toBe('crystal');
      }
    } finally {
      await http.close();
    }
  });

  it('MCP-1 legacy HTTP+SSE: the event stream GET and the message POSTs both carry the entry headers', async () => {
    const http = await startEverythingHttp();
    try {
      const { manager, notes } = await settled([
        httpSpec('old', `${http.url}/sse`, 'sse', { headers: { Authorization: 'Bearer sse-2' } }),
      ]);
      expect(notes).toEqual([]);
      const out = await tool(manager, 'mcp__old__echo').call({ message: 'over sse' }, never);
      expect(out.content).toEqual([{ type: 'text', text: 'Echo: over sse' }]);
      const get = http.requests.filter((r) => r.path === '/sse');
      const posts = http.requests.filter((r) => r.path === '/message');
      expect(get.length).toBe(1);
      expect(posts.length).toBeGreaterThanOrEqual(2);
      for (const request of [...get, ...posts]) expect(request.headers.authorization).toBe('Bearer sse-2');
    } finally {
      await http.close();
    }
  });
});

describe('MCP-3 hostile configurations', () => {
  it('MCP-3 two servers whose names normalise alike: the second one’s tools are left out with one note, not shadowed', async () => {
    const { manager, notes } = await settled([everythingSpec('a.b'), everythingSpec('a_b')]);
    const echoes = manager.tools().filter((t) => t.name === 'mcp__a_b__echo');
    expect(echoes).toHaveLength(1);
    expect(echoes[0]?.server).toBe('a.b');
    manager.tools();
    expect(notes.filter((n) => n.includes('mcp__a_b__echo'))).toEqual([
      'The MCP tool echo of server a_b was left out: another MCP tool is also named mcp__a_b__echo.',
    ]);
  });

  it('MCP-5 the sandbox hook rewrites the stdio launch: the wrapper sees the command, environment and cwd', async () => {
    const seen: { command: string; args: readonly string[]; cwd: string; path?: string }[] = [];
    const manager = new McpManager({
      servers: [everythingSpec('wrapped', { env: { EXTRA: '1' } })],
      workspace: tmpdir(),
      wrapStdio: (launch) => {
        seen.push({ command: launch.command, args: launch.args, cwd: launch.cwd, path: launch.env.PATH });
        // A wrapper that runs the same program through /usr/bin/env, as a sandbox runner would.
        return { ...launch, command: '/usr/bin/env', args: ['WRAPPED_BY=sandbox-hook', launch.command, ...launch.args] };
      },
    });
    open.push(manager);
    await manager.whenSettled();
    expect(seen).toEqual([{ command: process.execPath, args: everythingSpec().args, cwd: tmpdir(), path: process.env.PATH }]);
    const out = await tool(manager, 'mcp__wrapped__get-env').call({}, never);
    const env = JSON.parse((out.content[0] as { text: string }).text) as Record<string, string>;
    expect(env.WRAPPED_BY).toBe('sandbox-hook');
    expect(env.EXTRA).toBe('1');
  });
});
