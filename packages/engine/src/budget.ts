/** `executionBudget` (BUDGET-1..5) → run limits; the schema already refused bad values by field. */
import { DEFAULT_RUN_LIMITS, type RunLimits, UNLIMITED_RUN_LIMITS } from '@crystal/core';
import type { Config } from './config/schema.js';

export function budgetLimitsOf(config: Config): RunLimits {
  const budget = config.executionBudget;
  if (budget === undefined) return DEFAULT_RUN_LIMITS;
  if (budget === 'unlimited') return UNLIMITED_RUN_LIMITS;
  const pick = (value: number | null | undefined, fallback: number | null, scale = 1): number | null =>
    value === undefined ? fallback : value === null ? null : value * scale;
  return {
    maxModelCalls: pick(budget.maximumModelCalls, DEFAULT_RUN_LIMITS.maxModelCalls),
    maxToolCalls: pick(budget.maximumToolCalls, DEFAULT_RUN_LIMITS.maxToolCalls),
    maxDurationMs: pick(budget.maximumDurationSeconds, DEFAULT_RUN_LIMITS.maxDurationMs, 1000),
  };
}
