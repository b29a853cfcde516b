/** Time as the engine sees it; tests inject their own so retry timing is tested without sleeping. */

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or rejects with an AbortError at once when `signal` aborts (RETRY-8). */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  random(): number;
  /** Runs `fn` after `ms`; returns a cancel function (the turn's duration deadline). */
  schedule(ms: number, fn: () => void): () => void;
}

/** The runtime timer maximum; a longer setTimeout fires after 1 ms, so longer waits are split (REL-6). */
export const TIMER_MAX_MS = 2_147_483_647;

/** setTimeout for any length: waits beyond the timer maximum run as a chain of shorter timers. */
function longTimer(ms: number, fn: () => void): () => void {
  let timer: NodeJS.Timeout;
  let left = Math.max(0, ms);
  const step = (): void => {
    const now = Math.min(left, TIMER_MAX_MS);
    left -= now;
    timer = setTimeout(left > 0 ? step : fn, now);
  };
  step();
  return () => clearTimeout(timer);
}

export const systemClock: Clock = {
  now: () => Date.now(),
  random: () => Math.random(),
  schedule: (ms, fn) => longTimer(ms, fn),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(abortReason());
        return;
      }
      const cancel = longTimer(ms, () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      const onAbort = (): void => {
        cancel();
        reject(abortReason());
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }),
};

export function abortReason(): Error {
  const error = new Error('The turn was interrupted.');
  error.name = 'AbortError';
  return error;
}
