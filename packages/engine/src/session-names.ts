/**
 * SEC-8: names that become paths. A session id from the command line (`--resume`, `export`,
 * `/resume`, `/fork`) or from a session file, and a companion file name read from a head, are
 * checked against a strict pattern before any path is built from them, so a crafted head
 * (`log.archive.file = "../../victim"`) or `--resume ../../x` never reaches outside `sessions/`.
 */
import { UsageError } from './errors.js';

/** Ids are what `newSessionId` makes (`20261201-085116-a1b2c3`) or short names: letters, digits, `-`, `_`. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function isSessionId(value: unknown): value is string {
  return typeof value === 'string' && SESSION_ID.test(value);
}

/** Throws a clear UsageError for an id that is not a session id. */
export function requireSessionId(value: string): string {
  if (SESSION_ID.test(value)) return value;
  const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  throw new UsageError(`${shown} is not a session id (letters, digits, '-' and '_' only, as 'crystal sessions' lists them).`);
}

export type CompanionKind = 'archive' | 'context';

/** The only companion names a head may name: `<id>.<kind>.<generation>.jsonl` of its own id. */
export function isCompanionName(value: unknown, id: string, kind: CompanionKind): value is string {
  if (typeof value !== 'string') return false;
  const match = /^(.+)\.(archive|context)\.(\d{1,15})\.jsonl$/.exec(value);
  return match !== null && match[1] === id && match[2] === kind;
}

export function companionGeneration(name: string): number {
  return Number(/\.(\d+)\.jsonl$/.exec(name)?.[1] ?? 0);
}
