/**
 * `crystal` with no command: the interactive session in the current folder (CLI-1). Session
 * flags as in `crystal run`, plus `-r/--resume ID` and `--continue`. A missing or empty
 * session exits non-zero before the terminal UI starts. Output that is not a terminal falls
 * back to sequential plain text (TUI-7).
 */
import { resolve } from 'node:path';
import {
  assertConnectable,
  loadConfig,
  resolveHome,
  SessionController,
  UsageError,
  withServedOllamaModels,
} from '@crystal/engine';
import { type ClipboardReader, defaultClipboardReader } from './clipboard.js';
import { parseInteractiveOptions } from './options.js';
import { ensureTrusted } from '../trust-prompt.js';
import { runPlain } from './plain.js';
import { runTerminal } from './terminal.js';

/** TUIX-8: the view when neither `--fullscreen`/`--inline` nor `terminalView` says. */
export const DEFAULT_VIEW: 'inline' | 'fullscreen' = 'inline';

export interface InteractiveDeps {
  /** The OS clipboard image reader (Ctrl+V); the default says none is available. */
  readonly readClipboardImage?: ClipboardReader;
  readonly stdin?: NodeJS.ReadStream;
  readonly stdout?: NodeJS.WriteStream;
  /** Sent as the first message once the terminal is up (`crystal demo`). */
  readonly firstPrompt?: string;
}

export async function interactiveCommand(argv: readonly string[], deps: InteractiveDeps = {}): Promise<number> {
  const options = parseInteractiveOptions(argv);
  const home = resolveHome(options.home);
  const workspace = resolve(options.workspace ?? process.cwd());
  // Local Ollama: the models it serves join the catalog, with their context windows (SETUP-3).
  const config = await withServedOllamaModels(home, loadConfig(home), { provider: options.provider, model: options.model });
  // SETUP-4: no key means a few lines on connecting a provider, before any trust question.
  if (options.resume === undefined && !options.continue) assertConnectable(home, config, options);
  await ensureTrusted(home, workspace, config, {
    stdin: deps.stdin ?? process.stdin,
    stdout: deps.stdout ?? process.stdout,
  });
  const terminal = Boolean((deps.stdout ?? process.stdout).isTTY && (deps.stdin ?? process.stdin).isTTY);
  const controller = await SessionController.open({
    // MCP-5: the terminal starts MCP servers after its first frame.
    deferMcpStart: terminal,
    home,
    workspace,
    config,
    provider: options.provider,
    model: options.model,
    thinking: options.thinking,
    limits: options.limits,
    approval: options.approval,
    approvalModel: options.approvalModel,
    plan: options.plan,
    bashTimeoutSeconds: options.bashTimeoutSeconds,
    skills: options.skills,
    resume: options.resume,
    continueLatest: options.continue,
    // A resume shows the archive's end; the rest is read only when asked for (issue 22 item 5).
    deferArchive: true,
    surface: 'terminal',
  });
  const resuming = options.resume !== undefined || options.continue;
  if (resuming && controller.session.historyLength === 0) {
    await controller.close().catch(() => undefined);
    throw new UsageError(
      `Session ${controller.session.id} is empty; there is nothing to resume. Start a new session with 'crystal'.`,
    );
  }
  const stdin = deps.stdin ?? process.stdin;
  const stdout = deps.stdout ?? process.stdout;
  if (options.resumePicker && !(stdout.isTTY && stdin.isTTY)) {
    await controller.close().catch(() => undefined);
    throw new UsageError("--resume without an id opens a picker, which needs a terminal; pass the id: 'crystal --resume ID'.");
  }
  const sessionId =
    stdout.isTTY && stdin.isTTY
      ? await runTerminal({
          controller,
          config,
          home,
          replay: resuming,
          resumePicker: options.resumePicker === true,
          view: options.view ?? config.terminalView ?? DEFAULT_VIEW,
          readClipboard: deps.readClipboardImage ?? defaultClipboardReader(),
          stdin,
          stdout,
          firstPrompt: deps.firstPrompt,
        })
      : await runPlain({ controller, stdin, stdout });
  const saved = controller.session.historyLength > 0;
  // REL-3: "saved" only when the last save really landed; otherwise the path, the reason and exit 1.
  const failed = controller.session.saveError;
  controller.session.release();
  if (saved && failed) {
    process.stderr.write(`crystal: session ${sessionId} was NOT saved to ${failed.path}: ${failed.message}\n`);
    return 1;
  }
  process.stdout.write(
    saved
      ? `Session ${sessionId} saved. Continue it with: crystal --resume ${sessionId}\n`
      : `Session ${sessionId} is empty and was not saved.\n`,
  );
  return 0;
}
