/** `bashTimeoutSeconds` (BASH-1): omitted 600 s, `null` or "unlimited" disables, a positive integer replaces it. */
import type { Config } from './config/schema.js';

export const DEFAULT_BASH_TIMEOUT_SECONDS = 600;
/** External tool sets keep their own timer (BASH-3). */
export const DEFAULT_EXEC_TOOL_TIMEOUT_SECONDS = 120;

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

/** The timer of an external exec tool: its own `timeoutSeconds`, never `bashTimeoutSeconds` (BASH-3). */
export function execToolTimeoutMs(timeoutSeconds: number | undefined): number {
  return (timeoutSeconds ?? DEFAULT_EXEC_TOOL_TIMEOUT_SECONDS) * 1000;
}
