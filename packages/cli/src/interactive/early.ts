/**
 * The terminal before the engine (issue 22): the first frame painted from what
 * `@crystal/engine/early` could read, raw mode on and every key read into the app, which
 * applies composer edits at once and holds any key that needs the session (Enter, Ctrl+C, Esc,
 * Tab, …) in order until `runTerminal` connects it. Nothing here imports the engine.
 */
import { type StatusView, TerminalApp } from '@crystal/tui';
import { loadHistory } from './prompt-history.js';

export interface EarlyTerminal {
  readonly app: TerminalApp;
  /** A SIGTERM or SIGHUP came before the session was open: it quits once it is. */
  readonly signalled: boolean;
  /** Gives the terminal back without a frame left behind (a start-up error or a question follows). */
  abandon(): void;
  /** Hands keys, resize and signals over to `runTerminal` (which installs its own). */
  release(): void;
}

export interface EarlyOptions {
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  readonly home: string;
  readonly workspace: string;
  readonly view: 'inline' | 'fullscreen';
  readonly status: StatusView;
}

export function paintEarly(options: EarlyOptions): EarlyTerminal {
  const { stdin, stdout } = options;
  const app = new TerminalApp({
    host: {
      write: (data) => void stdout.write(data),
      size: () => ({ cols: stdout.columns || 80, rows: stdout.rows || 24 }),
    },
    status: options.status,
    home: process.env.HOME,
    view: options.view,
    // The lexer costs more than the first frame; the session loads it once it is open.
    deferMarkdown: true,
  });
  app.setHistory(loadHistory(options.home, options.workspace));
  let signalled = false;
  const onData = (data: string): void => app.input(data);
  const onResize = (): void => app.resize();
  const onSignal = (): void => {
    signalled = true;
  };
  const restore = (): void => {
    if (app.isRunning) app.stop();
  };
  const detach = (): void => {
    stdin.off('data', onData);
    stdout.off('resize', onResize);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    process.off('exit', restore);
  };
  process.on('exit', restore);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.on('data', onData);
  stdout.on('resize', onResize);
  app.start();
  stdin.resume();
  let released = false;
  return {
    app,
    get signalled() {
      return signalled;
    },
    abandon() {
      if (released) return;
      released = true;
      detach();
      restore();
      stdin.setRawMode(false);
      stdin.pause();
    },
    release() {
      released = true;
      detach();
    },
  };
}
