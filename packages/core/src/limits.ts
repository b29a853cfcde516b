/** Run limits of one turn (the semantics of Crystal `AgentRunLimits`): null means unlimited. */

export interface RunLimits {
  readonly maxModelCalls: number | null;
  readonly maxToolCalls: number | null;
  readonly maxDurationMs: number | null;
}

/** BUDGET-2: 1024 model calls, 8192 tool calls, 7 days. */
export const DEFAULT_RUN_LIMITS: RunLimits = {
  maxModelCalls: 1024,
  maxToolCalls: 8192,
  maxDurationMs: 7 * 24 * 60 * 60 * 1000,
};

export const UNLIMITED_RUN_LIMITS: RunLimits = { maxModelCalls: null, maxToolCalls: null, maxDurationMs: null };

/** Node's timer maximum in seconds (2^31-1 ms). */
export const MAX_TIMER_SECONDS = 2147483;

export type LimitStop = 'model_call_limit_reached' | 'tool_call_limit_reached' | 'duration_limit_reached';

/** Counts calls when attempted and tells whether the next step still fits. */
export class RunBudget {
  modelCalls = 0;
  toolCalls = 0;
  private readonly startedAt: number;

  constructor(
    readonly limits: RunLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
  }

  /** Stop reason if another model call may not start, else null. */
  beforeModelCall(): LimitStop | null {
    if (this.durationExceeded()) return 'duration_limit_reached';
    if (this.limits.maxModelCalls !== null && this.modelCalls >= this.limits.maxModelCalls) {
      return 'model_call_limit_reached';
    }
    return null;
  }

  /** Whether a whole batch of `count` calls fits the remaining tool-call budget (all or nothing). */
  fitsToolBatch(count: number): boolean {
    return this.limits.maxToolCalls === null || this.toolCalls + count <= this.limits.maxToolCalls;
  }

  durationExceeded(): boolean {
    return this.limits.maxDurationMs !== null && this.now() - this.startedAt >= this.limits.maxDurationMs;
  }

  /** Milliseconds left before the duration limit, or null when unlimited. */
  remainingMs(): number | null {
    if (this.limits.maxDurationMs === null) return null;
    return Math.max(0, this.limits.maxDurationMs - (this.now() - this.startedAt));
  }
}
