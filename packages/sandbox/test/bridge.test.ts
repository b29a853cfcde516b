/**
 * SBX-1 with one network bridge per session: proxied commands join a long-lived namespace whose
 * 127.0.0.1:3128 already bridges to the filtering proxy, instead of starting socat each time.
 * The filtering is the proxy's, so the same answers as with the per-command bridge.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  detectSandbox,
  type NetworkProxy,
  type ProxyBridge,
  type SandboxPolicy,
  startNetworkProxy,
  startProxyBridge,
  wrapCommand,
} from '../src/index.js';

let bwrap = '';
const which = (name: string): string =>
  execFileSync('sh', ['-c', `command -v ${name}`])
    .toString()
    .trim();
beforeAll(async () => {
  const found = await detectSandbox();
  if (!found.available) throw new Error(`these tests need bubblewrap: ${found.reason}`);
  bwrap = found.bwrap;
});

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(decide: (host: string) => boolean) {
  const root = mkdtempSync(join(tmpdir(), 'crystal-sbx-bridge-'));
  const workspace = join(root, 'ws');
  mkdirSync(workspace);
  const web: Server = createHttpServer((_req, res) => res.end('hello through the bridge\n'));
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => web.close(() => r())));
  const port = (web.address() as { port: number }).port;
  const asked: string[] = [];
  const proxy: NetworkProxy = await startNetworkProxy({
    decide: async ({ host, port: p }) => {
      asked.push(`${host}:${p}`);
      return decide(host);
    },
    refusal: (host) => `[sandbox] network access to ${host} is not allowed`,
  });
  cleanups.push(() => proxy.close());
  const socat = which('socat');
  const started = await startProxyBridge({ bwrap, socat, nsenter: which('nsenter'), socket: proxy.socket });
  if ('failed' in started) throw new Error(`the bridge did not start: ${started.failed}`);
  const bridge: ProxyBridge = started;
  cleanups.push(() => bridge.close());
  const policy = (): SandboxPolicy => {
    const joined = bridge.join();
    return {
      writable: [workspace],
      hidden: [],
      network: false,
      proxy: { socket: proxy.socket, socat, ...(joined ? { join: joined } : {}) },
    };
  };
  const run = (script: string, chosen = policy()) => {
    const wrapped = wrapCommand({
      argv: ['/bin/bash', '-c', script],
      cwd: workspace,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      policy: chosen,
      bwrap,
    });
    return new Promise<{ code: number | null; output: string; file: string }>((resolve, reject) => {
      const child = spawn(wrapped.file, [...wrapped.args], {
        cwd: workspace,
        env: wrapped.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, output, file: wrapped.file }));
    });
  };
  return { port, asked, run, bridge, policy, proxy };
}

/** The names of the processes a sandboxed command can see in its own PID namespace. */
const PROCESSES = 'for p in /proc/[0-9]*; do cat "$p/comm"; done 2>/dev/null | sort -u | tr "\\n" " "';

describe('SBX-1 one network bridge per session', () => {
  it('SBX-1 through the shared bridge: an allowed host passes (plain HTTP and CONNECT), another gets a [sandbox] 403, a raw socket nothing', async () => {
    const t = await setUp((host) => host === '127.0.0.1');
    const plain = await t.run(`curl -s http://127.0.0.1:${t.port}/x`);
    expect(plain.file).toMatch(/nsenter$/);
    expect(plain).toMatchObject({ code: 0, output: 'hello through the bridge\n' });
    const tunnel = await t.run(`curl -s --proxytunnel http://127.0.0.1:${t.port}/y`);
    expect(tunnel).toMatchObject({ code: 0, output: 'hello through the bridge\n' });
    const refused = await t.run(`curl -s -i http://localhost:${t.port}/z`);
    expect(refused.output).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(refused.output).toContain('[sandbox] network access to localhost is not allowed');
    const raw = await t.run(`exec 3<>/dev/tcp/127.0.0.1/${t.port}`);
    expect(raw.code).not.toBe(0);
    expect(raw.output).toContain('Connection refused');
    expect(t.asked).toEqual([`127.0.0.1:${t.port}`, `127.0.0.1:${t.port}`, `localhost:${t.port}`]);
  });

  it('SBX-1 a proxied command starts no socat of its own, cannot see the bridge, and still writes only the workspace', async () => {
    const t = await setUp(() => true);
    const seen = await t.run(PROCESSES);
    expect(seen.code).toBe(0);
    expect(seen.output).not.toContain('socat');
    expect(seen.output).toContain('bash');
    const outside = await t.run('echo x > /usr/crystal-bridge-test');
    expect(outside.output).toContain('Read-only file system');
    // The per-command bridge (no session bridge to join) does start one, in the command's own PID space.
    const own = await t.run(PROCESSES, { ...t.policy(), proxy: { socket: t.proxy.socket, socat: which('socat') } });
    expect(own.output).toContain('socat');
  });

  it('SBX-1 a bridge whose holder is gone is not joined; the command falls back to its own bridge and still gets through', async () => {
    const t = await setUp(() => true);
    expect(t.bridge.join()).toBeDefined();
    process.kill(t.bridge.pid, 'SIGKILL');
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (t.bridge.join() === undefined) resolve();
        else setTimeout(check, 5);
      };
      check();
    });
    const fallback = await t.run(`curl -s http://127.0.0.1:${t.port}/x`);
    expect(fallback.file).toBe(bwrap);
    expect(fallback).toMatchObject({ code: 0, output: 'hello through the bridge\n' });
  });

  it('SBX-1 the bridge starts every time: 30 starts in a row each listen and are joinable (its info pipe is read to the end)', async () => {
    const proxy = await startNetworkProxy({ decide: async () => false, refusal: () => 'no' });
    cleanups.push(() => proxy.close());
    const failures: string[] = [];
    for (let i = 0; i < 30; i++) {
      const started = await startProxyBridge({ bwrap, socat: which('socat'), nsenter: which('nsenter'), socket: proxy.socket });
      if ('failed' in started) failures.push(started.failed);
      else {
        if (started.join() === undefined) failures.push('not joinable');
        started.close();
      }
    }
    expect(failures).toEqual([]);
  });

  it('SBX-1 the bridge dies with the agent (kill -9): no holder or socat is left behind', async () => {
    const dist = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      const s = await import(${JSON.stringify(dist)});
      const proxy = await s.startNetworkProxy({ decide: async () => false, refusal: () => 'no' });
      const b = await s.startProxyBridge({ bwrap: ${JSON.stringify(bwrap)}, socat: ${JSON.stringify(which('socat'))}, nsenter: ${JSON.stringify(which('nsenter'))}, socket: proxy.socket });
      process.stdout.write(('failed' in b ? 'failed ' + b.failed : String(b.pid)) + '\\n');
      setInterval(() => {}, 1000);`;
    const agent = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve) => agent.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
    const pid = Number(line);
    expect(line).toMatch(/^\d+$/);
    const alive = (p: number): boolean => {
      try {
        return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${p}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    expect(alive(pid)).toBe(true);
    agent.kill('SIGKILL');
    for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 10));
    expect(alive(pid)).toBe(false);
  });
});
