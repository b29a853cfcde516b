import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  credentialPaths,
  detectSandbox,
  explainRefusal,
  protectedWorkspacePaths,
  type SandboxPolicy,
  startNetworkProxy,
  wrapCommand,
} from '../src/index.js';

let bwrap = '';
beforeAll(async () => {
  const found = await detectSandbox();
  // The CI machine installs bubblewrap (.ci/run); a machine without it fails here, loudly.
  if (!found.available) throw new Error(`these tests need bubblewrap: ${found.reason}`);
  bwrap = found.bwrap;
});

interface Fixture {
  readonly root: string;
  readonly workspace: string;
  readonly userHome: string;
  readonly outside: string;
}

function fixture(): Fixture {
  const root = mkdtempSync(join(tmpdir(), 'crystal-sbx-'));
  const workspace = join(root, 'ws');
  const userHome = join(root, 'home');
  const outside = join(root, 'outside');
  for (const dir of [workspace, join(workspace, '.git', 'hooks'), join(userHome, '.ssh'), outside])
    mkdirSync(dir, { recursive: true });
  writeFileSync(join(userHome, '.ssh', 'id_rsa'), 'PRIVATE KEY MATERIAL\n');
  writeFileSync(join(userHome, '.netrc'), 'machine example.com password hunter2\n');
  writeFileSync(join(workspace, '.git', 'config'), '[core]\n');
  return { root, workspace, userHome, outside };
}

function policyOf(f: Fixture, network = false): SandboxPolicy {
  return {
    writable: [f.workspace],
    // The fake home sits in the host's /tmp, which is private inside: bind it back so that the
    // hidden paths, not the private /tmp, are what keeps its secrets out.
    readable: [f.userHome],
    readOnly: protectedWorkspacePaths(f.workspace),
    hidden: credentialPaths(f.userHome),
    network,
  };
}

function run(f: Fixture, script: string, network = false): Promise<{ code: number | null; output: string }> {
  return runWith(f, script, policyOf(f, network));
}

async function runWith(f: Fixture, script: string, policy: SandboxPolicy): Promise<{ code: number | null; output: string }> {
  const wrapped = wrapCommand({
    argv: ['/bin/bash', '-c', script],
    cwd: f.workspace,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: f.userHome },
    policy,
    bwrap,
  });
  return new Promise((resolve, reject) => {
    const child = spawn(wrapped.file, [...wrapped.args], {
      cwd: f.workspace,
      env: wrapped.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => {
      wrapped.cleanup();
      resolve({ code, output });
    });
  });
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((r) => server.close(r));
});

describe('SBX-1 the bubblewrap policy', () => {
  it('SBX-1 workspace writes land on disk', async () => {
    const f = fixture();
    const result = await run(f, 'echo made > made.txt && mkdir -p sub && echo deep > sub/x');
    expect(result).toEqual({ code: 0, output: '' });
    expect(readFileSync(join(f.workspace, 'made.txt'), 'utf8')).toBe('made\n');
    expect(readFileSync(join(f.workspace, 'sub', 'x'), 'utf8')).toBe('deep\n');
  });

  it('SBX-1 a write outside the workspace is refused by the OS (read-only file system)', async () => {
    const f = fixture();
    const varTmp = join('/var/tmp', `crystal-sbx-outside-${process.pid}-${Date.now()}`);
    const hints = { turnOff: 'set "sandbox": "off"', allowNetwork: 'allow hosts' };
    const result = await run(f, `echo pwned > ${varTmp}`);
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/Read-only file system/);
    expect(existsSync(varTmp)).toBe(false);
    expect(explainRefusal(result.output, policyOf(f), hints).join('\n')).toContain(
      '[sandbox] writes outside the workspace are blocked',
    );
    // A sibling folder under the host's /tmp is not even there: the sandbox's /tmp is its own.
    const sibling = await run(f, `echo pwned > ${join(f.outside, 'x')}`);
    expect(sibling.code).not.toBe(0);
    expect(existsSync(join(f.outside, 'x'))).toBe(false);
    expect(explainRefusal(sibling.output, policyOf(f), hints).join('\n')).toContain(
      '[sandbox] writes outside the workspace are blocked',
    );
  });

  it('SBX-1 /tmp is private: writes there never reach the host /tmp', async () => {
    const f = fixture();
    const name = `crystal-sbx-private-${process.pid}-${Date.now()}`;
    const result = await run(f, `echo x > /tmp/${name} && cat /tmp/${name}`);
    expect(result).toEqual({ code: 0, output: 'x\n' });
    expect(existsSync(join('/tmp', name))).toBe(false);
  });

  it('SBX-1 the private /tmp is capped where bwrap can size a tmpfs (it lives in memory)', async () => {
    const f = fixture();
    const found = await detectSandbox();
    expect(found.available && found.tmpfsSize).toBe(true);
    const wrapped = wrapCommand({
      argv: ['/bin/sh', '-c', 'head -c 3000000 /dev/zero > /tmp/big'],
      cwd: f.workspace,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      policy: policyOf(f),
      bwrap,
      tempBytes: 1024 * 1024,
    });
    const output = execFileSync('sh', ['-c', '"$@" 2>&1; echo "exit $?"', 'sh', wrapped.file, ...wrapped.args]).toString();
    expect(output).toMatch(/No space left on device\nexit 1\n$/);
    expect(explainRefusal(output, policyOf(f), { turnOff: 'off', allowNetwork: 'allow' }).join('\n')).toContain(
      '[sandbox] the private /tmp lives in memory and is capped',
    );
  });

  it('SBX-1 ~/.ssh/id_rsa and ~/.netrc are unreadable inside the sandbox', async () => {
    const f = fixture();
    writeFileSync(join(f.userHome, 'notes.txt'), 'visible\n');
    const result = await run(f, 'cat ~/notes.txt; cat ~/.ssh/id_rsa; cat ~/.netrc; ls -A ~/.ssh; exit 1');
    expect(result.output).toContain('visible\n');
    expect(result.output).not.toContain('PRIVATE KEY MATERIAL');
    expect(result.output).not.toContain('hunter2');
    expect(result.output).toMatch(/id_rsa: No such file or directory/);
    expect(result.output).toMatch(/\.netrc: Permission denied/);
    const hints = { turnOff: 'off', allowNetwork: 'allow' };
    expect(explainRefusal(result.output, policyOf(f), hints).join('\n')).toMatch(
      /\[sandbox\] .*\.ssh.* hidden inside the sandbox/,
    );
    // The host's file is untouched.
    expect(readFileSync(join(f.userHome, '.ssh', 'id_rsa'), 'utf8')).toBe('PRIVATE KEY MATERIAL\n');
  });

  it('SBX-1 a hidden folder reached through a symlink stays hidden', async () => {
    const f = fixture();
    const real = join(f.root, 'real-aws');
    mkdirSync(real);
    writeFileSync(join(real, 'credentials'), 'aws_secret_access_key=abc\n');
    const { symlinkSync } = await import('node:fs');
    symlinkSync(real, join(f.userHome, '.aws'));
    const result = await run(f, `cat ~/.aws/credentials; cat ${join(real, 'credentials')}; exit 0`);
    expect(result.output).not.toContain('aws_secret_access_key');
  });

  it('SBX-1 .git/hooks and .git/config stay read-only inside a writable workspace', async () => {
    const f = fixture();
    const result = await run(f, 'echo "#!/bin/sh" > .git/hooks/pre-commit; echo "[x]" >> .git/config; echo ok > .git/other');
    expect(result.output).toMatch(/pre-commit: Read-only file system/);
    expect(result.output).toMatch(/config: Read-only file system/);
    expect(existsSync(join(f.workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(join(f.workspace, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(readFileSync(join(f.workspace, '.git', 'other'), 'utf8')).toBe('ok\n');
  });

  it('SBX-1 network off: a socket to a real listening server on 127.0.0.1 is refused', async () => {
    const f = fixture();
    const server = createServer((socket) => socket.end('hello from the host\n'));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const script = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;
    const inside = await run(f, script);
    expect(inside.code).not.toBe(0);
    expect(inside.output).toMatch(/Connection refused/);
    expect(inside.output).not.toContain('hello from the host');
    expect(explainRefusal(inside.output, policyOf(f), { turnOff: 'off', allowNetwork: 'allow' }).join('\n')).toContain(
      '[sandbox] the network is off',
    );
    // The same script with the network allowed reaches the server: the refusal was the sandbox's.
    const allowed = await run(f, script, true);
    expect(allowed).toEqual({ code: 0, output: 'hello from the host\n' });
  });

  it('SBX-1 a hidden socket (like /var/run/docker.sock) cannot be connected to; a read-only mount alone would not stop it', async () => {
    const f = fixture();
    const path = join(f.outside, 'daemon.sock');
    const server = createServer((socket) => socket.end('root shell here\n'));
    servers.push(server);
    await new Promise<void>((r) => server.listen(path, r));
    const client = `node -e "require('net').connect('${path}').on('data', (d) => process.stdout.write(d)).on('error', (e) => { console.log(e.code); process.exit(1); })"`;
    const policy = { ...policyOf(f), readable: [f.outside] };
    const exposed = await runWith(f, client, policy);
    expect(exposed.output).toBe('root shell here\n');
    const hidden = await runWith(f, client, { ...policy, hidden: [...policy.hidden, path] });
    expect(hidden.code).not.toBe(0);
    expect(hidden.output).not.toContain('root shell');
  });

  it('SBX-1 the sandboxed command has no capabilities and its own PID space', async () => {
    const f = fixture();
    const result = await run(f, 'grep CapEff /proc/self/status; echo pid=$$');
    expect(result.output).toMatch(/CapEff:\s+0+\n/);
    // bwrap's own init is PID 1; the shell is 2.
    expect(result.output).toMatch(/pid=2\n/);
  });
});

describe('SBX-1 the agent killed with kill -9', () => {
  it('SBX-1 a sandboxed command dies with the agent (--die-with-parent), where a plain detached group would live on', async () => {
    const f = fixture();
    const marker = `5${process.pid % 1000}4321`;
    const dist = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      import { spawn } from 'node:child_process';
      const { wrapCommand } = await import(${JSON.stringify(dist)});
      const w = wrapCommand({ argv: ['/bin/sh', '-c', 'sleep ${marker}'], cwd: ${JSON.stringify(f.workspace)}, env: process.env,
        policy: { writable: [${JSON.stringify(f.workspace)}], hidden: [], network: false }, bwrap: ${JSON.stringify(bwrap)} });
      spawn(w.file, [...w.args], { detached: true, stdio: 'ignore' });
      setInterval(() => {}, 1000);`;
    const agent = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    for (let i = 0; i < 200 && sleepers(marker).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(sleepers(marker).length).toBe(1);
    agent.kill('SIGKILL');
    for (let i = 0; i < 200 && sleepers(marker).length > 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(sleepers(marker)).toEqual([]);
  });
});

/** Live host processes running `sleep <marker>`. */
function sleepers(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (cmdline[0] === 'sleep' && cmdline[1] === marker && !/^\d+ \(.*\) Z/.test(stat)) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

describe('SBX-1 network through the filtering proxy', () => {
  it('SBX-1 an allowed host is reached through the proxy (plain HTTP and CONNECT), another gets a [sandbox] 403, a raw socket nothing', async () => {
    const f = fixture();
    const { createServer: createHttpServer } = await import('node:http');
    const web = createHttpServer((_req, res) => res.end('hello through the proxy\n'));
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    const port = (web.address() as { port: number }).port;
    const asked: string[] = [];
    const proxy = await startNetworkProxy({
      decide: async ({ host, port: p }) => {
        asked.push(`${host}:${p}`);
        return host === '127.0.0.1';
      },
      refusal: (host) => `[sandbox] network access to ${host} is not allowed`,
    });
    try {
      const socat = execFileSync('sh', ['-c', 'command -v socat']).toString().trim();
      const policy: SandboxPolicy = { ...policyOf(f), proxy: { socket: proxy.socket, socat } };
      const plain = await runWith(f, `curl -s http://127.0.0.1:${port}/x`, policy);
      expect(plain).toEqual({ code: 0, output: 'hello through the proxy\n' });
      const tunnel = await runWith(f, `curl -s --proxytunnel http://127.0.0.1:${port}/y`, policy);
      expect(tunnel).toEqual({ code: 0, output: 'hello through the proxy\n' });
      const refused = await runWith(f, `curl -s -i http://localhost:${port}/z`, policy);
      expect(refused.output).toMatch(/^HTTP\/1\.1 403 Forbidden/);
      expect(refused.output).toContain('[sandbox] network access to localhost is not allowed');
      const raw = await runWith(f, `exec 3<>/dev/tcp/127.0.0.1/${port}`, policy);
      expect(raw.code).not.toBe(0);
      expect(asked).toEqual([`127.0.0.1:${port}`, `127.0.0.1:${port}`, `localhost:${port}`]);
    } finally {
      proxy.close();
      await new Promise((r) => web.close(r));
    }
  });
});

describe('SBX-2 detection', () => {
  it('SBX-2 no bwrap on PATH: unavailable, with the reason and the fix', async () => {
    const found = await detectSandbox({ env: { PATH: mkdtempSync(join(tmpdir(), 'crystal-empty-path-')) } });
    expect(found).toEqual({
      available: false,
      reason: 'bubblewrap (bwrap) is not installed; install the bubblewrap package to sandbox shell commands',
    });
  });

  it('SBX-2 a bwrap that cannot create namespaces is unavailable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crystal-fake-bwrap-'));
    const fake = join(dir, 'bwrap');
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to creating new namespace" >&2\nexit 1\n');
    chmodSync(fake, 0o755);
    const found = await detectSandbox({ env: { CRYSTAL_BWRAP: fake } });
    expect(found.available).toBe(false);
    expect(found.available === false && found.reason).toContain('No permissions to creating new namespace');
  });

  it('SBX-2 CRYSTAL_BWRAP empty turns the sandbox off; other platforms have none', async () => {
    expect(await detectSandbox({ env: { CRYSTAL_BWRAP: '' } })).toEqual({
      available: false,
      reason: 'CRYSTAL_BWRAP is set to an empty value',
    });
    expect((await detectSandbox({ platform: 'win32' })).available).toBe(false);
    expect((await detectSandbox({ env: { CRYSTAL_BWRAP: bwrap } })).available).toBe(true);
  });
});
