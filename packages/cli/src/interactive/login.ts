/**
 * `/login [provider]` in the terminal (SETUP-2): the frame steps aside (the alternate screen is
 * left), the key is asked for on the plain terminal without echo, checked and stored by the
 * engine's checkAndStoreKey (the same rule as `crystal login`), and the frame comes back with
 * one notice. The key never passes through the composer, so it is never in the prompt history.
 */
import { checkAndStoreKey, type Config } from '@crystal/engine';
import type { TerminalApp } from '@crystal/tui';
import { readSecret } from '../secret-input.js';

export interface TerminalLogin {
  readonly app: TerminalApp;
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  readonly home: string;
  readonly config: Config;
  /** The provider `/login` with no argument means (the session's). */
  readonly currentProvider: () => string;
  /** Stops and restarts the frame's own key reading around the prompt. */
  readonly detachKeys: () => void;
  readonly attachKeys: () => void;
}

export async function loginInTerminal(options: TerminalLogin, argument: string): Promise<void> {
  const name = argument.trim() === '' ? options.currentProvider() : argument.trim();
  options.detachKeys();
  options.app.stop();
  // Keys typed after the Enter of `/login` (read in the same burst) are the key's first
  // characters, never composer text; keys typed after the key's Enter go back to the frame.
  const typedAhead = options.app.takePendingInput();
  let after = '';
  let text: string;
  let tone: 'info' | 'error' = 'info';
  try {
    const key = await readSecret(`API key for ${name} (input hidden; Enter stores it, Ctrl+C cancels): `, options.stdin, {
      output: options.stdout,
      keepRaw: true,
      typedAhead,
      rest: (rest) => {
        after = rest;
      },
    });
    // Keys typed while the key is checked wait in the terminal for the frame, not dropped.
    options.stdin.pause();
    options.stdout.write('Checking the key...\r\n');
    const stored = await checkAndStoreKey(options.home, options.config, name, key);
    text = `Stored the key for ${name} in ${stored.file}.${stored.note ? ` ${stored.note}` : ''}`;
  } catch (error) {
    text = (error as Error).message;
    tone = 'error';
  } finally {
    options.app.start();
    options.attachKeys();
  }
  options.app.notice(text, tone);
  if (after !== '') options.app.input(after);
  options.stdin.resume();
}
