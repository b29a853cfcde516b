/**
 * A session's checkpoints, `<home>/checkpoints/sessions/<id>.json` (0600), rewritten by temp +
 * fsync + rename after the copies it names are stored (CKPT-2). Records, oldest first:
 *
 * - `turn`: taken before user turn N: the message, and the model context (stored as a chunked
 *   copy) so a conversation rewind puts the context back; `superseded` once the conversation
 *   was rewound past it (the record stays: nothing is deleted from history).
 * - `batch`: one tool batch of turn N and the files it changed (before and after). `undone`
 *   once a code rewind restored what came before it.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import type { Change } from './tracker.js';
import { readTextIfPresent } from '../fs-errors.js';

export interface TurnRecord {
  readonly seq: number;
  readonly kind: 'turn';
  readonly turn: number;
  readonly at: string;
  readonly text: string;
  /** The stored copy of the model context (after the live system prompt) before the message. */
  readonly context: string;
  superseded?: boolean;
}

export interface BatchRecord {
  readonly seq: number;
  readonly kind: 'batch';
  readonly turn: number;
  readonly at: string;
  readonly tools: readonly string[];
  readonly changes: readonly Change[];
  undone?: boolean;
}

/**
 * A rewind (or `/undo`) as it was applied, so `/redo` can take it back: what each restored
 * file held before (`before`, stored) and what the rewind wrote (`after`); for a conversation
 * rewind, the model context before it and the turn records it superseded. `redone` once taken
 * back. A rewind record is kept only until a later message makes it stale.
 */
export interface RewindRecord {
  readonly seq: number;
  readonly kind: 'rewind';
  /** Random: a journal finished twice appends it once. */
  readonly id: string;
  readonly turn: number;
  readonly at: string;
  /** Batch records this rewind marked undone. */
  readonly undo: readonly number[];
  readonly changes: readonly Change[];
  readonly chat?: { readonly context: string; readonly userTurns: number; readonly superseded: readonly number[] };
  redone?: boolean;
}

export type CheckpointRecord = TurnRecord | BatchRecord | RewindRecord;

export interface CheckpointLog {
  version: 1;
  session: string;
  workspace: string;
  records: CheckpointRecord[];
  /** Turn numbers whose records were pruned by the size caps. */
  pruned?: number;
}

const ID = /^[A-Za-z0-9_.-]+$/;

export function logPath(home: string, sessionId: string): string {
  if (!ID.test(sessionId) || sessionId.startsWith('.'))
    throw new Error(`'${sessionId}' is not a session id. List ids with crystal sessions.`);
  return join(home, 'checkpoints', 'sessions', `${sessionId}.json`);
}

export async function readLog(home: string, sessionId: string): Promise<CheckpointLog | undefined> {
  let text: string;
  try {
    text = await fs.readFile(logPath(home, sessionId), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return parseLog(home, sessionId, text);
}

/**
 * `readLog` without a thread-pool round trip, for the recorder's first turn record (issue 22:
 * a read from the page cache; the log is one session's records).
 */
export function readLogSync(home: string, sessionId: string): CheckpointLog | undefined {
  let text: string | undefined;
  try {
    text = readTextIfPresent(logPath(home, sessionId));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return text === undefined ? undefined : parseLog(home, sessionId, text);
}

function parseLog(home: string, sessionId: string, text: string): CheckpointLog {
  const parsed = JSON.parse(text) as CheckpointLog;
  if (parsed.version !== 1 || !Array.isArray(parsed.records))
    throw new Error(`The checkpoint file ${logPath(home, sessionId)} is not one this version reads.`);
  return parsed;
}

export async function writeLog(home: string, log: CheckpointLog): Promise<void> {
  await writeFileAtomic(logPath(home, log.session), `${JSON.stringify(log)}\n`, 0o600);
}

export async function listLogs(home: string): Promise<string[]> {
  try {
    return (await fs.readdir(join(home, 'checkpoints', 'sessions')))
      .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
      .map((n) => n.slice(0, -5));
  } catch {
    return [];
  }
}

/** The live turn record of turn N: the newest one not superseded. */
export function turnRecord(log: CheckpointLog, turn: number): TurnRecord | undefined {
  return log.records.filter((r): r is TurnRecord => r.kind === 'turn' && r.turn === turn && !r.superseded).at(-1);
}

export function liveTurns(log: CheckpointLog): TurnRecord[] {
  return log.records.filter((r): r is TurnRecord => r.kind === 'turn' && !r.superseded);
}
