/**
 * The terminal bundle, `dist/terminal.cjs` (scripts/bundle.mjs; issue 22): `@crystal/tui` and the
 * first frame's code path alone (option parsing, the config peek, `paintEarly`), a fraction of
 * the main bundle, so a terminal start paints and takes keys before the main bundle is read and
 * compiled. It then loads the main bundle, which takes the frame over (interactive/index.ts).
 *
 * The main bundle does not hold `@crystal/tui`: it is `require('./terminal.cjs').tui`, served
 * from these exports (packages/cli/src/launch.ts), already loaded on this path and loaded when first needed
 * on any other, so the terminal's classes and module state exist once per process.
 */
import { paintIfEarly, handOver } from './interactive/early-start.js';
import type { EarlyTerminal } from './interactive/early.js';
import { parseInteractiveOptions } from './interactive/options.js';
import { resolveHome } from '@crystal/engine/early';
import { resolve } from 'node:path';

// One namespace export (not `export *`, whose property copies cost the first frame a few tenths of
// a millisecond): the main bundle's `@crystal/tui` is this `tui` (scripts/bundle.mjs).
export * as tui from '@crystal/tui';

/**
 * `crystal [flags]` on a terminal: paints the first frame if this start may, hands it over, and
 * runs the main bundle (`loadMain`, which calls `flush` before it compiles). The main bundle does
 * everything else, as if it had started alone: it parses the flags again and reports any problem
 * with them, decides the session, opens it.
 */
export function startTerminal(argv: readonly string[], loadMain: (flush: () => Promise<void>) => Promise<void>): void {
  let early: EarlyTerminal | undefined;
  try {
    const options = parseInteractiveOptions(argv);
    const home = resolveHome(options.home);
    early = paintIfEarly(options, home, resolve(options.workspace ?? process.cwd()), process.stdin, process.stdout);
  } catch {
    // A bad flag, a file the peek cannot read: the main bundle meets it again and reports it.
    early = undefined;
  }
  if (early) handOver(argv, early);
  // Between the main bundle's read and its compile (one synchronous block), a key read meanwhile
  // is echoed first.
  loadMain(() => early?.app.painted() ?? Promise.resolve()).catch((error: unknown) => {
    // The main bundle could not be read or compiled (a broken install): the terminal is given
    // back before the message, as for any start-up error.
    early?.abandon();
    process.stderr.write(`crystal: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
}
