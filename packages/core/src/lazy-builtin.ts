/**
 * A Node built-in loaded the first time it is used, not when the module that needs it loads
 * (issue 22 item 4). The CLI is one bundle, and a plain `import ... from 'node:x'` becomes a
 * `require` that runs when the importing module initialises: everything the engine barrel
 * touches would load before the first request (node:tls for an http:// provider, node:zlib for
 * an uncompressed reply, node:child_process before any command runs), at about a millisecond
 * each. Modules on the way to the first request take what they need through this instead:
 *
 *   const zlib = lazyBuiltin<typeof import('node:zlib')>('node:zlib');
 *   ... zlib().createGunzip()
 *
 * Types come from a type-only import, so nothing loads until the getter is called.
 */
import { createRequire } from 'node:module';

let load: ((name: string) => unknown) | undefined;

/** `process.getBuiltinModule` (Node 20.16+), else a `require` made at the first load (not at module init). */
function loader(): (name: string) => unknown {
  if (load) return load;
  const getBuiltin = (process as { getBuiltinModule?: (name: string) => unknown }).getBuiltinModule;
  load = getBuiltin ? (name) => getBuiltin.call(process, name) : createRequire(import.meta.url);
  return load;
}

/** A getter for the built-in `name` (`node:` prefix required), loaded on its first call. */
export function lazyBuiltin<T>(name: `node:${string}`): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= loader()(name) as T;
    return loaded;
  };
}

const crypto = lazyBuiltin<typeof import('node:crypto')>('node:crypto');

/**
 * `bytes` random bytes as hex, for names in Home that must not collide with another process's
 * (temp files beside the pid, session ids beside the second, lock temp names): from `Math.random`
 * (V8 seeds it from the system's entropy in every process), so naming a file does not load
 * node:crypto (~3 ms). Never for anything secret or guessable by another user: tokens and keys,
 * and temp names in a folder others can write (a workspace), use node:crypto.
 */
export function uniqueHex(bytes: number): string {
  let hex = '';
  for (let i = 0; i < bytes; i++) {
    hex += Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, '0');
  }
  return hex;
}

/** SHA-256 of `data` as hex, node:crypto loaded at the first call. */
export function sha256Hex(data: string | Uint8Array): string {
  return crypto().createHash('sha256').update(data).digest('hex');
}

/**
 * Milliseconds on a monotonic clock, for measuring intervals (a watchdog, a read window). Not
 * `performance.now()`: its first use loads perf_hooks and eight internal modules, ~0.7 ms of
 * every `crystal run` before its first request (issue 22 item 4). Same clock (uv_hrtime).
 */
export function monotonicMs(): number {
  return process.uptime() * 1000;
}
