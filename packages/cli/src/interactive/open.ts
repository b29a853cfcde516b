/**
 * The interactive session once the engine is loaded (index.ts says when the terminal painted
 * before it): the config load and its errors, the connect and trust checks, the session open,
 * and the terminal or plain surface.
 */
import { assertConnectable, isTrusted, loadConfig, SessionController, UsageError, withServedOllamaModels } from '@crystal/engine';
import { configMemo } from '../build.js';
import { defaultClipboardReader } from './clipboard.js';
import type { EarlyTerminal } from './early.js';
import { DEFAULT_VIEW, type InteractiveDeps } from './index.js';
import type { InteractiveOptions } from './options.js';
import { ensureTrusted } from '../trust-prompt.js';
import { runPlain } from './plain.js';
import { runTerminal } from './terminal.js';

export interface OpenContext {
  readonly home: string;
  readonly workspace: string;
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  /** The frame painted before the engine loaded, if it was. */
  readonly early?: EarlyTerminal | undefined;
}

export async function openInteractive(options: InteractiveOptions, deps: InteractiveDeps, context: OpenContext): Promise<number> {
  const { home, workspace, stdin, stdout } = context;
  let early = context.early;
  let controller: SessionController;
  let config: Awaited<ReturnType<typeof withServedOllamaModels>>;
  try {
    // Local Ollama: the models it serves join the catalog, with their context windows (SETUP-3).
    config = await withServedOllamaModels(home, loadConfig(home, configMemo(home)), {
      provider: options.provider,
      model: options.model,
    });
    // SETUP-4: no key means a few lines on connecting a provider, before any trust question.
    if (options.resume === undefined && !options.continue) assertConnectable(home, config, options);
    // The early frame was painted for a trusted workspace; should that have changed, the question comes without it.
    if (early && !(config.workspaceTrust === false || isTrusted(home, workspace))) {
      early.abandon();
      early = undefined;
    }
    await ensureTrusted(home, workspace, config, { stdin, stdout });
    const terminal = Boolean(stdout.isTTY && stdin.isTTY);
    controller = await SessionController.open({
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
  } catch (error) {
    // The same error as without the early frame, on a terminal given back first.
    early?.abandon();
    throw error;
  }
  const resuming = options.resume !== undefined || options.continue;
  if (resuming && controller.session.historyLength === 0) {
    await controller.close().catch(() => undefined);
    throw new UsageError(
      `Session ${controller.session.id} is empty; there is nothing to resume. Start a new session with 'crystal'.`,
    );
  }
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
          early,
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
