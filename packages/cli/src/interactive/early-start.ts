/**
 * Whether a start paints its first frame before the engine loads, and the painting (issue 22).
 * Two callers: the terminal bundle (`dist/terminal.cjs`, packages/cli/src/terminal-entry.ts),
 * which paints before the main bundle is even compiled and hands the frame over, and
 * `interactiveCommand`, which takes that frame or, when none was handed over (the main bundle
 * run on its own, the sources in tests), paints it itself. Nothing here imports the engine.
 */
import { peekStart, type StartPeek } from '@crystal/engine/early';
import { type EarlyTerminal, paintEarly } from './early.js';
import type { InteractiveOptions } from './options.js';

/** TUIX-8: the view when neither `--fullscreen`/`--inline` nor `terminalView` says. */
export const DEFAULT_VIEW: 'inline' | 'fullscreen' = 'inline';

/**
 * The first frame, painted, when a new session on a terminal in a trusted workspace may paint
 * before the engine loads; undefined when the engine must load first (a resume, `-r`, the trust
 * question, plain output, a config the peek cannot read).
 */
export function paintIfEarly(
  options: InteractiveOptions,
  home: string,
  workspace: string,
  stdin: NodeJS.ReadStream,
  stdout: NodeJS.WriteStream,
): EarlyTerminal | undefined {
  const peek = earlyPeek(options, home, workspace, stdin, stdout);
  if (!peek) return undefined;
  return paintEarly({
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

/**
 * The frame the terminal bundle painted, for the main bundle: a process-wide slot, since each
 * bundle has its own copy of this module. It names the arguments it was painted for.
 */
const HANDED = Symbol.for('crystal.earlyTerminal');

interface Handed {
  readonly argv: string;
  readonly early: EarlyTerminal;
}

export function handOver(argv: readonly string[], early: EarlyTerminal): void {
  (globalThis as { [HANDED]?: Handed })[HANDED] = { argv: JSON.stringify(argv), early };
}

/** The frame painted for `argv` on the process's own terminal, taken once; undefined when none was. */
export function takeHandedOver(argv: readonly string[]): EarlyTerminal | undefined {
  const slot = globalThis as { [HANDED]?: Handed };
  const handed = slot[HANDED];
  delete slot[HANDED];
  if (!handed) return undefined;
  if (handed.argv === JSON.stringify(argv)) return handed.early;
  // Painted for another command line: given back, and this one starts as if none had been.
  handed.early.abandon();
  return undefined;
}
