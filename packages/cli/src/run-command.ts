/** `crystal run`: one turn on the engine face, no terminal UI (CLI-2, CLI-6). */
import { resolve } from 'node:path';
import {
  discoverCommands,
  expandCommand,
  loadConfig,
  matchCustomCommand,
  type MarkerSpan,
  RUN_MCP_STARTUP_MS,
  resolveHome,
  SessionController,
  type ToolRestriction,
  UsageError,
  withServedOllamaModels,
} from '@crystal/engine';
import { configMemo } from './build.js';
import { attachImageFiles } from './image-files.js';
import { createPrinter, exitCodeFor } from './run-output.js';
import { parseRunOptions } from './run-options.js';
import { guardStdout, lazyStderr } from './stdout-guard.js';

export async function runCommand(argv: readonly string[]): Promise<number> {
  // Once nothing is left to do (every write, save and child done: that is when Node emits
  // 'beforeExit'), exit without tearing the heap down: ~1 ms of every run (issue 22 item 4).
  // 'exit' handlers (the session lock, the code cache) still run; the exit code is process.exitCode.
  process.once('beforeExit', () => process.exit());
  const options = parseRunOptions(argv);
  const prompt = options.prompt ?? (await readStdin());
  if (prompt.trim() === '') throw new UsageError('No prompt: pass it as an argument or on standard input.');
  const home = resolveHome(options.home);
  const workspace = resolve(options.workspace ?? process.cwd());
  // CMD-1: `/name args` runs a custom command: its expanded text is the prompt.
  const { text: message, allowedTools } = expandRunPrompt(prompt, { home, workspace });
  // Local Ollama: the models it serves join the catalog, with their context windows (SETUP-3).
  const config = await withServedOllamaModels(home, loadConfig(home, configMemo(home)), {
    provider: options.provider,
    model: options.model,
  });
  // `run` is a surface over the controller face the terminal and the page drive (DESIGN.md):
  // admission, neutralising typed markers, saving and follow-ups are the engine's.
  const controller = await SessionController.open({
    home,
    workspace,
    config,
    provider: options.provider,
    model: options.model,
    thinking: options.thinking,
    limits: options.limits,
    resume: options.resume,
    continueLatest: options.continue,
    // `run` only appends to the archive: a long session's archive is not read (issue 22 item 5).
    deferArchive: true,
    plan: options.plan,
    approval: options.approval,
    approvalModel: options.approvalModel,
    bashTimeoutSeconds: options.bashTimeoutSeconds,
    skills: options.skills,
    // CLI-8: run never asks; project code loads from a trusted workspace or with the flag only.
    trustWorkspace: options.trustWorkspace,
    // CLI-2: a call that would ask the operator is denied, and the question tool is dismissed.
    unattended: true,
    // A turn a crash left open is closed by this prompt (its calls get "interrupted"), not continued.
    continueInterrupted: false,
    // REL-2: the lock a second opener is shown names this surface.
    surface: 'crystal run',
  });
  try {
    const session = controller.session;
    const stdout = guardStdout();
    const printer = createPrinter(
      options.format,
      // process.stderr is made at the first line written to it: a plain run writes none (issue 22).
      { stdout: stdout.stream, stderr: lazyStderr() },
      options.showThinking,
      session.id,
    );
    let operatorDenied = false;
    controller.on((event) => {
      if (event.type === 'unattended-refusal') operatorDenied = true;
      printer.onEvent(event);
    });
    const { text, spans } =
      options.images.length > 0 ? await withImages(controller, message, options.images) : { text: message, spans: [] };
    // SIGINT, SIGTERM and SIGHUP (a closed terminal) interrupt the turn, which is then saved (REL-1).
    const onSignal = (): void => void controller.ctrlC(true);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    process.once('SIGHUP', onSignal);
    try {
      // One turn: its first round should see the MCP tools, so the servers get a bounded head start.
      await controller.settleMcp(RUN_MCP_STARTUP_MS);
      const result = await controller.sendOnce(text, spans, allowedTools);
      printer.finish(result);
      const code = exitCodeFor({ ...result, denied: result.denied || operatorDenied });
      // REL-11: output that did not reach stdout makes the run a failure (the turn is saved).
      return stdout.failure && code === 0 ? 2 : code;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.off('SIGHUP', onSignal);
    }
  } finally {
    // MCP servers are children of this process, and the session lock is ours: both end here.
    await controller.release();
  }
}

/** A plain prompt as it is; a custom command expanded; any other slash command refused. */
function expandRunPrompt(
  prompt: string,
  places: { home: string; workspace: string },
): { text: string; allowedTools?: ToolRestriction } {
  if (!prompt.trimStart().startsWith('/')) return { text: prompt };
  const custom = matchCustomCommand(prompt, discoverCommands(places));
  if (!custom) {
    const name = prompt.trim().split(/\s/)[0];
    throw new UsageError(
      `Slash commands are interactive only; crystal run takes a plain prompt or a custom command, and ${name} is not one here (custom commands live in .crystal/commands, .claude/commands or ~/.crystal/commands).`,
    );
  }
  const text = expandCommand(custom.command, custom.argument);
  if (text.trim() === '') throw new UsageError(`/${custom.command.name} is empty: ${custom.command.path} has no text to send.`);
  // CMD-1: the command's allowed-tools hold for its turn.
  return { text, allowedTools: { source: `the /${custom.command.name} command`, patterns: custom.command.allowedTools } };
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * `--image PATH` (repeatable): each file is validated and stored in order through the session's
 * attachment seam, and its marker is appended to the prompt as an attached span, so the model
 * gets the images in the order given (IMG-1). A refused image stops the run before any request (exit 1).
 */
async function withImages(
  controller: SessionController,
  prompt: string,
  paths: readonly string[],
): Promise<{ text: string; spans: MarkerSpan[] }> {
  const session = controller.session;
  if (!session.imageInput) {
    throw new UsageError(
      `Model '${session.model}' of provider '${session.provider}' does not declare imageInput; --image needs a model with "imageInput": true in its catalog entry.`,
    );
  }
  // REL-10: regular files within the size limit only, the whole batch validated before any is stored.
  return attachImageFiles(session, prompt, paths);
}
