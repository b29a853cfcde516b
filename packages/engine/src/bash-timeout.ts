/** `bashTimeoutSeconds` (BASH-1): omitted 600 s, `null` or "unlimited" disables, a positive integer replaces it. */
import type { Config } from './config/schema.js';

export const DEFAULT_BASH_TIMEOUT_SECONDS = 600;

/**
 * The per-command timer of the built-in bash tool in milliseconds, or null when disabled.
 * `flag` is `--bash-timeout` (process only): a number of seconds, or null for unlimited.
 */
export function bashTimeoutMs(config: Config, flag?: number | null): number | null {
  const value = flag !== undefined ? flag : config.bashTimeoutSeconds;
  if (value === undefined) return DEFAULT_BASH_TIMEOUT_SECONDS * 1000;
  if (value === null || value === 'unlimited') return null;
  return value * 1000;
}
