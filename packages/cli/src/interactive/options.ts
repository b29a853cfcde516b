/**
 * Session flags of `crystal` (CLI-1): the same as `crystal run` (CLI-2) minus the run-only
 * ones, plus `-r/--resume ID` and `--continue`. Problems are UsageErrors (exit 1).
 */
import { UsageError } from '@crystal/engine/early';
import { parseRunOptions, type RunOptions } from '../run-options.js';

export type InteractiveOptions = Omit<RunOptions, 'prompt' | 'format' | 'images' | 'showThinking'> & {
  /** `-r`/`--resume` without an id (TUIX-11): open the session picker. */
  readonly resumePicker?: boolean;
  /** `--fullscreen` or `--inline` (TUIX-8); else the config's `terminalView`. */
  readonly view?: 'inline' | 'fullscreen';
};

const RUN_ONLY = ['--format', '--image', '--show-thinking'];

export function parseInteractiveOptions(argv: readonly string[]): InteractiveOptions {
  let args = argv.map((a) => (a === '-r' ? '--resume' : a));
  // TUIX-8: the terminal view.
  let view: 'inline' | 'fullscreen' | undefined;
  args = args.filter((a) => {
    if (a !== '--fullscreen' && a !== '--inline') return true;
    const asked = a === '--fullscreen' ? 'fullscreen' : 'inline';
    if (view !== undefined && view !== asked) throw new UsageError('--fullscreen and --inline cannot be passed together.');
    view = asked;
    return false;
  });
  // TUIX-11: `--resume` with no id (last, or followed by another flag) opens the picker.
  let resumePicker = false;
  args = args.filter((a, i) => {
    if (a !== '--resume') return true;
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith('-')) return true;
    resumePicker = true;
    return false;
  });
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
  if (resumePicker && (options.resume !== undefined || options.continue))
    throw new UsageError(
      '--resume without an id opens the session picker; it cannot be combined with another --resume or --continue.',
    );
  return { ...options, ...(resumePicker ? { resumePicker } : {}), ...(view ? { view } : {}) };
}
