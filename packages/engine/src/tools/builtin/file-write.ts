/** What `write` and `edit` share: an atomic write that keeps the file's mode, and a capped diff. */
import { writeChecked } from '../safe-open.js';

export const DIFF_MAX_LINES = 60;

/**
 * Temp file + fsync + rename (never half-written), through a verified descriptor of the folder
 * (SEC-4). Parent folders are created with the usual permissions; an existing file keeps its
 * mode, a new one gets 0666 less the umask.
 */
export async function writeKeepingMode(
  path: string,
  display: string,
  data: string,
  existingMode: number | undefined,
): Promise<void> {
  await writeChecked(path, display, data, existingMode);
}

/** A unified diff of the change, at most 60 lines, for the surfaces to show under the status line. */
export async function diffPreview(display: string, before: string, after: string): Promise<string> {
  // Loaded on first use: `crystal run` and the terminal start without it (bench/run-stream.mjs).
  const { createTwoFilesPatch } = await import('diff');
  const patch = createTwoFilesPatch(`a/${display}`, `b/${display}`, before, after, undefined, undefined, {
    context: 3,
    timeout: 500,
  });
  if (patch === undefined) return '(the diff is too large to show)';
  const lines = patch.replace(/^=+\n/, '').trimEnd().split('\n');
  if (lines.length <= DIFF_MAX_LINES) return lines.join('\n');
  return `${lines.slice(0, DIFF_MAX_LINES).join('\n')}\n[diff cut: ${lines.length - DIFF_MAX_LINES} more lines]`;
}
