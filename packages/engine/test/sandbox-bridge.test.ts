/**
 * SBX-1 with the session's network bridge, through the real bash tool: proxied calls join one
 * long-lived bridge instead of starting socat each (bench/sandbox.mjs), with the same filtering,
 * the same kills, and the bridge gone when the session closes.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParsedToolCall, ToolExecutor } from '@crystal/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../src/config/schema.js';
import { assembleWorkspaceTools } from '../src/workspace-tools.js';

const webs: HttpServer[] = [];
const closers: Array<() => void> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  for (const web of webs.splice(0)) {
    web.closeAllConnections();
    await new Promise((r) => web.close(r));
  }
});

function fixture() {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-sbx-bridge-')));
  const home = join(base, 'crystal-home');
  const workspace = join(base, 'ws');
  for (const dir of [home, join(base, 'user'), workspace]) mkdirSync(dir, { recursive: true });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(base, 'user'), LANG: 'C' };
  // The classifier sees `sh fetch.sh`, a workspace command: the host decision is the proxy's.
  writeFileSync(join(workspace, 'fetch.sh'), 'curl -s "$1"\n');
  return { home, workspace, env };
}

async function session(config: Partial<Config>) {
  const f = fixture();
  const hosts: string[] = [];
  const assembled = await assembleWorkspaceTools({
    home: f.home,
    workspace: f.workspace,
    config: { approval: 'full', ...config } as Config,
    mode: 'work',
    env: f.env,
    sessionId: () => 'session-bridge',
    imageInput: () => false,
    askApproval: async (request) => {
      if (request.card.tool === 'sandbox network') hosts.push(request.card.subject ?? '');
      return 'deny';
    },
  });
  closers.push(() => assembled.containment.close());
  await assembled.containment.ready();
  const executor = new ToolExecutor({ tools: assembled.tools(), policy: assembled.policy, mapException: assembled.mapException });
  let n = 0;
  const bash = async (command: string) => {
    const parsed: ParsedToolCall = { id: `b${++n}`, name: 'bash', arguments: JSON.stringify({ command }), input: { command } };
    const [result] = await executor.runBatch([parsed], new AbortController().signal);
    return result?.content.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';
  };
  return { ...f, assembled, bash, hosts };
}

async function listenHttp(): Promise<number> {
  const web = createHttpServer((_req, res) => res.end('web page\n'));
  webs.push(web);
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  return (web.address() as { port: number }).port;
}

/** Our own child processes whose command line holds `marker` (the bridge's holder is one). */
function childrenWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (fields[0] !== 'Z' && Number(fields[1]) === process.pid && cmdline.includes(marker)) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

const PROCESSES = 'for p in /proc/[0-9]*; do cat "$p/comm"; done 2>/dev/null | sort -u | tr "\\n" " "';

describe('SBX-1 proxied bash calls join the session network bridge', () => {
  it('SBX-1 a proxied bash call starts no socat of its own; the allowed host passes, another is refused by the proxy', async () => {
    const port = await listenHttp();
    const s = await session({ sandbox: { mode: 'workspace-write', network: { allow: ['127.0.0.1'] } } });
    const seen = await s.bash(PROCESSES);
    expect(seen).toMatch(/^exit 0\n/);
    expect(seen).toContain('bash');
    expect(seen).not.toContain('socat');
    expect(await s.bash(`sh fetch.sh http://127.0.0.1:${port}/`)).toBe('exit 0\nweb page\n');
    const refused = await s.bash(`sh fetch.sh http://localhost:${port}/`);
    expect(refused).toContain('[sandbox] network access to localhost is not allowed (the operator declined it)');
    expect(s.hosts).toEqual(['localhost']);
    // A raw socket still has no network: only the bridge listens in there.
    expect(await s.bash(`exec 3<>/dev/tcp/127.0.0.1/${port}`)).toContain('Connection refused');
  });

  it('SBX-1 the bridge lives as long as the session: one holder, gone after close', async () => {
    const s = await session({ sandbox: { mode: 'workspace-write', network: { allow: ['127.0.0.1'] } } });
    await s.bash('true');
    await s.bash('true');
    const holders = childrenWith('TCP-LISTEN:3128');
    expect(holders).toHaveLength(1);
    s.assembled.containment.close();
    for (let i = 0; i < 200 && childrenWith('TCP-LISTEN:3128').length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(childrenWith('TCP-LISTEN:3128')).toEqual([]);
  });
});
