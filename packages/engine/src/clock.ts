/** Time as the engine sees it; tests inject their own so retry timing is tested without sleeping. */

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or rejects with an AbortError at once when `signal` aborts (RETRY-8). */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  random(): number;
  /** Runs `fn` after `ms`; returns a cancel function (the turn's duration deadline). */
  schedule(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  random: () => Math.random(),
  schedule: (ms, fn) => {
    const timer = setTimeout(fn, Math.min(ms, 2_147_483_647));
    return () => clearTimeout(timer);
  },
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(abortReason());
        return;
      }
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(timer);
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
