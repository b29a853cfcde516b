/** `crystal run`: one turn on the engine face, no terminal UI (CLI-2, CLI-6). */
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import {
  ImageError,
  imageMarker,
  loadConfig,
  type MarkerSpan,
  resolveHome,
  SessionController,
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
    plan: options.plan,
    approval: options.approval,
    bashTimeoutSeconds: options.bashTimeoutSeconds,
    // CLI-2: a call that would ask the operator is denied, and the question tool is dismissed.
    unattended: true,
    // A turn a crash left open is closed by this prompt (its calls get "interrupted"), not continued.
    continueInterrupted: false,
  });
  const session = controller.session;
  const { text, spans } =
    options.images.length > 0 ? await withImages(controller, prompt, options.images) : { text: prompt, spans: [] };
  const printer = createPrinter(
    options.format,
    { stdout: guardedStdout(), stderr: process.stderr },
    options.showThinking,
    session.id,
  );
  let operatorDenied = false;
  controller.on((event) => {
    if (event.type === 'unattended-refusal') operatorDenied = true;
    printer.onEvent(event);
  });
  // SIGINT, SIGTERM and SIGHUP (a closed terminal) interrupt the turn, which is then saved (REL-1).
  const onSignal = (): void => void controller.ctrlC(true);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  try {
    const result = await controller.sendOnce(text, spans);
    printer.finish(result);
    return exitCodeFor({ ...result, denied: result.denied || operatorDenied });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
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
  let text = `${prompt}\n\n`;
  const spans: MarkerSpan[] = [];
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
      const attached = await controller.attachments.attach(bytes, { name: basename(path), draft: true });
      if (index > 0) text += ' ';
      spans.push({ start: text.length, number: attached.number });
      text += imageMarker(attached.number);
    } catch (error) {
      if (error instanceof ImageError) throw new UsageError(`--image ${path} (image ${index + 1}): ${error.message}`);
      throw error;
    }
  }
  return { text, spans };
}
