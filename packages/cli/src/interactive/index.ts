/**
 * `crystal` with no command: the interactive session in the current folder (CLI-1). Session
 * flags as in `crystal run`, plus `-r/--resume ID` and `--continue`. A missing or empty
 * session exits non-zero before the terminal UI starts. Output that is not a terminal falls
 * back to sequential plain text (TUI-7).
 *
 * Ready sooner (issue 22): on a terminal, a new session in a trusted workspace paints its first
 * frame and takes keys before the engine loads (early.ts, from `@crystal/engine/early` alone;
 * from the bin, the terminal bundle paints it before this bundle is even read and hands it over,
 * packages/cli/src/terminal-entry.ts), then loads the engine in steps with the keys handled
 * between them, and opens the session (open.ts). A resume, `-r`, the trust question, plain
 * output and a config the peek cannot read load the engine first, as before.
 */
import { resolve } from 'node:path';
import { resolveHome } from '@crystal/engine/early';
import { engineStages } from '@crystal/engine/stages';
import type { ClipboardReader } from './clipboard.js';
import { paintIfEarly, takeHandedOver } from './early-start.js';
import { parseInteractiveOptions } from './options.js';

export { DEFAULT_VIEW } from './early-start.js';

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
  // The terminal bundle painted this start's frame before this bundle loaded (packages/cli/src/
  // terminal-entry.ts), on the process's own terminal; otherwise it is painted here, if it may be.
  const handed = deps.stdin || deps.stdout ? undefined : takeHandedOver(argv);
  const early = handed ?? paintIfEarly(options, home, workspace, stdin, stdout);
  if (early) {
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
