/**
 * `crystal --version` and `crystal --help`: answered from this file alone (CLI-7), before any
 * other code loads. The bin requires its CommonJS build (`dist/fast-path.cjs`, scripts/bundle.mjs)
 * first, since merely starting the ES module loader costs a Node start about a third more
 * (issue 22 item 4); `main.ts` asks it too, so the bundle answers alike when imported directly.
 */
import { HELP, VERSION_TEXT } from './help.js';

/** Writes the answer and returns true when the first argument asks for the version or the help. */
export function answerFast(argv: readonly string[], out?: { write(text: string): unknown }): boolean {
  const [command] = argv;
  const text =
    command === '--version' || command === '-v' || command === 'version'
      ? VERSION_TEXT
      : command === '--help' || command === '-h' || command === 'help'
        ? HELP.main
        : undefined;
  if (text === undefined) return false;
  // process.stdout is made only here: the other commands set up their own output.
  (out ?? process.stdout).write(text);
  return true;
}
