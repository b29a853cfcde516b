/** `crystal run`: one turn on the engine face, no terminal UI (CLI-2, CLI-6). */
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import {
  assembleWorkspaceTools,
  ImageError,
  loadConfig,
  resolveHome,
  Session,
  taggedMarker,
  UsageError,
  withServedOllamaModels,
} from '@crystal/engine';
import { createPrinter, exitCodeFor } from './run-output.js';
import { parseRunOptions } from './run-options.js';

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
  });
  sessionId = session.id;
  imageInput = session.imageInput;
  const text = options.images.length > 0 ? await withImages(session, prompt, options.images) : prompt;
  const printer = createPrinter(
    options.format,
    { stdout: guardedStdout(), stderr: process.stderr },
    options.showThinking,
    session.id,
  );
  session.on((event) => printer.onEvent(event));
  const onSignal = (): void => session.cancel();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const result = await session.send(text);
    printer.finish(result);
    return exitCodeFor({ ...result, denied: operatorDenied });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** stdout that stops writing quietly when the reader went away (`crystal run … | head`). */
function guardedStdout(): NodeJS.WritableStream & { isTTY?: boolean } {
  let closed = false;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') closed = true;
    else throw error;
  });
  return {
    isTTY: process.stdout.isTTY,
    write: (chunk: string) => (closed ? true : process.stdout.write(chunk)),
  } as unknown as NodeJS.WritableStream & { isTTY?: boolean };
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
  const markers: string[] = [];
  for (const [index, path] of paths.entries()) {
    let bytes: Buffer;
    try {
      bytes = await readFile(resolve(path));
    } catch (error) {
      throw new UsageError(
        `--image ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`,
      );
    }
    try {
      const attached = await session.attachments.attach(bytes, { name: basename(path), draft: true });
      markers.push(taggedMarker(attached.number));
    } catch (error) {
      if (error instanceof ImageError) throw new UsageError(`--image ${path} (image ${index + 1}): ${error.message}`);
      throw error;
    }
  }
  return `${prompt}\n\n${markers.join(' ')}`;
}
