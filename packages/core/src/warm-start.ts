/**
 * Whether this process got far enough for its code cache to be worth keeping (packages/cli/src/
 * launch.ts): the bin writes the cache at exit only for a command that succeeded or that opened
 * a session (the engine loaded and ran). A start that failed or was interrupted before that
 * compiled a fraction of its code, and an accepted cache is never rewritten, so keeping it would
 * make every later start compile the rest again. A terminal session is often ended by a signal
 * (a closed window), which is why a successful exit code alone is not the test.
 */
export const WARM_START = Symbol.for('crystal.warmStart');

/** Marks this process's code cache worth keeping (a session opened). */
export function markWarmStart(): void {
  (globalThis as { [WARM_START]?: boolean })[WARM_START] = true;
}
