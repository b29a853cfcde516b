/** `crystal run`: one turn on the engine face, no terminal UI (CLI-2, CLI-6). */
import { resolve } from 'node:path';
import {
  assembleWorkspaceTools,
  loadConfig,
  RUN_MCP_STARTUP_MS,
  resolveHome,
  Session,
  UsageError,
  withServedOllamaModels,
} from '@crystal/engine';
import { attachImageFiles } from './image-files.js';
import { createPrinter, exitCodeFor } from './run-output.js';
import { parseRunOptions } from './run-options.js';
import { guardStdout } from './stdout-guard.js';

export async function runCommand(argv: readonly string[]): Promise<number> {
  const options = parseRunOptions(argv);
  const prompt = options.prompt ?? (await readStdin());
  if (prompt.trim() === '') throw new UsageError('No prompt: pass it as an argument or on standard input.');
  if (prompt.trimStart().startsWith('/')) {
    throw new UsageError('Slash commands are interactive only; crystal run takes a plain prompt.');
  }
  const home = resolveHome(options.home);
  const workspace = resolve(options.workspace ?? process.cwd());
  // Local Ollama: the models it serves join the catalog, with their context windows (SETUP-3).
  const config = await withServedOllamaModels(home, loadConfig(home), { provider: options.provider, model: options.model });
  // A call that would ask the operator is denied, and the question tool is dismissed (CLI-2).
  let operatorDenied = false;
  let sessionId = '';
  let imageInput = false;
  const workspaceTools = await assembleWorkspaceTools({
    home,
    workspace,
    config,
    mode: options.plan ? 'plan' : 'work',
    approval: options.approval,
    bashTimeoutSeconds: options.bashTimeoutSeconds,
    // CLI-8: run never asks; project code loads from a trusted workspace or with the flag only.
    trustWorkspace: options.trustWorkspace,
    sessionId: () => sessionId,
    imageInput: () => imageInput,
    askQuestion: async () => {
      operatorDenied = true;
      return 'dismissed';
    },
    onDecided: (outcome) => {
      if (outcome.by === 'unattended' || outcome.by === 'deny') operatorDenied = true;
    },
    onNote: (text) => process.stderr.write(`${text}\n`),
  });
  try {
    return await runTurn();
  } finally {
    // MCP servers are children of this process: stop them, whatever happened.
    await workspaceTools.close();
  }

  async function runTurn(): Promise<number> {
    for (const note of workspaceTools.notes) process.stderr.write(`${note}\n`);
    const session = await Session.open({
      home,
      workspace,
      config,
      provider: options.provider,
      model: options.model,
      thinking: options.thinking,
      limits: options.limits,
      resume: options.resume,
      continueLatest: options.continue,
      mode: options.plan ? 'plan' : 'work',
      tools: workspaceTools.tools,
      policy: workspaceTools.policy,
      mapException: workspaceTools.mapException,
      surface: 'crystal run',
    });
    sessionId = session.id;
    imageInput = session.imageInput;
    try {
      const text = options.images.length > 0 ? await withImages(session, prompt, options.images) : prompt;
      const stdout = guardStdout();
      const printer = createPrinter(
        options.format,
        { stdout: stdout.stream, stderr: process.stderr },
        options.showThinking,
        session.id,
      );
      session.on((event) => printer.onEvent(event));
      const onSignal = (): void => session.cancel();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        // One turn: its first round should see the MCP tools, so the servers get a bounded head start.
        await workspaceTools.mcp.settle(RUN_MCP_STARTUP_MS);
        const result = await session.send(text);
        printer.finish(result);
        const code = exitCodeFor({ ...result, denied: operatorDenied });
        // REL-11: output that did not reach stdout makes the run a failure (the turn is saved).
        return stdout.failure && code === 0 ? 2 : code;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    } finally {
      session.release();
    }
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * `--image PATH` (repeatable): each file is validated and stored in order through the session's
 * attachment seam, and its marker is appended to the prompt, so the model gets the images in
 * the order given (IMG-1). A refused image stops the run before any request (exit 1).
 */
async function withImages(session: Session, prompt: string, paths: readonly string[]): Promise<string> {
  if (!session.imageInput) {
    throw new UsageError(
      `Model '${session.model}' of provider '${session.provider}' does not declare imageInput; --image needs a model with "imageInput": true in its catalog entry.`,
    );
  }
  // REL-10: regular files within the size limit only, the whole batch validated before any is stored.
  return attachImageFiles(session, prompt, paths);
}
