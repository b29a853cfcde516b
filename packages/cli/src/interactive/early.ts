/**
 * The terminal before the engine (issue 22): the first frame painted from what
 * `@crystal/engine/early` could read, raw mode on and every key read into the app, which
 * applies composer edits at once and holds any key that needs the session (Enter, Ctrl+C, Esc,
 * Tab, …) in order until `runTerminal` connects it. Nothing here imports the engine.
 */
import { constants } from 'node:os';
import { type StatusView, TerminalApp } from '@crystal/tui';
import { loadHistory } from './prompt-history.js';
import { welcome } from './welcome.js';

export interface EarlyTerminal {
  readonly app: TerminalApp;
  /** The model the welcome panel named (`provider/model`), when the early frame showed it. */
  readonly welcomed: string | undefined;
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
  /** `provider/model` when flags or config name both (the welcome panel then comes at once). */
  readonly model: string | undefined;
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
  if (options.model !== undefined)
    app.transcript.push(welcome(options.workspace, options.model, options.status.mode, process.env.HOME));
  // Ctrl+C keeps its rules once the session is open; pressed twice before, it is the way out of
  // a start-up that hangs (a server that does not answer), as it was before raw mode came first.
  let ctrlC = 0;
  const onData = (data: string): void => {
    ctrlC += data.split('\x03').length - 1;
    if (ctrlC >= 2) {
      abandon();
      process.exit(130);
    }
    app.input(data);
  };
  const onResize = (): void => app.resize();
  // Before the session is open there is nothing to save: the terminal is given back and the
  // process exits as a shell reports a signal (128 + its number), through the exit handlers
  // (the session lock's, the code cache's).
  const onSignal = (signal: NodeJS.Signals): void => {
    abandon();
    process.exit(128 + (constants.signals[signal] ?? 0));
  };
  const restore = (): void => {
    if (app.isRunning) app.stop();
  };
  // An error before the session opened: nothing painted stays (the error is written after it).
  const discard = (): void => {
    if (app.isRunning) app.abandon();
  };
  const detach = (): void => {
    stdin.off('data', onData);
    stdout.off('resize', onResize);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    process.off('SIGINT', onSignal);
    process.off('exit', restore);
  };
  process.on('exit', restore);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  process.on('SIGINT', onSignal);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.on('data', onData);
  stdout.on('resize', onResize);
  app.start();
  stdin.resume();
  let released = false;
  const abandon = (): void => {
    if (released) return;
    released = true;
    detach();
    discard();
    stdin.setRawMode(false);
    stdin.pause();
  };
  return {
    app,
    welcomed: options.model,
    abandon,
    release() {
      released = true;
      detach();
    },
  };
}
