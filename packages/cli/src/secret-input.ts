/**
 * Reads a secret (SETUP-2): on a terminal, in raw mode with nothing echoed (Backspace edits,
 * Ctrl+C aborts, Enter ends); when standard input is a pipe or file, its first line.
 */
import { UsageError } from '@crystal/engine';

export interface SecretOptions {
  /** Where the prompt goes (standard error by default). */
  readonly output?: NodeJS.WritableStream;
  /** Leave the terminal raw and reading afterwards (the terminal UI takes it back). */
  readonly keepRaw?: boolean;
  /** Keys already read from the terminal before the prompt (typed ahead), read first. */
  readonly typedAhead?: string;
  /** Gets what came after the Enter that ended the secret in the same read (typed ahead). */
  readonly rest?: (text: string) => void;
}

export async function readSecret(
  prompt: string,
  stdin: NodeJS.ReadStream = process.stdin,
  options: SecretOptions = {},
): Promise<string> {
  const output = options.output ?? process.stderr;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(chunk as Buffer);
    return (Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '').trim();
  }
  output.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      let done = false;
      const onData = (data: string): void => {
        if (done) return;
        // A paste arrives as one chunk, possibly wrapped in bracketed-paste markers; arrow and
        // other escape-sequence keys are no part of a key (they once added `[A` to it).
        const text = data.replace(/\x1b(?:\[[0-?]*[ -/]*[@-~]|O[\s\S]|[\s\S])?/g, '');
        let at = 0;
        for (const ch of text) {
          at += ch.length;
          if (ch === '\r' || ch === '\n') {
            done = true;
            stdin.off('data', onData);
            const rest = text.slice(text[at - 1] === '\r' && text[at] === '\n' ? at + 1 : at);
            if (rest !== '') options.rest?.(rest);
            resolve(value);
            return;
          }
          if (ch === '\u0003') {
            done = true;
            stdin.off('data', onData);
            reject(new UsageError('Cancelled; nothing was stored.'));
            return;
          }
          if (ch === '\u0004' && value === '') {
            done = true;
            stdin.off('data', onData);
            resolve('');
            return;
          }
          if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
          else if (ch === '\u0015') value = '';
          else if (ch >= ' ') value += ch;
        }
      };
      if (options.typedAhead) onData(options.typedAhead);
      if (!done) stdin.on('data', onData);
    });
  } finally {
    if (!options.keepRaw) {
      stdin.setRawMode(false);
      stdin.pause();
    }
    output.write('\r\n');
  }
}
