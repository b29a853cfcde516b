import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Scenario, scenario } from './pty-harness.js';

const require = createRequire(import.meta.url);
const EVERYTHING_BIN = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

let current: Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('MCP in the terminal', () => {
  it('MCP-5 MCP-4 the first frame does not wait for a hung server; /mcp shows it connecting; an MCP call asks with server, tool, arguments', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-mcp-hung-'));
    writeFileSync(join(dir, 'hang.js'), 'setInterval(() => {}, 1000);');
    current = await scenario({
      replies: [
        { toolCalls: [{ id: 'e', name: 'mcp__everything__echo', arguments: { message: 'from the terminal' } }] },
        { text: 'The echo came back.' },
      ],
      config: {
        mcpServers: {
          hung: { command: process.execPath, args: [join(dir, 'hang.js')] },
          everything: { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] },
        },
      },
    });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    // The hung server never answers initialize; everything comes up on its own time.
    await session.type('/mcp');
    session.write('\r');
    let screen = await session.waitFor(/hung {2}connecting/);
    // Ask again until everything is up (each /mcp prints a fresh report).
    for (let i = 0; i < 60 && !/everything {2}ready/.test(screen); i++) {
      await session.type('/mcp');
      session.write('\r');
      screen = await session.waitFor(/everything {2}ready/, 1000).catch(() => screen);
    }
    expect(screen).toMatch(/everything {2}ready {2}stdio/);
    expect(screen).toMatch(/hung {2}connecting {2}stdio/);
    await session.type('echo something');
    session.write('\r');
    const card = await session.waitFor(/\[Y\] Once/);
    expect(card).toContain('MCP everything/echo (server hints: read-only, idempotent)');
    expect(card).toContain('{"message":"from the terminal"}');
    expect(card).toContain('Risk Write');
    session.write('y');
    await session.waitFor('The echo came back.');
    const body = JSON.stringify(fake.requests[1]?.body);
    expect(body).toContain('Echo: from the terminal');
  });

  it('MCP-5 kill -9 of crystal leaves no MCP server behind: a stdio child ends when its stdin closes', async () => {
    const marker = `crystal-mcp-test-${randomUUID()}`;
    current = await scenario({
      replies: [{ text: 'unused' }],
      config: { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_BIN, 'stdio', marker] } } },
    });
    const { session } = current;
    await session.waitFor('Type a message');
    let screen = '';
    for (let i = 0; i < 60 && !/everything {2}ready/.test(screen); i++) {
      await session.type('/mcp');
      session.write('\r');
      screen = await session.waitFor(/everything {2}ready/, 1000).catch(() => screen);
    }
    const servers = () =>
      readdirSync('/proc').filter((pid) => {
        try {
          return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
        } catch {
          return false;
        }
      });
    expect(servers()).toHaveLength(1);
    session.proc.kill('SIGKILL');
    await session.exited;
    for (let i = 0; i < 200 && servers().length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(servers()).toEqual([]);
  });

  it('MCP-6 server prompts appear in the slash picker once the server is up, and run as the next message', async () => {
    current = await scenario({
      replies: [{ text: 'Sunny there.' }],
      config: { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] } } },
    });
    const { session, fake } = current;
    await session.waitFor('Type a message');
    let screen = '';
    for (let i = 0; i < 60 && !/everything {2}ready/.test(screen); i++) {
      await session.type('/mcp');
      session.write('\r');
      screen = await session.waitFor(/everything {2}ready/, 1000).catch(() => screen);
    }
    await session.type('/mcp__everything__args');
    // The picker truncates the usage column: '/mcp__everything__args-prompt <city> [state]'.
    const picker = await session.waitFor('/mcp__everything__args-prompt <ci');
    expect(picker).toContain('A prompt with two arguments, one required and one optional');
    session.write('\t');
    await session.type('Lyon');
    session.write('\r');
    await session.waitFor('Sunny there.');
    const messages = (fake.requests[0]?.body as { messages: { role: string; content: string }[] }).messages;
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(["What's weather in Lyon?"]);
  });
});
