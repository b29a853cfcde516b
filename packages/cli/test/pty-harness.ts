/**
 * The real `crystal` binary in a pseudo-terminal (node-pty), its output read through a real
 * terminal emulator (@xterm/headless): keys in, screen out.
 */
import {
  crystalBin,
  FakeProvider,
  type FakeReply,
  fakeConfig,
  type TempHome,
  tempDir,
  tempHome,
  testCompileCache,
} from '@crystal/testkit';
import xterm from '@xterm/headless';
import * as pty from 'node-pty';

const { Terminal } = xterm;

export interface PtyStartOptions {
  readonly args?: readonly string[];
  readonly home: string;
  readonly cwd?: string;
  readonly cols?: number;
  readonly rows?: number;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Another `crystal` bin (an installed copy); the checkout's by default. */
  readonly bin?: string;
}

/** A progress-row caption with its elapsed time (TUI-4). */
export const PROGRESS =
  /(Waiting For Model|Thinking|Writing|Running Command|Awaiting Approval|Waiting For Answer|Compacting|Retrying In \d+s \(Attempt \d+\)) · \d/;

export class PtySession {
  readonly term: InstanceType<typeof Terminal>;
  readonly exited: Promise<{ exitCode: number; signal?: number }>;
  /** Everything the program wrote, raw. */
  output = '';
  private waiters = new Set<() => void>();
  private pending = 0;
  private done = false;
  private processEnded = false;
  private midFrame = false;

  private constructor(
    readonly proc: pty.IPty,
    cols: number,
    rows: number,
  ) {
    this.term = new Terminal({ cols, rows, allowProposedApi: true, scrollback: 1000 });
    proc.onData((data) => {
      this.output += data;
      this.pending++;
      // A frame is one DEC 2026 synchronized update; the screen is judged only between frames,
      // never on half a frame that a pty read cut in two.
      const open = data.lastIndexOf('\x1b[?2026h');
      const close = data.lastIndexOf('\x1b[?2026l');
      const inFrame = open === -1 && close === -1 ? undefined : open > close;
      this.term.write(data, () => {
        this.pending--;
        if (inFrame !== undefined) this.midFrame = inFrame;
        if (this.midFrame && !this.done) return;
        for (const wake of [...this.waiters]) wake();
      });
    });
    this.exited = new Promise((resolve) => {
      proc.onExit((e) => {
        this.processEnded = true;
        // The screen is judged after the last output is parsed: xterm parses writes later, in
        // order, so an empty write's callback runs after every earlier one (a test reading the
        // screen at exit read it half-parsed under load).
        setImmediate(() =>
          this.term.write('', () => {
            this.done = true;
            resolve(e);
            for (const wake of [...this.waiters]) wake();
          }),
        );
      });
    });
  }

  static start(options: PtyStartOptions): PtySession {
    const cols = options.cols ?? 120;
    const rows = options.rows ?? 40;
    const env: Record<string, string> = {};
    for (const key of ['PATH', 'LANG', 'SYSTEMROOT']) if (process.env[key]) env[key] = process.env[key] as string;
    env.TERM = 'xterm-256color';
    env.HOME = options.home;
    env.CRYSTAL_HOME = options.home;
    env.CRYSTAL_COMPILE_CACHE = testCompileCache();
    for (const [key, value] of Object.entries(options.env ?? {})) {
      if (value === undefined) delete env[key];
      else env[key] = value;
    }
    const proc = pty.spawn(process.execPath, [options.bin ?? crystalBin, ...(options.args ?? [])], {
      name: 'xterm-256color',
      cols,
      rows,
      cwd: options.cwd ?? tempDir('crystal-ws-'),
      env,
    });
    return new PtySession(proc, cols, rows);
  }

  get isDone(): boolean {
    return this.done;
  }

  write(data: string): void {
    this.proc.write(data);
  }

  /** Types text one key at a time (each key its own read, as a person types). */
  async type(text: string): Promise<void> {
    for (const ch of text) {
      this.proc.write(ch);
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  resize(cols: number, rows: number): void {
    this.proc.resize(cols, rows);
    this.term.resize(cols, rows);
  }

  /** The visible screen, one string per row (right-trimmed). */
  lines(): string[] {
    const buffer = this.term.buffer.active;
    const out: string[] = [];
    for (let i = 0; i < this.term.rows; i++) out.push(buffer.getLine(buffer.viewportY + i)?.translateToString(true) ?? '');
    return out;
  }

  /** Every row the emulator holds, scroll-back first (right-trimmed). */
  bufferLines(): string[] {
    const buffer = this.term.buffer.active;
    const out: string[] = [];
    for (let i = 0; i < buffer.length; i++) out.push(buffer.getLine(i)?.translateToString(true) ?? '');
    return out;
  }

  /** How many rows have scrolled off the top of the screen into the scroll-back. */
  get scrolledOff(): number {
    return this.term.buffer.active.baseY;
  }

  screen(): string {
    return this.lines().join('\n');
  }

  /** Whether the cell at (row, col) of the screen is bold. */
  isBold(row: number, col: number): boolean {
    const buffer = this.term.buffer.active;
    return (
      (buffer
        .getLine(buffer.viewportY + row)
        ?.getCell(col)
        ?.isBold() ?? 0) !== 0
    );
  }

  /** Finds the first screen position of `text`. */
  find(text: string): { row: number; col: number } | undefined {
    const lines = this.lines();
    for (const [row, line] of lines.entries()) {
      const col = line.indexOf(text);
      if (col !== -1) return { row, col };
    }
    return undefined;
  }

  /** Resolves with the screen once `match` holds; rejects with the screen after `timeoutMs`. */
  waitFor(match: string | RegExp | ((screen: string) => boolean), timeoutMs = 15_000): Promise<string> {
    const test = (screen: string): boolean =>
      typeof match === 'string' ? screen.includes(match) : match instanceof RegExp ? match.test(screen) : match(screen);
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const screen = this.screen();
        if (test(screen)) {
          cleanup();
          resolve(screen);
        } else if (this.done && this.pending === 0) {
          cleanup();
          reject(new Error(`crystal exited before the screen matched ${String(match)}.\n--- screen ---\n${screen}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`Timed out waiting for ${String(match)}.\n--- screen ---\n${this.screen()}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Waits until `match` no longer holds. */
  waitForGone(match: string | RegExp, timeoutMs = 15_000): Promise<string> {
    return this.waitFor((s) => (typeof match === 'string' ? !s.includes(match) : !match.test(s)), timeoutMs);
  }

  /** Waits until the progress row is gone: the session is idle (TUI-4: omitted when idle). */
  waitIdle(timeoutMs = 15_000): Promise<string> {
    return this.waitFor((screen) => !PROGRESS.test(screen), timeoutMs);
  }

  kill(): void {
    if (!this.processEnded) this.proc.kill();
  }
}

/** A fake provider, a temporary Home and workspace, and `crystal` running on them in a pty. */
export interface Scenario {
  readonly fake: FakeProvider;
  readonly home: TempHome;
  readonly workspace: string;
  readonly session: PtySession;
  dispose(): Promise<void>;
}

export interface ScenarioOptions {
  readonly replies: readonly FakeReply[];
  readonly args?: readonly string[];
  readonly config?: Record<string, unknown>;
  readonly modelExtra?: Record<string, unknown>;
  readonly cols?: number;
  readonly rows?: number;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly workspace?: string;
  readonly home?: TempHome;
}

export async function scenario(options: ScenarioOptions): Promise<Scenario> {
  const fake = await FakeProvider.start({ replies: options.replies, whenExhausted: 'error' });
  const config = fakeConfig(fake.baseUri, options.config ?? {});
  if (options.modelExtra) {
    const providers = config.providers as { fake: { models: Record<string, Record<string, unknown>> } };
    providers.fake.models['fake-model'] = { ...providers.fake.models['fake-model'], ...options.modelExtra };
  }
  const home = options.home ?? tempHome();
  home.writeConfig(config);
  const workspace = options.workspace ?? tempDir('crystal-ws-');
  const session = PtySession.start({
    home: home.path,
    cwd: workspace,
    args: options.args,
    cols: options.cols,
    rows: options.rows,
    env: options.env,
  });
  return scenarioOf(fake, home, workspace, session);
}

/** A scenario of parts made by hand (a Home the fake config does not fit); dispose ends them all. */
export function scenarioOf(fake: FakeProvider, home: TempHome, workspace: string, session: PtySession): Scenario {
  return {
    fake,
    home,
    workspace,
    session,
    async dispose() {
      session.kill();
      await session.exited;
      await fake.close();
      home.dispose();
    },
  };
}

/** The text of the user message of every request the fake provider saw. */
export function userTexts(fake: FakeProvider): string[][] {
  return fake.requests.map((r) =>
    ((r.body as { messages?: { role: string; content: unknown }[] })?.messages ?? [])
      .filter((m) => m.role === 'user')
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))),
  );
}
