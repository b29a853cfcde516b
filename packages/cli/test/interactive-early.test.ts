/**
 * The terminal ready sooner (issue 22): a new session in a trusted workspace paints its first
 * frame and takes keys before the engine has loaded and the session is open. To hold the
 * session open at a known point, the provider is a local Ollama whose model list (which the
 * start-up asks for, SETUP-3) answers only when the test says so: everything typed before that
 * is typed before the session exists.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeProvider, fakeConfig, runCrystal, type TempHome, tempDir, tempHome } from '@crystal/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { PtySession, type Scenario, scenario, scenarioOf } from './pty-harness.js';

/** A proxy to the fake Ollama that holds every request until `open()`. */
class Gate {
  private held: (() => void)[] = [];
  private opened = false;
  private waiters: (() => void)[] = [];
  heldCount = 0;

  private constructor(
    private readonly server: Server,
    readonly target: FakeProvider,
  ) {}

  static async start(target: FakeProvider): Promise<Gate> {
    const server = createServer();
    const gate = new Gate(server, target);
    server.on('request', (req, res) => gate.onRequest(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return gate;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const forward = (): void => {
      const out = request(`${this.target.url}${(req.url ?? '/').replace(/^\//, '')}`, {
        method: req.method,
        headers: req.headers,
      });
      out.on('response', (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      req.pipe(out);
    };
    if (this.opened) {
      forward();
      return;
    }
    req.pause();
    this.heldCount++;
    this.held.push(() => {
      req.resume();
      forward();
    });
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves once a request is being held (the session's start-up is waiting on it). */
  async holding(): Promise<void> {
    while (this.heldCount === 0) await new Promise<void>((r) => this.waiters.push(r));
  }

  open(): void {
    this.opened = true;
    for (const go of this.held.splice(0)) go();
  }

  async close(): Promise<void> {
    this.open();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

interface Held {
  readonly fake: FakeProvider;
  readonly gate: Gate;
  readonly home: TempHome;
  readonly session: PtySession;
  dispose(): Promise<void>;
}

/** `crystal` on a fake Ollama behind a gate: the session cannot open until `gate.open()`. */
async function held(replies: { text: string }[], args: string[] = []): Promise<Held> {
  const fake = await FakeProvider.start({ wire: 'ollama', replies, whenExhausted: 'error' });
  const gate = await Gate.start(fake);
  const home = tempHome({
    provider: 'ollama',
    model: 'fake-model',
    // Only the base URI: the model is not in the catalog, so start-up asks the server's list.
    providers: { ollama: { baseUri: gate.url } },
    workspaceTrust: false,
  });
  const session = PtySession.start({ home: home.path, cwd: tempDir('crystal-ws-'), args });
  return {
    fake,
    gate,
    home,
    session,
    async dispose() {
      session.kill();
      await session.exited;
      await gate.close();
      await fake.close();
      home.dispose();
    },
  };
}

let current: Held | Scenario | undefined;
afterEach(async () => {
  await current?.dispose();
  current = undefined;
});

describe('the terminal before the engine (issue 22)', () => {
  for (const view of ['inline', 'fullscreen'] as const) {
    it(`TUI-1 TUI-3 CLI-1 (${view}) the first frame shows the workspace and model before the session opens; keys typed then are all kept and Enter sends once`, async () => {
      const h = await held([{ text: 'Early reply.' }], [`--${view}`]);
      current = h;
      const { session, gate, fake } = h;
      await gate.holding();
      const first = await session.waitFor('Type a message');
      // TUI-3: the status of the session that is still opening: mode, approval, model, workspace.
      expect(first).toMatch(/Work │ Default │ ollama\/fake-model │ .*crystal-ws-/);
      // TUIX-9: the first screen says where and with which model, though the session is not open yet.
      expect(first).toMatch(/Working in \S*crystal-ws-\S* with ollama\/fake-model, Work mode\./);
      await session.type('hello early');
      await session.waitFor('Work › hello early');
      session.write('\r');
      await session.type('zebra');
      // The Enter waits for the session, and the keys after it wait behind it, in order.
      const waiting = await session.waitFor('Starting the session');
      expect(waiting).toContain('Work › hello early');
      expect(fake.requests.filter((r) => r.path.endsWith('/api/chat'))).toHaveLength(0);
      gate.open();
      await session.waitFor('Early reply.');
      const screen = await session.waitFor('Work › zebra');
      // The session did not add a second welcome: it chose the model the first frame named.
      expect(session.bufferLines().filter((l) => l.includes('Working in'))).toHaveLength(1);
      expect(screen).toContain('hello early');
      // Sent once, with exactly what was typed before the Enter.
      const chats = fake.requests.filter((r) => r.path.endsWith('/api/chat'));
      expect(chats).toHaveLength(1);
      const users = ((chats[0]?.body as { messages: { role: string; content: string }[] }).messages ?? [])
        .filter((m) => m.role === 'user')
        .map((m) => m.content);
      expect(users).toEqual(['hello early']);
    });
  }

  it('QUEUE-13 (issue 22) Ctrl+C pressed before the session is open keeps its rules: it clears the draft, twice more exits', async () => {
    const h = await held([{ text: 'unused' }]);
    current = h;
    const { session, gate } = h;
    await gate.holding();
    await session.waitFor('Type a message');
    await session.type('a draft');
    await session.waitFor('Work › a draft');
    session.write('\x03');
    await session.waitFor('Starting the session');
    gate.open();
    // At an idle prompt Ctrl+C clears the composer (QUEUE-13), now that the session decided.
    await session.waitFor((s) => s.includes('Type a message') && !s.includes('a draft'));
    session.write('\x03');
    await session.waitFor('Press Ctrl+C again to exit.');
    session.write('\x03');
    const { exitCode } = await session.exited;
    expect(exitCode).toBe(0);
    expect(session.output).toContain('is empty and was not saved');
  });

  it('TUI-1 (issue 22) SIGTERM before the session is open gives the terminal back and exits 143 (128 + 15) through the exit handlers', async () => {
    const h = await held([{ text: 'unused' }], ['--fullscreen']);
    current = h;
    const { session, gate } = h;
    await gate.holding();
    await session.waitFor('Type a message');
    session.proc.kill('SIGTERM');
    const { exitCode } = await session.exited;
    expect(exitCode).toBe(143);
    // The alternate screen was left: the frame is gone from the screen.
    expect(session.output.lastIndexOf('\x1b[?1049l')).toBeGreaterThan(session.output.lastIndexOf('\x1b[?1049h'));
    expect(session.lines().join('\n')).not.toContain('Type a message');
  });

  it('QUEUE-13 (issue 22) Ctrl+C twice while the session is still opening (a server that does not answer) exits 130 and gives the terminal back', async () => {
    const h = await held([{ text: 'unused' }]);
    current = h;
    const { session, gate } = h;
    await gate.holding();
    await session.waitFor('Type a message');
    await session.type('typed');
    await session.waitFor('Work › typed');
    session.write('\x03');
    await session.waitFor('Starting the session');
    session.write('\x03');
    const { exitCode } = await session.exited;
    expect(exitCode).toBe(130);
    // Inline: what the early frame painted is erased.
    expect(session.lines().join('\n')).not.toContain('Working in');
    expect(session.lines().join('\n')).not.toContain('typed');
  });

  it('CLI-8 (issue 22) a corrupt trusted.json paints no frame and names the file, as before', async () => {
    current = await scenario({ replies: [], config: { workspaceTrust: true } });
    current.session.kill();
    await current.session.exited;
    current.home.writeFile('trusted.json', '{ "trusted": [');
    const session = PtySession.start({ home: current.home.path, cwd: current.workspace });
    const { exitCode } = await session.exited;
    expect(exitCode).toBe(1);
    expect(session.output).toMatch(/trusted\.json: is not valid JSON/);
    expect(session.output).not.toContain('\x1b[?2026h');
  });

  it('CONF-5 (issue 22) a config.json the first frame could read but the engine refuses gives the same error as before, with no frame left on screen', async () => {
    const fake = await FakeProvider.start({ replies: [] });
    const home = tempHome(fakeConfig(fake.baseUri, { approval: 'sometimes' }));
    const workspace = tempDir('crystal-ws-');
    const session = PtySession.start({ home: home.path, cwd: workspace });
    current = scenarioOf(fake, home, workspace, session);
    const { exitCode } = await session.exited;
    expect(exitCode).toBe(1);
    // The error `crystal run` gives for the same file, word for word.
    const run = await runCrystal(['run', 'hi'], { home: home.path, cwd: workspace });
    expect(run.code).toBe(1);
    const message = run.stderr.trim();
    expect(message).toMatch(/config\.json:\d+: approval: expected one of/);
    const screen = session.lines().join('\n');
    // Rows wrap at the terminal's width: compared without the line breaks and spaces.
    expect(screen.replace(/\s+/g, '')).toContain(message.replace(/\s+/g, ''));
    // The early frame was taken back before the error was written.
    expect(session.output).toContain('Working in');
    expect(screen).not.toContain('Type a message');
    expect(screen).not.toContain('Working in');
    expect(screen).not.toContain('fake/fake-model');
  });

  it('CONF-5 (issue 22) a config.json that is not valid JSON paints no frame at all and names the file and line', async () => {
    current = await scenario({ replies: [] });
    current.session.kill();
    await current.session.exited;
    current.home.writeFile('config.json', '{ "provider": "fake", \n  "model": }\n');
    const session = PtySession.start({ home: current.home.path, cwd: current.workspace });
    const { exitCode } = await session.exited;
    expect(exitCode).toBe(1);
    expect(session.output).toMatch(/config\.json:2: .*is not valid JSON/);
    expect(session.output).not.toContain('\x1b[?2026h');
  });

  it('CLI-8 (issue 22) an untrusted workspace is asked about before any frame is painted, as before', async () => {
    current = await scenario({ replies: [{ text: 'hi' }], config: { workspaceTrust: true } });
    const { session } = current;
    await session.waitFor('Do you trust the files in');
    expect(session.output).not.toContain('\x1b[?2026h');
    session.write('y\r');
    await session.waitFor('Working in');
    await session.waitFor('Type a message');
  });

  it('SETUP-4 (issue 22) no key for the provider: the early frame is taken back and the connect lines are printed as before', async () => {
    const home = tempHome({ provider: 'openai', model: 'gpt-5.6-sol', workspaceTrust: false });
    const workspace = tempDir('crystal-ws-');
    const fake = await FakeProvider.start({ replies: [] });
    const session = PtySession.start({ home: home.path, cwd: workspace, env: { OPENAI_API_KEY: undefined } });
    current = scenarioOf(fake, home, workspace, session);
    const { exitCode } = await session.exited;
    expect(exitCode).toBe(1);
    const run = await runCrystal(['run', 'hi'], { home: home.path, cwd: workspace, env: { OPENAI_API_KEY: undefined } });
    const screen = session.lines().join('\n');
    expect(run.code).toBe(1);
    const message = run.stderr.trim();
    expect(message).toContain("No API key for provider 'openai'");
    expect(screen.replace(/\s+/g, '')).toContain(message.replace(/\s+/g, ''));
    expect(screen).not.toContain('Type a message');
  });
});
