import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { McpManager, type McpServerSpec } from '../src/index.js';
import { EVERYTHING_BIN, everythingSpec, httpSpec, stdioSpec } from './servers.js';

const never = new AbortController().signal;
const open: McpManager[] = [];

afterEach(async () => {
  for (const manager of open.splice(0)) await manager.close();
});

function manager(servers: McpServerSpec[]): { manager: McpManager; notes: string[]; nextNote: () => Promise<string> } {
  const notes: string[] = [];
  const waiters: ((text: string) => void)[] = [];
  const created = new McpManager({
    servers,
    workspace: tmpdir(),
    onNote: (text) => {
      notes.push(text);
      waiters.shift()?.(text);
    },
  });
  open.push(created);
  return { manager: created, notes, nextNote: () => new Promise((resolve) => waiters.push(resolve)) };
}

/** server-everything behind a shell loop that waits for a file: a server that comes up when the test says. */
export function gatedEverything(name: string): { spec: McpServerSpec; open: () => void } {
  const gate = join(mkdtempSync(join(tmpdir(), 'crystal-mcp-gate-')), 'open');
  const script = `while [ ! -e "$GATE" ]; do sleep 0.02; done; exec "$NODE" "$BIN" stdio`;
  return {
    spec: stdioSpec(name, ['-c', script], {
      command: '/bin/sh',
      env: { GATE: gate, NODE: process.execPath, BIN: EVERYTHING_BIN },
    }),
    open: () => writeFileSync(gate, ''),
  };
}

/** A small Streamable HTTP server on the SDK's own classes: a `wait` tool that resolves when the call is cancelled. */
async function cancellableServer(): Promise<{
  url: string;
  cancelled: Promise<string>;
  started: Promise<void>;
  close(): Promise<void>;
}> {
  let onCancelled: (reason: string) => void = () => undefined;
  let onStarted: () => void = () => undefined;
  const cancelled = new Promise<string>((resolve) => {
    onCancelled = resolve;
  });
  const started = new Promise<void>((resolve) => {
    onStarted = resolve;
  });
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      const server = new McpServer({ name: 'cancel-probe', version: '1.0.0' });
      server.registerTool(
        'wait',
        { description: 'Waits until cancelled.', inputSchema: { label: z.string() } },
        (_args, extra) => {
          onStarted();
          return new Promise((resolve) => {
            extra.signal.addEventListener('abort', () => {
              onCancelled(String(extra.signal.reason));
              resolve({ content: [{ type: 'text', text: 'stopped' }] });
            });
          });
        },
      );
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, created);
        },
      });
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    cancelled,
    started,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('MCP-5 start-up, failures, timeouts, cancel and restart', () => {
  it('MCP-5 start() returns at once; a server that comes up later is offered from then on', async () => {
    const gated = gatedEverything('late');
    const { manager: m, notes } = manager([gated.spec]);
    m.start();
    // The server cannot be up: its command waits for the gate.
    expect(m.status()[0]?.state).toBe('connecting');
    expect(m.tools()).toEqual([]);
    gated.open();
    await m.whenSettled();
    expect(m.status()[0]?.state).toBe('ready');
    expect(m.tools().map((t) => t.name)).toContain('mcp__late__echo');
    expect(notes).toEqual([]);
  });

  it('MCP-5 a missing command and a server that exits at once each give one note naming it; the others still come up', async () => {
    const { manager: m, notes } = manager([
      stdioSpec('missing', [], { command: 'crystal-no-such-mcp-server' }),
      stdioSpec('dies', ['-e', 'process.stderr.write("bad token\\n"); process.exit(3)']),
      everythingSpec('ok'),
    ]);
    await m.whenSettled();
    expect(m.status().map((s) => [s.name, s.state])).toEqual([
      ['missing', 'failed'],
      ['dies', 'failed'],
      ['ok', 'ready'],
    ]);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toBe(
      'The MCP server missing (stdio, /test/config.json) failed to start: the command "crystal-no-such-mcp-server" was not found; install it or fix "command" in /test/config.json. The session goes on without it; /mcp shows its state.',
    );
    expect(notes[1]).toContain('The MCP server dies (stdio, /test/config.json) failed to start:');
    expect(notes[1]).toContain('stderr: bad token');
    expect(m.tools().every((t) => t.server === 'ok')).toBe(true);
  });

  it('MCP-5 a call over the per-call timeout fails with the server, the tool and the limit', async () => {
    const { manager: m } = manager([everythingSpec('slow', { timeoutMs: 1000 })]);
    await m.whenSettled();
    const slow = m.tools().find((t) => t.tool === 'trigger-long-running-operation');
    await expect(slow?.call({ duration: 60, steps: 2 }, never)).rejects.toThrow(
      'The MCP tool trigger-long-running-operation of server slow timed out after 1 seconds.',
    );
    // The connection survives a timeout.
    const echo = m.tools().find((t) => t.tool === 'echo');
    expect((await echo?.call({ message: 'still here' }, never))?.content).toEqual([{ type: 'text', text: 'Echo: still here' }]);
  });

  it('MCP-5 cancel propagates: an aborted call sends notifications/cancelled and the server stops the handler', async () => {
    const probe = await cancellableServer();
    try {
      const { manager: m } = manager([httpSpec('probe', probe.url, 'http')]);
      await m.whenSettled();
      const wait = m.tools().find((t) => t.name === 'mcp__probe__wait');
      const controller = new AbortController();
      const call = wait?.call({ label: 'x' }, controller.signal);
      await probe.started;
      controller.abort(new Error('operator pressed Ctrl+C'));
      await expect(call).rejects.toThrow('operator pressed Ctrl+C');
      expect(await probe.cancelled).toContain('operator pressed Ctrl+C');
    } finally {
      await probe.close();
    }
  });

  it('MCP-5 a crashed stdio server is started once more; a second crash is final and reported', async () => {
    const { manager: m, notes, nextNote } = manager([everythingSpec('crashy')]);
    await m.whenSettled();
    const first = m.connection('crashy')?.pid as number;
    expect(first).toBeGreaterThan(0);
    const restarted = nextNote();
    process.kill(first, 'SIGKILL');
    // The note carries the last stderr lines (here the server's start-up banner).
    expect(await restarted).toMatch(/^The MCP server crashy stopped( \(stderr: .+\))?; starting it again\.$/);
    await m.whenSettled();
    const second = m.connection('crashy')?.pid as number;
    expect(second).toBeGreaterThan(0);
    expect(second).not.toBe(first);
    const echo = () => m.tools().find((t) => t.tool === 'echo');
    expect((await echo()?.call({ message: 'back' }, never))?.content).toEqual([{ type: 'text', text: 'Echo: back' }]);
    const tool = echo();
    const final = nextNote();
    process.kill(second, 'SIGKILL');
    expect(await final).toMatch(
      /^The MCP server crashy \(stdio, \/test\/config.json\) stopped again after a restart( \(stderr: .+\))?\. The session goes on without it; \/mcp shows its state\.$/,
    );
    expect(m.status()[0]).toMatchObject({ state: 'failed', restarts: 1, tools: [] });
    expect(m.tools()).toEqual([]);
    await expect(tool?.call({ message: 'gone' }, never)).rejects.toThrow(
      /^The MCP server crashy is not running: it stopped again after a restart/,
    );
    expect(notes).toHaveLength(2);
    expect(existsSync(`/proc/${second}`)).toBe(false);
  });
});
