/**
 * The full-screen session on a terminal (CLI-1, TUI-1): wires stdin/stdout, the controller and
 * the display together, and restores the terminal on every way out.
 */
import { type Config, type SessionController, WorkspaceFileIndex } from '@crystal/engine';
import { TerminalApp } from '@crystal/tui';
import type { ClipboardReader } from './clipboard.js';
import type { EarlyTerminal } from './early.js';
import { pickerCommands, syncMcpPrompts } from './completions.js';
import { controllerIntents } from './intents.js';
import { loginInTerminal } from './login.js';
import { appendHistory, loadHistory } from './prompt-history.js';
import { openSessionPicker, pickerFor } from './pickers.js';
import { RewindView } from './rewind.js';
import { SessionView } from './session-view.js';
import { welcome } from './welcome.js';

export interface TerminalOptions {
  readonly controller: SessionController;
  readonly config: Config;
  readonly home: string;
  readonly replay: boolean;
  readonly view?: 'inline' | 'fullscreen';
  /** `crystal -r` without an id: the session picker opens first (TUIX-11). */
  readonly resumePicker?: boolean;
  readonly readClipboard: ClipboardReader;
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  readonly firstPrompt?: string | undefined;
  /** The frame painted before the engine loaded (issue 22): connected here instead of made. */
  readonly early?: EarlyTerminal | undefined;
}

/** Runs until the session quits; resolves the id of the session that was open last. */
export function runTerminal(options: TerminalOptions): Promise<string> {
  const { controller, stdin, stdout, home } = options;
  const workspace = controller.session.workspace;
  const commands = pickerCommands(home, () => controller.session.workspace, controller.commands());
  let login: ((argument: string) => void) | undefined;
  const files = new WorkspaceFileIndex(() => controller.session.workspace);
  const early = options.early;
  const intents = controllerIntents({
    controller,
    readClipboard: options.readClipboard,
    remember: (text) => void appendHistory(home, workspace, text),
    login: (argument) => login?.(argument),
    completePath: (query) => files.complete(query).catch(() => []),
    notice: (text) => app.notice(text, 'error'),
    pickers: (text) => pickerFor(text, controller, options.config, (picker) => app.openList(picker)),
    rewind: () => rewind.open(),
  });
  const app: TerminalApp =
    early?.app ??
    new TerminalApp({
      host: {
        write: (data) => void stdout.write(data),
        size: () => ({ cols: stdout.columns || 80, rows: stdout.rows || 24 }),
      },
      intents,
      status: {
        mode: controller.mode,
        approval: controller.approvalMode,
        model: `${controller.session.provider}/${controller.session.model}`,
        workspace,
        inputTokens: 0,
        outputTokens: 0,
        queued: 0,
      },
      commands,
      home: process.env.HOME,
      view: options.view ?? 'fullscreen',
    });
  const view = new SessionView(app, controller, options.config);
  const rewind = new RewindView(app, controller);
  app.setStatus(view.status());
  if (!early) app.setHistory(loadHistory(home, workspace));
  if (options.replay) view.replayRecent();
  else {
    // The early frame showed the welcome already when it knew the model the session chose.
    const model = `${controller.session.provider}/${controller.session.model}`;
    if (early?.welcomed !== model) app.transcript.push(welcome(workspace, model, controller.mode, process.env.HOME));
  }
  if (controller.queue.length > 0) app.setQueue(controller.queue.map((i) => ({ kind: i.kind, text: i.text })));
  // A display defect must never break the engine that published the event.
  const unsubscribe = controller.on((event) => {
    if (event.type === 'mcp-changed') syncMcpPrompts(commands, controller.mcp?.manager?.prompts() ?? []);
    try {
      if (!rewind.onEvent(event)) view.onEvent(event);
    } catch (error) {
      app.notice(`Display error on ${event.type}: ${(error as Error).message}`, 'error');
    }
  });

  return new Promise<string>((resolve) => {
    const onData = (data: string): void => app.input(data);
    const onResize = (): void => app.resize();
    const onSignal = (): void => void controller.quit();
    const restore = (): void => {
      if (app.isRunning) app.stop();
    };
    // A crash leaves the alternate screen first, so its message stays readable.
    const onCrash = (error: unknown): void => {
      restore();
      if (stdin.isTTY) stdin.setRawMode(false);
      process.stderr.write(
        `crystal: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    };
    const finish = (sessionId: string): void => {
      unsubscribe();
      stdin.off('data', onData);
      stdout.off('resize', onResize);
      process.off('SIGTERM', onSignal);
      process.off('SIGHUP', onSignal);
      process.off('exit', restore);
      process.off('uncaughtException', onCrash);
      restore();
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
      resolve(sessionId);
    };
    view.onQuit = finish;
    login = (argument) =>
      void loginInTerminal(
        {
          app,
          stdin,
          stdout,
          home,
          config: options.config,
          currentProvider: () => controller.session.provider,
          detachKeys: () => stdin.off('data', onData),
          attachKeys: () => stdin.on('data', onData),
        },
        argument,
      );
    process.on('exit', restore);
    process.on('uncaughtException', onCrash);
    process.on('SIGTERM', onSignal);
    process.on('SIGHUP', onSignal);
    // The early frame's listeners give way to these; no key is lost between (this runs at once).
    early?.release();
    if (stdin.isTTY) stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    stdin.on('data', onData);
    stdout.on('resize', onResize);
    // The keys typed before the session was open are handled now, in order (Enter sends once).
    if (early) app.connect(intents, commands);
    else app.start();
    stdin.resume();
    if (early) setImmediate(() => void app.loadMarkdown());
    // MCP-5: servers start once the first frame is on screen, so they never delay it.
    setImmediate(() => controller.startMcp());
    if (options.firstPrompt) controller.submit(options.firstPrompt);
    if (options.resumePicker) void openSessionPicker(controller, (picker) => app.openList(picker));
  });
}
