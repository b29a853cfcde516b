import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FakeProvider, fakeConfig, runCrystal, type TempHome, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const everythingRoot = dirname(require.resolve('@modelcontextprotocol/server-everything/package.json'));
const EVERYTHING = { command: process.execPath, args: [join(everythingRoot, 'dist', 'index.js'), 'stdio'] };
const TINY_PNG = /MCP_TINY_IMAGE = "([^"]+)"/.exec(
  readFileSync(join(everythingRoot, 'dist', 'tools', 'get-tiny-image.js'), 'utf8'),
)?.[1] as string;

let fake: FakeProvider | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

function config(protocol: string, imageInput: boolean, servers: Record<string, unknown>) {
  const base = fakeConfig((fake as FakeProvider).baseUriFor(protocol), { mcpServers: servers }, protocol);
  const model = (base.providers as Record<string, { models: Record<string, Record<string, unknown>> }>).fake?.models[
    'fake-model'
  ];
  if (model && imageInput) model.imageInput = true;
  return base;
}

const calls = [
  {
    toolCalls: [
      { id: 'e', name: 'mcp__everything__echo', arguments: { message: 'from crystal run' } },
      { id: 'i', name: 'mcp__everything__get-tiny-image', arguments: {} },
    ],
  },
  { text: 'I saw it.' },
];

describe('crystal run with an MCP server', () => {
  it('MCP-3 IMG-18 a run turn calls server-everything tools; the next request carries the text result and the image', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: calls, whenExhausted: 'error' });
    home = tempHome(config('anthropic', true, { everything: { ...EVERYTHING, trust: true } }));
    const result = await runCrystal(['run', '--format', 'json', 'use the MCP tools'], { home: home.path });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const first = fake.requests[0]?.body as { tools: { name: string; input_schema: unknown }[] };
    const echo = first.tools.find((t) => t.name === 'mcp__everything__echo');
    expect(echo?.input_schema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    const second = JSON.stringify(fake.requests[1]?.body);
    expect(second).toContain('Echo: from crystal run');
    expect(second).toContain(TINY_PNG);
    expect(JSON.parse(result.stdout)).toMatchObject({ text: 'I saw it.' });
  });

  it('MCP-3 IMG-19 on a text-only model the image result is refused, visibly to the model', async () => {
    fake = await FakeProvider.start({ replies: calls, whenExhausted: 'error' });
    home = tempHome(config('openai', false, { everything: EVERYTHING }));
    const result = await runCrystal(['run', '--approval', 'full', 'use the MCP tools'], { home: home.path });
    expect(result.code).toBe(0);
    const messages = (fake.requests[1]?.body as { messages: { role: string; tool_call_id?: string; content: unknown }[] })
      .messages;
    const results = messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => [m.tool_call_id, m.content])).toEqual([
      ['e', 'Echo: from crystal run'],
      ['i', 'This model cannot accept tool images.'],
    ]);
    expect(JSON.stringify(fake.requests[1]?.body)).not.toContain(TINY_PNG);
  });

  it('MCP-4 without "trust" and in the default mode, crystal run denies the MCP call (exit 4) and never runs it', async () => {
    fake = await FakeProvider.start({
      replies: [{ toolCalls: [{ id: 'e', name: 'mcp__everything__echo', arguments: { message: 'x' } }] }, { text: 'ok' }],
      whenExhausted: 'error',
    });
    home = tempHome(config('openai', false, { everything: EVERYTHING }));
    const result = await runCrystal(['run', 'use the MCP tools'], { home: home.path });
    expect(result.code).toBe(4);
    const messages = (fake.requests[1]?.body as { messages: { role: string; content: unknown }[] }).messages;
    expect(String(messages.find((m) => m.role === 'tool')?.content)).toContain('The user declined this action.');
  });

  it('MCP-5 a broken server and a hung one give one note each on stderr; the run goes on and the hung child is stopped at exit', async () => {
    fake = await FakeProvider.start({ replies: [{ text: 'fine without it' }], whenExhausted: 'error' });
    const ws = mkdtempSync(join(tmpdir(), 'crystal-ws-mcp-'));
    const pidFile = join(ws, 'hung.pid');
    writeFileSync(
      join(ws, 'hang.js'),
      `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`,
    );
    home = tempHome(
      config('openai', false, {
        broken: { command: 'crystal-no-such-server' },
        // Started, never answers initialize, ignores stdin closing: close() must still end it.
        hung: { command: process.execPath, args: [join(ws, 'hang.js')] },
      }),
    );
    const result = await runCrystal(['run', '-w', ws, 'hello'], { home: home.path, timeoutMs: 60_000 });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('fine without it');
    const notes = result.stderr.split('\n').filter((line) => line.includes('MCP server'));
    expect(notes).toEqual([
      `The MCP server broken (stdio, ${join(home.path, 'config.json')}) failed to start: the command "crystal-no-such-server" was not found; install it or fix "command" in ${join(home.path, 'config.json')}. The session goes on without it; /mcp shows its state.`,
      'The MCP server hung has not come up within 10 seconds; the turn starts without it, and its tools join a later round if it does.',
    ]);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
