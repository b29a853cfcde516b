/**
 * `crystal` with no command: the interactive session in the current folder (CLI-1). Session
 * flags as in `crystal run`, plus `-r/--resume ID` and `--continue`. A missing or empty
 * session exits non-zero before the terminal UI starts. Output that is not a terminal falls
 * back to sequential plain text (TUI-7).
 *
 * Ready sooner (issue 22): on a terminal, a new session in a trusted workspace paints its first
 * frame and takes keys before the engine loads (early.ts, from `@crystal/engine/early` alone),
 * then loads the engine in steps with the keys handled between them, and opens the session
 * (open.ts). A resume, `-r`, the trust question, plain output and a config the peek cannot
 * read load the engine first, as before.
 */
import { resolve } from 'node:path';
import { engineStages, peekStart, resolveHome, type StartPeek } from '@crystal/engine/early';
import type { ClipboardReader } from './clipboard.js';
import { type EarlyTerminal, paintEarly } from './early.js';
import { type InteractiveOptions, parseInteractiveOptions } from './options.js';

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
  const stdin = deps.stdin ?? process.stdin;
  const stdout = deps.stdout ?? process.stdout;
  const peek = earlyPeek(options, home, workspace, stdin, stdout);
  let early: EarlyTerminal | undefined;
  if (peek) {
    early = paintEarly({
      stdin,
      stdout,
      home,
      workspace,
      view: options.view ?? peek.terminalView ?? DEFAULT_VIEW,
      status: {
        mode: options.plan ? 'plan' : 'work',
        approval: peek.approval,
        // Only what the session will show: a model the flags and config leave to the catalog waits.
        model: peek.model ?? '…',
        workspace,
        inputTokens: 0,
        outputTokens: 0,
        queued: 0,
      },
      model: peek.model,
    });
    try {
      // Each step evaluates a few milliseconds of the engine; a key typed meanwhile is read and
      // echoed between two of them (the echo's frame is painted before the next step starts).
      for (const stage of engineStages) {
        await stage();
        await new Promise<void>((r) => setImmediate(r));
        await early.app.painted();
      }
    } catch (error) {
      early.abandon();
      throw error;
    }
  }
  const { openInteractive } = await import('./open.js');
  return openInteractive(options, deps, { home, workspace, stdin, stdout, early });
}

/** What the first frame needs, when a new session on a terminal may paint before the engine loads. */
function earlyPeek(
  options: InteractiveOptions,
  home: string,
  workspace: string,
  stdin: NodeJS.ReadStream,
  stdout: NodeJS.WriteStream,
): StartPeek | undefined {
  if (!(stdin.isTTY && stdout.isTTY)) return undefined;
  if (options.resume !== undefined || options.continue || options.resumePicker) return undefined;
  const peek = peekStart(home, workspace, options);
  return peek && !peek.trustNeeded ? peek : undefined;
}
