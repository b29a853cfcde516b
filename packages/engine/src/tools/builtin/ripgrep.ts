/**
 * ripgrep, when it is on PATH: `rg --files` for glob and `rg --json` for grep, configured to
 * see what the built-in walker sees (hidden files included, links not followed, `.gitignore`
 * honoured whether or not the folder is a git repository, no global or `.ignore` files, sorted
 * by path). The callers still pass every result through the walker's rules, so a difference in
 * ignore semantics can only remove results, never add or reorder them.
 */
import { spawn } from '../lazy-child-process.js';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { SKIP_DIRS } from './walker.js';

let onPath: string | null | undefined;

/** `rg` on PATH, looked up once per process. */
export function findRipgrep(): string | null {
  if (onPath !== undefined) return onPath;
  onPath = null;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, process.platform === 'win32' ? 'rg.exe' : 'rg');
    try {
      accessSync(candidate, constants.X_OK);
      onPath = candidate;
      break;
    } catch {
      // Not here.
    }
  }
  return onPath;
}

/** The host's choice: a path, null (walker), or undefined (look on PATH). */
export function ripgrepFor(rgPath: string | null | undefined): string | null {
  return rgPath === undefined ? findRipgrep() : rgPath;
}

export const RG_MAX_FILE_SIZE = '8M';

/**
 * Flags shared by listing and searching. A narrowing glob goes before the skip list: rg lets the
 * later glob win, so a broad pattern cannot re-open `node_modules/`.
 */
export function commonArgs(glob?: string): string[] {
  return [
    '--no-config',
    '--hidden',
    '--no-ignore-dot',
    '--no-ignore-global',
    '--no-ignore-exclude',
    '--no-ignore-parent',
    '--no-require-git',
    '--sort',
    'path',
    ...(glob === undefined ? [] : ['--glob', glob]),
    ...SKIP_DIRS.flatMap((name) => ['--glob', `!${name}/`]),
  ];
}

export class RipgrepError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/**
 * Runs rg in `cwd` and yields its stdout lines. Breaking out of the loop (or an abort) kills rg.
 * Exit code 1 (nothing found) is not an error; exit 2 with nothing on stdout throws with rg's
 * message (a pattern rg cannot compile, a bad flag); exit 2 after results (an unreadable file)
 * is tolerated, as the walker skips unreadable files too.
 */
export async function* ripgrepLines(
  rg: string,
  args: readonly string[],
  cwd: string,
  signal?: AbortSignal,
): AsyncGenerator<string> {
  for await (const lines of ripgrepLineBatches(rg, args, cwd, signal)) yield* lines;
}

/** As `ripgrepLines`, the lines of each stdout chunk together (one await per chunk, not per line). */
export async function* ripgrepLineBatches(
  rg: string,
  args: readonly string[],
  cwd: string,
  signal?: AbortSignal,
): AsyncGenerator<string[]> {
  const child = spawn(rg, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 4000) stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  exited.catch(() => undefined); // Observed below; this only keeps an early spawn error from going unhandled.
  const onAbort = (): void => {
    child.kill('SIGKILL');
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  let produced = false;
  let finished = false;
  try {
    let rest = '';
    for await (const chunk of child.stdout.setEncoding('utf8') as AsyncIterable<string>) {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      const lines = parts.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
      if (lines.length > 0) {
        produced = true;
        yield lines;
      }
    }
    if (rest !== '') {
      produced = true;
      yield [rest];
    }
    const code = await exited;
    finished = true;
    signal?.throwIfAborted();
    if (code === 2 && !produced) throw new RipgrepError(`ripgrep failed: ${stderr.trim() || 'exit 2'}`, stderr);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (!finished) {
      child.kill('SIGKILL');
      await exited.catch(() => undefined);
    }
  }
}
