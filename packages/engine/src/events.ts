/**
 * Every event the engine publishes for one session, in one place. Events carry values, never
 * captions: surfaces decide how they look. The engine never paints (DESIGN.md).
 */
import type { ParsedToolCall, ProviderErrorKind, ToolResultPart, Usage } from '@crystal/core';

export type StopReason =
  | 'completed'
  | 'interrupted'
  | 'failed'
  | 'output_truncated'
  | 'content_filtered'
  | 'context_overflow'
  | 'model_call_limit_reached'
  | 'tool_call_limit_reached'
  | 'duration_limit_reached';

export interface ToolCallRecord {
  readonly callId: string;
  readonly name: string;
  readonly arguments: string;
  readonly status: 'success' | 'failure';
  readonly output: string;
}

export interface TurnResult {
  readonly sessionId: string;
  readonly stopReason: StopReason;
  /** The assistant text of the whole turn, all rounds joined. */
  readonly text: string;
  /** Usage of this turn (all rounds). */
  readonly usage: Usage;
  readonly modelCalls: number;
  readonly toolCalls: readonly ToolCallRecord[];
  readonly retries: number;
  /** Set when the turn stopped on an error (`failed`). */
  readonly error?: { readonly message: string; readonly kind?: ProviderErrorKind; readonly status?: number };
  /** Whether a call was denied by the operator policy (exit code 4 in `crystal run`). */
  readonly denied: boolean;
  /** REL-3: set when the turn could not be saved (it stays in memory for the next save). */
  readonly saveError?: { readonly path: string; readonly message: string };
}

export type EngineEvent =
  | { readonly type: 'turn-started'; readonly text: string }
  /** A queued follow-up joined the running turn after a tool batch (QUEUE-3). */
  | { readonly type: 'follow-up-sent'; readonly text: string }
  /** A model round begins (`attempt` counts retries of the same round from 0). */
  | { readonly type: 'round-started'; readonly round: number; readonly attempt: number }
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'reasoning-delta'; readonly text: string }
  | { readonly type: 'tool-call-delta'; readonly index: number; readonly name?: string; readonly argumentsDelta: string }
  /** RETRY-5: the live text and reasoning of the failed attempt are void; surfaces drop them. */
  | { readonly type: 'attempt-discarded'; readonly round: number }
  /** RETRY-4: a retry waits `delayMs` (until `dueAt`, epoch ms); `message` is the operator message. */
  | {
      readonly type: 'retry-scheduled';
      readonly attempt: number;
      readonly delayMs: number;
      readonly dueAt: number;
      readonly reason: ProviderErrorKind;
      readonly message: string;
    }
  | { readonly type: 'tool-calls'; readonly calls: readonly ParsedToolCall[] }
  | { readonly type: 'tool-results'; readonly results: readonly ToolResultPart[] }
  | { readonly type: 'round-closed'; readonly round: number; readonly finish: string; readonly usage?: Usage }
  | { readonly type: 'usage'; readonly turn: Usage; readonly session: Usage }
  | { readonly type: 'note'; readonly text: string }
  | { readonly type: 'error'; readonly message: string; readonly kind?: ProviderErrorKind }
  | { readonly type: 'turn-finished'; readonly result: TurnResult }
  /** Compaction runs (COMPACT-1..5); surfaces show `Compacting` until it finishes. */
  | { readonly type: 'compaction-started'; readonly forced: boolean }
  | {
      readonly type: 'compaction-finished';
      readonly outcome: 'applied' | 'unchanged' | 'exhausted' | 'interrupted';
      readonly summary?: string;
      readonly skipped?: string;
      readonly error?: string;
    }
  | { readonly type: 'session-saved'; readonly path: string }
  /** CKPT-3: a rewind happened / the `/rewind` list, for a surface's picker. */
  | import('./checkpoints/checkpoints.js').CheckpointEvent
  /** AGENT-4: a child agent started, published one of its own events, or finished. */
  | import('./agents/events.js').AgentEvent;

export type EngineListener = (event: EngineEvent) => void;
