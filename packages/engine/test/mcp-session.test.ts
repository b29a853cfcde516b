import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolDefinition } from '@crystal/core';
import { FakeProvider, fakeConfig } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { EVERYTHING_BIN } from '../../mcp/test/servers.js';
import type { ApprovalRequest, Config } from '../src/index.js';
import { assembleWorkspaceTools, Session, trustWorkspace, type WorkspaceTools } from '../src/index.js';
import { manualClock } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const everything = { command: process.execPath, args: [EVERYTHING_BIN, 'stdio'] };

interface Setup {
  home: string;
  workspace: string;
  tools: WorkspaceTools;
  asked: ApprovalRequest[];
  notes: string[];
}

async function setup(
  options: {
    mcpServers?: Record<string, unknown>;
    approval?: 'default' | 'edit' | 'full';
    answer?: 'once' | 'session' | 'always' | 'deny';
    projectFile?: Record<string, unknown>;
    trust?: boolean;
    config?: Partial<Config>;
    imageInput?: boolean;
    settle?: boolean;
  } = {},
): Promise<Setup> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-mcp-engine-')));
  const home = join(base, 'home');
  const workspace = join(base, 'ws');
  for (const dir of [home, workspace]) mkdirSync(dir);
  if (options.projectFile) writeFileSync(join(workspace, '.mcp.json'), JSON.stringify(options.projectFile));
  if (options.trust) await trustWorkspace(home, workspace);
  const asked: ApprovalRequest[] = [];
  const notes: string[] = [];
  const tools = await assembleWorkspaceTools({
    home,
    workspace,
    config: { ...(options.config ?? {}), ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}) } as Config,
    mode: 'work',
    approval: options.approval ?? 'default',
    sessionId: () => 'test',
    imageInput: () => options.imageInput ?? false,
    askApproval: async (request) => {
      asked.push(request);
      return options.answer ?? 'deny';
    },
    onNote: (text) => notes.push(text),
    env: { ...process.env },
  });
  cleanups.push(() => tools.close());
  if (options.settle !== false) await tools.mcp.manager?.whenSettled();
  return { home, workspace, tools, asked, notes };
}

function call(name: string, input: Record<string, unknown>, id = 'c1') {
  return { id, name, input, arguments: JSON.stringify(input) };
}

const never = new AbortController().signal;

describe('MCP-3 MCP tools in the catalog', () => {
  it('MCP-3 tools appear as mcp__<server>__<tool> with the server JSON Schema, in Work only', async () => {
    const { tools } = await setup({ mcpServers: { everything } });
    const echo = tools.tools().find((t) => t.name === 'mcp__everything__echo');
    expect(echo?.description).toBe('Echoes back the input string');
    expect(echo?.parameters).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string', description: 'Message to echo' } },
      required: ['message'],
    });
    tools.setMode('plan');
    expect(tools.tools().some((t) => t.name.startsWith('mcp__'))).toBe(false);
  });

  it('MCP-3 an embedded resource result reaches the model as its text, headed by its URI', async () => {
    const { tools } = await setup({ mcpServers: { everything } });
    const tool = tools.tools().find((t) => t.name === 'mcp__everything__get-resource-reference') as ToolDefinition;
    const out = await tool.execute({ resourceType: 'Text', resourceId: 2 }, { signal: never, callId: 'x' });
    expect(out).toEqual([
      {
        type: 'text',
        text: expect.stringMatching(
          /^Returning resource reference for Resource 2:\n\[resource demo:\/\/resource\/dynamic\/text\/2\]\nResource 2: This is a plaintext resource created at [^\n]+\nYou can access this resource using the URI: demo:\/\/resource\/dynamic\/text\/2$/,
        ),
      },
    ]);
  });

  it('MCP-3 IMG-19 an image result on a text-only turn is refused as the exec tools refuse it', async () => {
    const { tools } = await setup({ mcpServers: { everything }, imageInput: false });
    const tool = tools.tools().find((t) => t.name === 'mcp__everything__get-tiny-image') as ToolDefinition;
    await expect(tool.execute({}, { signal: never, callId: 'x' })).rejects.toThrow('This model cannot accept tool images.');
  });
});

describe('MCP-3 through a session turn against the fake provider', () => {
  async function turn(
    replies: ConstructorParameters<typeof Object>[0][],
    options: {
      imageInput?: boolean;
      wire?: string;
      extra?: ToolDefinition[];
      settle?: boolean;
      servers?: Record<string, unknown>;
    } = {},
  ) {
    const fake = await FakeProvider.start({ wire: options.wire ?? 'openai', replies: replies as never, whenExhausted: 'error' });
    cleanups.push(() => fake.close());
    const config = fakeConfig(fake.baseUriFor(options.wire ?? 'openai'), {}, options.wire ?? 'openai') as Config;
    if (options.imageInput) {
      const model = config.providers?.fake?.models['fake-model'];
      if (model) model.imageInput = true;
    }
    const s = await setup({
      mcpServers: options.servers ?? { everything },
      approval: 'full',
      config,
      imageInput: options.imageInput ?? false,
      ...(options.settle === false ? { settle: false } : {}),
    });
    const extra = options.extra ?? [];
    const session = await Session.open({
      home: s.home,
      workspace: s.workspace,
      config,
      env: {},
      clock: manualClock(),
      tools: () => [...s.tools.tools(), ...extra],
      // The test's own tools (open_gate) pass; MCP calls go through the real policy.
      policy: {
        decide: (call, signal) =>
          extra.some((t) => t.name === call.name)
            ? Promise.resolve({ allow: true as const })
            : s.tools.policy.decide(call, signal),
      },
      mapException: s.tools.mapException,
    });
    return { fake, session, setup: s };
  }

  it('MCP-3 the next request carries the echo result; an isError result stays a model-visible error', async () => {
    const { fake, session } = await turn([
      {
        toolCalls: [
          { id: 'a', name: 'mcp__everything__echo', arguments: { message: 'ping' } },
          { id: 'b', name: 'mcp__everything__echo', arguments: { message: 5 } },
        ],
      },
      { text: 'done' },
    ]);
    const result = await session.send('use the echo tool');
    expect(result.stopReason).toBe('completed');
    const first = fake.requests[0]?.body as { tools: { function: { name: string } }[] };
    expect(first.tools.map((t) => t.function.name)).toContain('mcp__everything__echo');
    const messages = (fake.requests[1]?.body as { messages: { role: string; tool_call_id?: string; content: unknown }[] })
      .messages;
    const results = messages.filter((m) => m.role === 'tool');
    expect(results[0]).toMatchObject({ tool_call_id: 'a', content: 'Echo: ping' });
    expect(String(results[1]?.content)).toContain('Input validation error');
    const history = session.history().flatMap((m) => m.content.filter((c) => c.type === 'tool-result'));
    expect(history.map((r) => (r as { isError: boolean }).isError)).toEqual([false, true]);
  });

  it('MCP-3 IMG-18 an image result becomes a marker and the next request carries the image on an image-capable model', async () => {
    const { fake, session } = await turn(
      [{ toolCalls: [{ id: 'i', name: 'mcp__everything__get-tiny-image', arguments: {} }] }, { text: 'a tiny image' }],
      { imageInput: true, wire: 'anthropic' },
    );
    await session.send('show me the image');
    const tinyPng = /MCP_TINY_IMAGE = "([^"]+)"/.exec(
      readFileSync(join(EVERYTHING_BIN, '..', 'tools', 'get-tiny-image.js'), 'utf8'),
    )?.[1] as string;
    const body = JSON.stringify(fake.requests[1]?.body);
    expect(body).toContain(tinyPng);
    // The transcript keeps a marker, not the bytes (IMG-18, WIRE-4).
    expect(JSON.stringify(session.history())).not.toContain(tinyPng.slice(0, 200));
  });

  it('MCP-5 TURN-1 a server that comes up during the turn joins at the next round', async () => {
    const gate = join(mkdtempSync(join(tmpdir(), 'crystal-mcp-gate-')), 'open');
    const late = {
      command: '/bin/sh',
      args: ['-c', 'while [ ! -e "$GATE" ]; do sleep 0.02; done; exec "$NODE" "$BIN" stdio'],
      env: { GATE: gate, NODE: process.execPath, BIN: EVERYTHING_BIN },
    };
    let tools: WorkspaceTools | undefined;
    const openGate: ToolDefinition = {
      name: 'open_gate',
      description: 'Lets the late server start.',
      parameters: { type: 'object', properties: {} },
      execute: async () => {
        writeFileSync(gate, '');
        await tools?.mcp.manager?.whenSettled();
        return 'opened';
      },
    };
    const {
      fake,
      session,
      setup: s,
    } = await turn(
      [
        { toolCalls: [{ id: 'g', name: 'open_gate', arguments: {} }] },
        { toolCalls: [{ id: 'e', name: 'mcp__late__echo', arguments: { message: 'joined' } }] },
        { text: 'ok' },
      ],
      { servers: { late }, extra: [openGate], settle: false },
    );
    tools = s.tools;
    await session.send('go');
    const names = (n: number) =>
      (fake.requests[n]?.body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
    expect(names(0)).not.toContain('mcp__late__echo');
    expect(names(1)).toContain('mcp__late__echo');
    const messages = (fake.requests[2]?.body as { messages: { role: string; content: unknown }[] }).messages;
    expect(messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['opened', 'Echo: joined']);
  });
});

describe('MCP-4 approval of MCP calls', () => {
  it('MCP-4 default asks with a card naming server, tool, arguments and the read-only hint; a deny does not run it', async () => {
    const { tools, asked } = await setup({ mcpServers: { everything } });
    const decision = await tools.policy.decide(call('mcp__everything__echo', { message: 'hi' }), never);
    expect(decision.allow).toBe(false);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.card).toEqual({
      tool: 'mcp__everything__echo',
      risk: 'Write',
      authority: 'Workspace',
      summary: 'MCP everything/echo (server hints: read-only, idempotent)',
      subject: '{"message":"hi"}',
      grantScope:
        'Session and Always allow every mcp__everything__echo call in this workspace; Session until you quit, Always saved in permissions.json.',
    });
  });

  it('MCP-4 edit asks too; full passes without asking', async () => {
    const edit = await setup({ mcpServers: { everything }, approval: 'edit' });
    await edit.tools.policy.decide(call('mcp__everything__echo', { message: 'hi' }), never);
    expect(edit.asked).toHaveLength(1);
    const full = await setup({ mcpServers: { everything }, approval: 'full' });
    expect(await full.tools.policy.decide(call('mcp__everything__echo', { message: 'hi' }), never)).toEqual({ allow: true });
    expect(full.asked).toHaveLength(0);
  });

  it('MCP-4 "trust": true on the server entry passes in default', async () => {
    const { tools, asked } = await setup({ mcpServers: { everything: { ...everything, trust: true } } });
    expect(await tools.policy.decide(call('mcp__everything__echo', { message: 'hi' }), never)).toEqual({ allow: true });
    expect(asked).toHaveLength(0);
  });

  it('MCP-4 a Session grant covers that server tool with any arguments, not another tool; Always lands in permissions.json', async () => {
    const s = await setup({ mcpServers: { everything }, answer: 'session' });
    await s.tools.policy.decide(call('mcp__everything__echo', { message: 'one' }), never);
    await s.tools.policy.decide(call('mcp__everything__echo', { message: 'two' }), never);
    expect(s.asked).toHaveLength(1);
    await s.tools.policy.decide(call('mcp__everything__get-sum', { a: 1, b: 2 }), never);
    expect(s.asked).toHaveLength(2);
    const always = await setup({ mcpServers: { everything }, answer: 'always' });
    await always.tools.policy.decide(call('mcp__everything__get-sum', { a: 1, b: 2 }), never);
    const saved = JSON.parse(readFileSync(join(always.home, 'permissions.json'), 'utf8'));
    expect(saved.grants).toEqual([
      { workspace: always.workspace, tool: 'mcp__everything__get-sum', fingerprint: 'mcp__everything__get-sum' },
    ]);
  });
});

describe('MCP-2 project servers need a trusted workspace', () => {
  it('MCP-2 .mcp.json servers do not start in an untrusted workspace (one note), and start once it is trusted', async () => {
    const file = { mcpServers: { proj: everything } };
    const untrusted = await setup({ projectFile: file });
    expect(untrusted.tools.mcp.manager).toBeUndefined();
    expect(untrusted.tools.tools().some((t) => t.name.startsWith('mcp__proj__'))).toBe(false);
    expect(untrusted.tools.notes).toEqual([
      `${join(untrusted.workspace, '.mcp.json')} lists MCP servers (proj) that were not started: project servers are project code and this workspace is not trusted. Trust the workspace to start them.`,
    ]);
    // The sandbox is off here: this test is about trust, and a checkout under /tmp would put the
    // server's own files behind the sandbox's private /tmp (the SBX-1 MCP-2 test below covers it).
    const trusted = await setup({ projectFile: file, trust: true, config: { sandbox: 'off' } as Partial<Config> });
    expect(trusted.tools.notes.filter((note) => note.includes('.mcp.json'))).toEqual([]);
    expect(trusted.tools.tools().map((t) => t.name)).toContain('mcp__proj__echo');
  });

  it('SBX-1 MCP-2 a project stdio server starts inside the OS sandbox: its write outside the workspace never lands; a Home server is not wrapped', async () => {
    // Not an MCP server: a child that writes beside the workspace at start-up, then stays a moment.
    const writer = (marker: string) => ({
      command: process.execPath,
      args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x'); setTimeout(() => {}, 300);`],
    });
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-mcp-outside-')));
    const projectMarker = join(outside, 'from-project');
    const homeMarker = join(outside, 'from-home');
    const { workspace } = await setup({
      projectFile: { mcpServers: { proj: writer(projectMarker) } },
      mcpServers: { mine: writer(homeMarker) },
      trust: true,
      config: { sandbox: 'workspace-write' } as Partial<Config>,
    });
    expect(workspace).not.toBe(outside);
    expect(existsSync(homeMarker)).toBe(true);
    expect(existsSync(projectMarker)).toBe(false);
  });

  it('MCP-2 Home config.json mcpServers start in any workspace', async () => {
    const { tools, notes } = await setup({ mcpServers: { home: everything } });
    expect(notes).toEqual([]);
    expect(tools.tools().map((t) => t.name)).toContain('mcp__home__echo');
  });
});
