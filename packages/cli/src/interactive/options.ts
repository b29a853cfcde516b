/**
 * Session flags of `crystal` (CLI-1): the same as `crystal run` (CLI-2) minus the run-only
 * ones, plus `-r/--resume ID` and `--continue`. Problems are UsageErrors (exit 1).
 */
import { UsageError } from '@crystal/engine';
import { parseRunOptions, type RunOptions } from '../run-options.js';

export type InteractiveOptions = Omit<RunOptions, 'prompt' | 'format' | 'images' | 'showThinking'>;

const RUN_ONLY = ['--format', '--image', '--show-thinking'];

export function parseInteractiveOptions(argv: readonly string[]): InteractiveOptions {
  const args = argv.map((a) => (a === '-r' ? '--resume' : a));
  for (const arg of args) {
    const flag = arg.split('=')[0] as string;
    if (RUN_ONLY.includes(flag))
      throw new UsageError(`${flag} belongs to 'crystal run'; the interactive session does not take it.`);
  }
  let parsed: RunOptions;
  try {
    parsed = parseRunOptions(args);
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(error.message.replace("'crystal run --help'", "'crystal --help'"));
    throw error;
  }
  if (parsed.prompt !== undefined) {
    throw new UsageError(
      `'crystal' takes no prompt argument (got '${parsed.prompt}'); type it in the session, or use 'crystal run PROMPT'.`,
    );
  }
  const { prompt: _p, format: _f, images: _i, showThinking: _s, ...options } = parsed;
  return options;
}
