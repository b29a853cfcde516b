// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the Claude Code entry syntax under test, not a template.
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runCrystal, type TempHome, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const EVERYTHING_BIN = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

let home: TempHome | undefined;
afterEach(() => {
  home?.dispose();
  home = undefined;
});

describe('crystal mcp', () => {
  it('MCP-6 add writes Home config.json (other keys kept, 0600), list starts it and shows its state, get its tools, remove drops it', async () => {
    home = tempHome({ provider: 'fake', workspaceTrust: false });
    const ws = mkdtempSync(join(tmpdir(), 'crystal-ws-mcp-'));
    const opts = { home: home.path, cwd: ws };
    const added = await runCrystal(
      ['mcp', 'add', '-e', 'LEVEL=s3cr3t-value', 'everything', process.execPath, '--', EVERYTHING_BIN, 'stdio'],
      opts,
    );
    expect(added.stderr).toBe('');
    expect(added.stdout).toBe(`Added the MCP server everything to ${join(home.path, 'config.json')}.\n`);
    const config = JSON.parse(readFileSync(join(home.path, 'config.json'), 'utf8'));
    expect(config).toEqual({
      provider: 'fake',
      workspaceTrust: false,
      mcpServers: {
        everything: { type: 'stdio', command: process.execPath, args: [EVERYTHING_BIN, 'stdio'], env: { LEVEL: 's3cr3t-value' } },
      },
    });
    expect(statSync(join(home.path, 'config.json')).mode & 0o777).toBe(0o600);

    const list = await runCrystal(['mcp', 'list'], opts);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^everything {2}ready {2}stdio {2}home {2}\d+ tools\n$/);

    const get = await runCrystal(['mcp', 'get', 'everything'], opts);
    expect(get.code).toBe(0);
    expect(get.stdout).toContain('  env        LEVEL (values not shown)\n');
    expect(get.stdout).not.toContain('s3cr3t-value');
    expect(get.stdout).toContain('  tool       echo: Echoes back the input string\n');
    expect(get.stdout).toContain('  state      ready\n');

    const again = await runCrystal(['mcp', 'add', 'everything', 'x'], opts);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      `crystal: An MCP server named everything is already in ${join(home.path, 'config.json')}; remove it first.\n`,
    );

    const removed = await runCrystal(['mcp', 'remove', 'everything'], opts);
    expect(removed.stdout).toBe(`Removed the MCP server everything from ${join(home.path, 'config.json')}.\n`);
    expect(JSON.parse(readFileSync(join(home.path, 'config.json'), 'utf8'))).toEqual({
      provider: 'fake',
      workspaceTrust: false,
      mcpServers: {},
    });
    const missing = await runCrystal(['mcp', 'remove', 'everything'], opts);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('crystal: No MCP server named everything in ');
  });

  it('MCP-6 MCP-2 add --scope project writes .mcp.json in Claude Code format; list shows it not started in an untrusted workspace', async () => {
    home = tempHome({});
    const ws = mkdtempSync(join(tmpdir(), 'crystal-ws-mcp-'));
    const opts = { home: home.path, cwd: ws };
    const added = await runCrystal(
      [
        'mcp',
        'add',
        '-s',
        'project',
        '-t',
        'http',
        '-H',
        'Authorization: Bearer ${TOKEN:-none}',
        'remote',
        'http://127.0.0.1:9/mcp',
      ],
      opts,
    );
    expect(added.code).toBe(0);
    expect(JSON.parse(readFileSync(join(ws, '.mcp.json'), 'utf8'))).toEqual({
      mcpServers: {
        remote: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${TOKEN:-none}' } },
      },
    });
    const list = await runCrystal(['mcp', 'list'], opts);
    expect(list.stdout).toBe('remote  not started (untrusted workspace)  http  project\n');
    expect(list.stderr).toContain('lists MCP servers (remote) that were not started');
  });

  it('MCP-6 add refuses an entry start-up would skip, naming the key and the fix, and writes nothing', async () => {
    home = tempHome({ provider: 'x' });
    const before = readFileSync(join(home.path, 'config.json'), 'utf8');
    const opts = { home: home.path, env: { MCP_TEST_UNSET: undefined } };
    const bad = await runCrystal(['mcp', 'add', '-e', 'KEY=${MCP_TEST_UNSET}', 'svc', 'node'], opts);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      `crystal: ${join(home.path, 'config.json')}: mcpServers.svc.env.KEY: the environment variable MCP_TEST_UNSET is not set; set it or write \${MCP_TEST_UNSET:-default}.\n`,
    );
    expect(readFileSync(join(home.path, 'config.json'), 'utf8')).toBe(before);
    const transport = await runCrystal(['mcp', 'add', '-t', 'websocket', 'svc', 'ws://x'], opts);
    expect(transport.stderr).toBe('crystal: --transport websocket: use stdio, http or sse.\n');
  });
});
