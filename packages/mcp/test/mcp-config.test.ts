// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the Claude Code entry syntax under test, not a template.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mcpToolName, mergeServers, parseMcpServers, projectServersFile, readServersFile } from '../src/index.js';

/** A `.mcp.json` as Claude Code writes it (`claude mcp add --scope project …`). */
const CLAUDE_CODE_FILE = {
  mcpServers: {
    filesystem: {
      type: 'stdio',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '${HOME}/src'],
      env: { API_KEY: '${MY_KEY}', LEVEL: '${LEVEL:-info}' },
    },
    github: { type: 'http', url: 'https://api.githubcopilot.com/mcp/', headers: { Authorization: 'Bearer ${GH_TOKEN}' } },
    legacy: { type: 'sse', url: 'http://127.0.0.1:9/sse' },
    bare: { command: 'mcp-thing' },
    remote: { url: 'https://example.com/mcp' },
  },
};

const ENV = { HOME: '/home/me', MY_KEY: 'k-1', GH_TOKEN: 'gh-2' };

describe('MCP-2 server entries in Claude Code format', () => {
  it('MCP-2 an existing .mcp.json works unchanged: stdio, http and sse entries with ${VAR} and ${VAR:-default}', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-mcp-cfg-'));
    writeFileSync(projectServersFile(dir), JSON.stringify(CLAUDE_CODE_FILE));
    const read = readServersFile(projectServersFile(dir), 'project', ENV);
    expect(read.notes).toEqual([]);
    const byName = Object.fromEntries(read.servers.map((s) => [s.name, s]));
    expect(byName.filesystem).toMatchObject({
      transport: 'stdio',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/src'],
      env: { API_KEY: 'k-1', LEVEL: 'info' },
      source: 'project',
      trust: false,
      timeoutMs: 120_000,
    });
    expect(byName.github).toMatchObject({
      transport: 'http',
      url: 'https://api.githubcopilot.com/mcp/',
      headers: { Authorization: 'Bearer gh-2' },
    });
    expect(byName.legacy).toMatchObject({ transport: 'sse', url: 'http://127.0.0.1:9/sse' });
    expect(byName.bare).toMatchObject({ transport: 'stdio', command: 'mcp-thing', args: [] });
    expect(byName.remote).toMatchObject({ transport: 'http' });
  });

  it('MCP-2 a bad entry is skipped with one note naming the file, the key and the fix; the others still load', () => {
    const parsed = parseMcpServers(
      {
        good: { command: 'x' },
        noType: { args: ['a'] },
        badType: { type: 'websocket', url: 'ws://x' },
        badArgs: { command: 'x', args: 'a b' },
        unset: { command: 'x', env: { K: '${NOT_SET_ANYWHERE}' } },
        badTimeout: { command: 'x', timeoutSeconds: -1 },
        off: { command: 'x', disabled: true },
        'bad name!': { command: 'x' },
      },
      '/p/.mcp.json',
      'project',
      {},
    );
    expect(parsed.servers.map((s) => s.name)).toEqual(['good']);
    expect(parsed.notes).toEqual([
      '/p/.mcp.json: mcpServers.noType: expected "command" (a local stdio server) or "url" (a remote server); the MCP server noType was skipped.',
      '/p/.mcp.json: mcpServers.badType.type: "websocket" is not a transport; use "stdio", "http" or "sse"; the MCP server badType was skipped.',
      '/p/.mcp.json: mcpServers.badArgs.args: expected an array of strings, got string "a b"; the MCP server badArgs was skipped.',
      '/p/.mcp.json: mcpServers.unset.env.K: the environment variable NOT_SET_ANYWHERE is not set; set it or write ${NOT_SET_ANYWHERE:-default}; the MCP server unset was skipped.',
      '/p/.mcp.json: mcpServers.badTimeout.timeoutSeconds: expected a number of seconds from 0 to 2147483, or "unlimited"; the MCP server badTimeout was skipped.',
      '/p/.mcp.json: mcpServers.bad name!: a server name has 1-64 characters: a letter or digit first, then letters, digits, _ . or -; the MCP server bad name! was skipped.',
    ]);
  });

  it('MCP-2 an invalid .mcp.json gives one note and no servers; a missing one is silent', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-mcp-cfg-'));
    expect(readServersFile(projectServersFile(dir), 'project', {})).toEqual({ servers: [], notes: [], exists: false });
    writeFileSync(projectServersFile(dir), '{"mcpServers": {');
    const read = readServersFile(projectServersFile(dir), 'project', {});
    expect(read.servers).toEqual([]);
    expect(read.notes).toHaveLength(1);
    expect(read.notes[0]).toContain(`${projectServersFile(dir)} is not valid JSON`);
  });

  it('MCP-2 our keys: trust, timeoutSeconds (or "unlimited"); a project entry replaces a Home entry of the same name', () => {
    const home = parseMcpServers(
      { a: { command: 'home-a' }, b: { command: 'home-b', trust: true } },
      '/h/config.json',
      'home',
      {},
    );
    const project = parseMcpServers({ a: { command: 'proj-a', timeoutSeconds: 'unlimited' } }, '/p/.mcp.json', 'project', {});
    const merged = mergeServers(home.servers, project.servers);
    expect(merged.map((s) => [s.name, s.command, s.source, s.trust, s.timeoutMs])).toEqual([
      ['a', 'proj-a', 'project', false, null],
      ['b', 'home-b', 'home', true, 120_000],
    ]);
  });

  it('MCP-3 tool names are mcp__<server>__<tool> in the providers alphabet, capped at 64 characters', () => {
    expect(mcpToolName('everything', 'get-tiny-image')).toBe('mcp__everything__get-tiny-image');
    expect(mcpToolName('my.server', 'do thing/now')).toBe('mcp__my_server__do_thing_now');
    const long = mcpToolName('s'.repeat(40), 't'.repeat(40));
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^mcp__s+__t+_[0-9a-f]{8}$/);
    expect(mcpToolName('s'.repeat(40), `${'t'.repeat(39)}u`)).not.toBe(long);
  });
});
