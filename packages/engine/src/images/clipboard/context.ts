/** What every platform reader gets: the cap, the environment, the runner and its bounds. */
import type { ImageLimits } from '../limits.js';
import { readerFailed } from './errors.js';
import type { ReaderCommand, ReaderResult, ReaderRunner } from './run.js';

export interface ReaderContext {
  readonly limits: ImageLimits;
  readonly env: NodeJS.ProcessEnv;
  readonly run: ReaderRunner;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Where the macOS reader makes its private temporary folder. */
  readonly tempDir: string;
}

/** The bytes a platform reader found, before validation. */
export interface RawClipboardImage {
  readonly bytes: Uint8Array;
  /** The reader that produced them: `xclip`, `wl-paste`, `osascript` or `powershell`. */
  readonly reader: ClipboardReaderName;
  /** The clipboard type they were read as (`image/png`, `«class PNGf»`, `PNG`, `BITMAP`). */
  readonly type: string;
}

export type ClipboardReaderName = 'xclip' | 'wl-paste' | 'osascript' | 'powershell';

/** Bytes of reader output that are not the image itself (type lists, status lines). */
export const LISTING_BYTES = 64 * 1024;

/** Runs one command of `reader`; a start failure or a timeout is a reader failure (CLIP-6). */
export async function runReader(
  context: ReaderContext,
  reader: ClipboardReaderName,
  command: Omit<ReaderCommand, 'env' | 'timeoutMs' | 'signal'>,
): Promise<ReaderResult> {
  let result: ReaderResult;
  try {
    result = await context.run({ ...command, env: context.env, timeoutMs: context.timeoutMs, signal: context.signal });
  } catch (error) {
    throw readerFailed(reader, error instanceof Error ? error.message : String(error), 'it could not be started');
  }
  context.signal?.throwIfAborted();
  if (result.timedOut) {
    throw readerFailed(reader, '', `it did not finish within ${context.timeoutMs / 1000} seconds`);
  }
  return result;
}

/** `exit code 3` or `killed by SIGTERM`: how a reader ended, for a failure without stderr. */
export function exitStatus(result: ReaderResult): string {
  return result.signal ? `it was killed by ${result.signal}` : `it exited with code ${result.code}`;
}
