import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FakeProvider, fakeConfig, runCrystal, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { PtySession } from './pty-harness.js';

let fake: FakeProvider | undefined;
let home: TempHome | undefined;
let pty: PtySession | undefined;
afterEach(async () => {
  pty?.kill();
  await pty?.exited;
  pty = undefined;
  await fake?.close();
  fake = undefined;
  home?.dispose();
  home = undefined;
});

/** A provider `fake` whose key is not in config.json (login stores it). */
function keylessConfig(baseUri: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    provider: 'fake',
    model: 'fake-model',
    providers: { fake: { protocol: 'openai', baseUri, models: { 'fake-model': { contextWindow: 128000 } } } },
    workspaceTrust: false,
    ...extra,
  };
}

describe('first run (SETUP-4)', () => {
  it('SETUP-4 a first run with no configuration explains how to connect a provider', async () => {
    // No config.json at all for `run`; the interactive entry also gets past its trust question.
    home = tempHome();
    for (const args of [
      ['run', 'hi'],
      ['--workspace', home.path],
    ]) {
      if (args[0] !== 'run') home.writeConfig({ workspaceTrust: false });
      const result = await runCrystal(args, { home: home.path });
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split('\n');
      expect(lines[0]).toContain("No API key for provider 'deepseek'");
      expect(result.stderr).toContain('crystal login deepseek');
      expect(result.stderr).toContain('ollama serve');
      expect(result.stderr).toContain('crystal demo');
      expect(lines.length).toBeLessThanOrEqual(6);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('SETUP-4 on a terminal the first run shows how to connect, before any trust question', async () => {
    home = tempHome();
    pty = PtySession.start({ home: home.path, args: [] });
    const exit = await pty.exited;
    const screen = await pty.waitFor('To connect a provider');
    expect(exit.exitCode).toBe(1);
    expect(screen).toContain('crystal login deepseek');
    expect(screen).not.toMatch(/trust/i);
  });

  it('SETUP-4 a built-in provider takes a partial entry: only baseUri and apiKey for deepseek', async () => {
    fake = await FakeProvider.start({ wire: 'deepseek', replies: [{ text: 'partial ok' }] });
    home = tempHome({ providers: { deepseek: { baseUri: fake.baseUri, apiKey: 'sk-partial' } }, workspaceTrust: false });
    const result = await runCrystal(['run', 'hi'], { home: home.path });
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('partial ok');
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-partial');
    expect((fake.requests[0]?.body as { model: string }).model).toBe('deepseek-flash');
  });
});

describe('crystal login / logout (SETUP-2)', () => {
  it('SETUP-2 login reads the key from stdin, checks it with the models endpoint, stores it 0600; run uses it; logout removes it', async () => {
    fake = await FakeProvider.start({ replies: [{ text: 'logged in' }], requireKey: 'sk-good' });
    home = tempHome(keylessConfig(fake.baseUri));
    const login = await runCrystal(['login', 'fake'], { home: home.path, input: 'sk-good\n' });
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toContain('Stored the key for fake');
    expect(login.stdout).toContain('serves 2 models');
    expect(login.stdout).not.toContain('sk-good');
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/v1/models' });
    const file = join(home.path, 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ fake: { apiKey: 'sk-good' } });
    const run = await runCrystal(['run', 'hi'], { home: home.path });
    expect(run.stdout).toContain('logged in');
    expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer sk-good');
    const logout = await runCrystal(['logout', 'fake'], { home: home.path });
    expect(logout.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({});
    const after = await runCrystal(['run', 'hi'], { home: home.path });
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('crystal login fake');
  });

  it('SETUP-2 a key the provider refuses is not stored', async () => {
    fake = await FakeProvider.start({ requireKey: 'sk-good' });
    home = tempHome(keylessConfig(fake.baseUri));
    const login = await runCrystal(['login', 'fake'], { home: home.path, input: 'sk-wrong\n' });
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/^crystal: fake refused the key .*Nothing was stored\.\n$/);
    expect(existsSync(join(home.path, 'credentials.json'))).toBe(false);
  });

  it('SETUP-2 a Home that cannot be written is one line naming the file, not a stack trace', async () => {
    fake = await FakeProvider.start({ requireKey: 'sk-good' });
    home = tempHome(keylessConfig(fake.baseUri));
    // credentials.json is a folder: the write fails whoever runs the test (root too).
    home.writeFile('credentials.json/keep', '');
    const login = await runCrystal(['login', 'fake'], { home: home.path, input: 'sk-good\n' });
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/^crystal: Cannot write .*credentials\.json \(E[A-Z]+\): .*Nothing was changed\.\n$/);
  });

  it('SETUP-2 keys are never accepted as flags', async () => {
    home = tempHome();
    for (const flag of ['--api-key=sk-x', '--key', '--token']) {
      const result = await runCrystal(['login', 'openai', flag, 'sk-x'], { home: home.path });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('Keys are never accepted as flags');
    }
    expect(existsSync(join(home.path, 'credentials.json'))).toBe(false);
  });

  it('SETUP-2 login on a terminal asks without echo', async () => {
    fake = await FakeProvider.start({ requireKey: 'sk-typed-secret-42' });
    home = tempHome(keylessConfig(fake.baseUri));
    pty = PtySession.start({ home: home.path, args: ['login', 'fake'] });
    await pty.waitFor('API key for fake (input hidden):');
    await pty.type('sk-typed-secret-4X');
    pty.write('\x7f'); // Backspace edits the hidden input
    await pty.type('2');
    pty.write('\r');
    const exit = await pty.exited;
    const screen = await pty.waitFor('Stored the key for fake');
    expect(exit.exitCode).toBe(0);
    expect(pty.output).not.toContain('sk-typed');
    expect(screen).not.toContain('sk-typed');
    expect(JSON.parse(readFileSync(join(home.path, 'credentials.json'), 'utf8'))).toEqual({
      fake: { apiKey: 'sk-typed-secret-42' },
    });
  });
  it('SETUP-2 arrow keys and other escape sequences typed into the hidden key are no part of it', async () => {
    fake = await FakeProvider.start({ requireKey: 'sk-arrow-safe-9' });
    home = tempHome(keylessConfig(fake.baseUri));
    pty = PtySession.start({ home: home.path, args: ['login', 'fake'] });
    await pty.waitFor('API key for fake (input hidden):');
    await pty.type('sk-arrow');
    pty.write('\x1b[D'); // Left
    pty.write('\x1b[1;5C'); // Ctrl+Right
    pty.write('\x1bOA'); // Up (SS3)
    await pty.type('-safe-9');
    pty.write('\r');
    const exit = await pty.exited;
    expect(exit.exitCode).toBe(0);
    expect(JSON.parse(readFileSync(join(home.path, 'credentials.json'), 'utf8'))).toEqual({
      fake: { apiKey: 'sk-arrow-safe-9' },
    });
  });
});

describe('/login in the terminal (SETUP-2)', () => {
  it('SETUP-2 /login asks off the composer without echo, stores the key, and the frame comes back (inline view, twice, keys typed ahead)', async () => {
    const chat = await FakeProvider.start({ replies: [{ text: 'unused' }] });
    fake = await FakeProvider.start({ wire: 'anthropic', requireKey: 'sk-ant-typed-77' });
    try {
      home = tempHome({
        provider: 'fake',
        model: 'fake-model',
        providers: {
          fake: { protocol: 'openai', baseUri: chat.baseUri, apiKey: 'k', models: { 'fake-model': { contextWindow: 128000 } } },
          other: { protocol: 'anthropic', baseUri: fake.url, models: { 'fake-large': { contextWindow: 1000000 } } },
        },
        workspaceTrust: false,
      });
      // The inline view (the default): the earlier prompts stay on screen, so each wait counts them.
      pty = PtySession.start({ home: home.path });
      const prompts = (n: number) => (screen: string) => screen.split('API key for other (input hidden').length - 1 === n;
      await pty.waitFor('Type a message');
      await pty.type('/login other');
      pty.write('\r');
      await pty.waitFor(prompts(1));
      await pty.type('sk-ant-typed-77');
      pty.write('\r');
      const screen = await pty.waitFor('Stored the key for other');
      expect(screen).toMatch(/^Work › Type a message/m);
      expect(JSON.parse(readFileSync(join(home.path, 'credentials.json'), 'utf8'))).toEqual({
        other: { apiKey: 'sk-ant-typed-77' },
      });
      // A second /login whose Enter shares one read with the key typed right after it: the key
      // goes to the hidden prompt (no newline in the composer, no key on screen), is refused,
      // nothing is stored, and the frame says so.
      await pty.type('/login other');
      await pty.waitFor(/^Work › \/login other$/m);
      pty.write('\rsk-wrong\r');
      const refused = await pty.waitFor('refused the key');
      expect(refused).not.toContain('sk-wrong');
      expect(refused).toMatch(/^Work › Type a message/m);
      expect(JSON.parse(readFileSync(join(home.path, 'credentials.json'), 'utf8')).other.apiKey).toBe('sk-ant-typed-77');
      // A third: what is typed after the key's Enter in the same read goes back to the composer.
      await pty.type('/login other');
      pty.write('\r');
      await pty.waitFor(prompts(3));
      pty.write('sk-ant-typed-77\rnext words');
      await pty.waitFor(/^Work › next words$/m);
      await pty.type(' typed');
      await pty.waitFor(/^Work › next words typed$/m);
      expect(pty.output).not.toContain('sk-ant-typed');
      expect(pty.output).not.toContain('sk-wrong');
      expect(readFileSync(join(home.path, 'prompt-history.jsonl'), 'utf8')).not.toContain('sk-');
    } finally {
      await chat.close();
    }
  });
});

describe('/login during a turn (SETUP-2)', () => {
  it('SETUP-2 /login while a turn streams is refused with a notice; the answer keeps streaming on screen to its end', async () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    fake = await FakeProvider.start({ replies: [{ text: `${words} THE-END`, delayMs: 40 }] });
    home = tempHome(fakeConfig(fake.baseUri));
    pty = PtySession.start({ home: home.path });
    await pty.waitFor('Type a message');
    await pty.type('go');
    pty.write('\r');
    await pty.waitFor('word3');
    await pty.type('/login other');
    pty.write('\r');
    await pty.waitFor('/login waits for an idle prompt');
    const screen = await pty.waitFor('THE-END');
    expect(pty.output).not.toContain('API key for');
    expect(screen).toContain('word59');
  });
});

describe('crystal models (SETUP-3)', () => {
  it('SETUP-3 lists served models over HTTP, marks the catalog, --json, and adds one to config.json keeping its format', async () => {
    fake = await FakeProvider.start({ wire: 'anthropic', replies: [{ text: 'from the large model' }] });
    const text = `{
  "provider": "fake",    "model": "fake-model",
  "workspaceTrust": false,

  "providers": {"fake": {"protocol": "anthropic", "baseUri": "${fake.url}", "apiKey": "k",
     "models": {"fake-model": {"contextWindow": 128000}}}}
}
`;
    home = tempHome(text);
    const list = await runCrystal(['models'], { home: home.path });
    expect(list.stderr).toBe('');
    expect(list.stdout).toMatch(/^\* fake-model\s+128000 tokens$/m);
    expect(list.stdout).toMatch(/^ {2}fake-large\s+1000000 tokens$/m);
    expect(list.stdout).toContain('crystal models add fake fake-large');
    const json = JSON.parse((await runCrystal(['models', 'fake', '--json'], { home: home.path })).stdout);
    expect(json.served.map((m: { id: string; inCatalog: boolean }) => [m.id, m.inCatalog])).toEqual([
      ['fake-model', true],
      ['fake-large', false],
    ]);
    const add = await runCrystal(['models', 'add', 'fake', 'fake-large'], { home: home.path });
    expect(add.code).toBe(0);
    expect(add.stdout).toContain('contextWindow 1000000, maxTokens 65536');
    const after = readFileSync(join(home.path, 'config.json'), 'utf8');
    // Everything but the new key is byte for byte what the user wrote.
    expect(after.startsWith(text.slice(0, text.indexOf('{"fake-model"')))).toBe(true);
    expect(after.endsWith('\n}\n')).toBe(true);
    expect(JSON.parse(after).providers.fake.models['fake-large']).toEqual({ contextWindow: 1000000, maxTokens: 65536 });
    const run = await runCrystal(['run', '--model', 'fake-large', 'hi'], { home: home.path });
    expect(run.stdout).toContain('from the large model');
    expect((fake.requests.at(-1)?.body as { model: string }).model).toBe('fake-large');
    const unknown = await runCrystal(['models', 'add', 'fake', 'nope'], { home: home.path });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("fake does not serve 'nope'. It serves: fake-model, fake-large");
  });

  it('SETUP-3 Ollama works with no key and no model entry: the served model and its real context window', async () => {
    fake = await FakeProvider.start({
      wire: 'ollama',
      models: [{ id: 'llama3.2:3b', contextWindow: 131072 }],
      replies: [{ text: 'local answer' }],
    });
    home = tempHome({ provider: 'ollama', providers: { ollama: { baseUri: fake.url } }, workspaceTrust: false });
    const list = await runCrystal(['models', 'ollama'], { home: home.path });
    expect(list.stdout).toMatch(/llama3\.2:3b\s+131072 tokens/);
    const run = await runCrystal(['run', 'hi'], { home: home.path });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('local answer');
    const chat = fake.requests.find((r) => r.path === '/api/chat');
    expect(chat?.body).toMatchObject({ model: 'llama3.2:3b', options: { num_ctx: 131072 } });
    expect(chat?.headers.authorization).toBeUndefined();
  });

  it('SETUP-3 crystal models goes through HTTP_PROXY like the chat requests', async () => {
    const { startTestProxy } = await import('@crystal/testkit');
    const proxy = await startTestProxy();
    try {
      fake = await FakeProvider.start();
      home = tempHome({
        provider: 'fake',
        providers: {
          fake: { protocol: 'openai', baseUri: `http://provider.test:${fake.port}/v1/`, apiKey: 'k', models: {} },
        },
      });
      const list = await runCrystal(['models'], { home: home.path, env: { HTTP_PROXY: proxy.url } });
      expect(list.stderr).toBe('');
      expect(list.stdout).toMatch(/fake-large/);
      expect(proxy.seen).toEqual([`http://provider.test:${fake.port}/v1/models`]);
    } finally {
      await proxy.close();
    }
  });

  it('SETUP-3 a provider that is down is one line naming the fix', async () => {
    const port = await freePort();
    home = tempHome({ providers: { ollama: { baseUri: `http://127.0.0.1:${port}/` } } });
    const result = await runCrystal(['models', 'ollama'], { home: home.path });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^crystal: Could not list the models of ollama: .* Is Ollama running\? Start it with: ollama serve\n$/,
    );
  });
});

describe('crystal demo', () => {
  it('SETUP-4 demo --run: read, edit, a streamed Markdown table, then the server stops and the temp folders go', async () => {
    const tmp = tempDir('crystal-demo-tmp-');
    const result = await runCrystal(['demo', '--run'], { env: { TMPDIR: tmp } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('[read] {"path":"greet.js"}');
    expect(result.stdout).toContain('Edited greet.js.');
    expect(result.stdout).toContain('| Lines changed | | 1 |');
    expect(result.stderr).toMatch(/fake provider on http:\/\/127\.0\.0\.1:\d+\//);
    expect(result.stderr).toContain('the fake provider is stopped and its temporary folders are removed');
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('SETUP-4 demo --run stopped by SIGTERM still stops the server and removes its folders', async () => {
    const tmp = tempDir('crystal-demo-tmp-');
    const { spawn } = await import('node:child_process');
    const { crystalBin, testCompileCache } = await import('@crystal/testkit');
    const child = spawn(process.execPath, [crystalBin, 'demo', '--run'], {
      // The bin's code cache is kept apart (by default it would go to HOME/.cache).
      env: { PATH: process.env.PATH ?? '', HOME: tmp, TMPDIR: tmp, CRYSTAL_COMPILE_CACHE: testCompileCache() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // Stop it once the first tool ran (mid-session).
    await new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        if (stdout.includes('[read]')) resolve();
      });
    });
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect([0, 5]).toContain(code);
    expect(stderr).toContain('the fake provider is stopped and its temporary folders are removed');
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('SETUP-4 demo in the terminal: the edit asks for approval, the answer streams as a table, and it cleans up', async () => {
    const tmp = tempDir('crystal-demo-tmp-');
    pty = PtySession.start({ home: tempDir(), args: ['demo'], env: { TMPDIR: tmp, CRYSTAL_HOME: undefined } });
    // The demo sends its first prompt itself; the read passes, the edit asks.
    const card = await pty.waitFor('Approve Edit?');
    expect(card).toContain('Make greet() use a template literal');
    expect(card).toContain('greet.js');
    pty.write('y');
    const screen = await pty.waitFor('Lines changed');
    expect(screen).toMatch(/Before\s+│?\s*After/);
    await pty.waitIdle();
    await pty.type('/quit');
    pty.write('\r');
    const exit = await pty.exited;
    expect(exit.exitCode).toBe(0);
    expect(pty.output).toContain('temporary folders are removed');
    expect(readdirSync(tmp)).toEqual([]);
  });
});

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
