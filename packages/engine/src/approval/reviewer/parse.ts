/**
 * Reading the reviewer's reply (REV-1, reference §6.4): the first `{` to the last `}` is parsed
 * as JSON; field aliases outcome/decision, risk_level/risk,
 * user_authorization/authorization/authority, rationale/reason; `ask_user` is `ask`. Anything
 * unusable is an ask with `The approval reviewer did not return a usable assessment.`
 *
 * Beyond the reference, an allow is held to the outcome rule on the host's side: it needs a
 * risk and an authorisation that permit it, with the host classification as the lower bound of
 * the risk, and aliases that disagree void the reply. A reply that quotes the model's own
 * `{"outcome":"allow"}` besides its verdict has two objects and does not parse: it asks.
 */
import type { Classification } from '../classifier.js';

export type ReviewOutcome = 'allow' | 'deny' | 'ask';
export type Level = 'low' | 'medium' | 'high';

export interface Assessment {
  readonly outcome: ReviewOutcome;
  readonly risk?: Level;
  readonly authorization?: Level;
  readonly rationale: string;
}

export const UNUSABLE_TEXT = 'The approval reviewer did not return a usable assessment.';

const LEVELS: readonly Level[] = ['low', 'medium', 'high'];
const RANK: Readonly<Record<Level, number>> = { low: 0, medium: 1, high: 2 };

function field(value: Record<string, unknown>, names: readonly string[]): { value?: string; conflict: boolean } {
  const found: string[] = [];
  for (const name of names) {
    const v = value[name];
    if (typeof v === 'string' && v.trim() !== '') found.push(v.trim().toLowerCase());
  }
  const distinct = [...new Set(found)];
  return distinct.length > 1
    ? { conflict: true }
    : { ...(distinct[0] !== undefined ? { value: distinct[0] } : {}), conflict: false };
}

/** The assessment in a reply, or undefined when the reply holds none that can be used. */
export function parseAssessment(reply: string): Assessment | undefined {
  const start = reply.indexOf('{');
  const end = reply.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(reply.slice(start, end + 1));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const object = value as Record<string, unknown>;
  const outcome = field(object, ['outcome', 'decision']);
  const risk = field(object, ['risk_level', 'risk']);
  const authorization = field(object, ['user_authorization', 'authorization', 'authority']);
  if (outcome.conflict || risk.conflict || authorization.conflict) return undefined;
  const word = outcome.value === 'ask_user' ? 'ask' : outcome.value;
  if (word !== 'allow' && word !== 'deny' && word !== 'ask') return undefined;
  const level = (v: string | undefined): Level | undefined => (LEVELS.includes(v as Level) ? (v as Level) : undefined);
  const rationaleValue = typeof object.rationale === 'string' ? object.rationale : object.reason;
  const rationale = typeof rationaleValue === 'string' ? rationaleValue.trim() : '';
  const riskLevel = level(risk.value);
  const authLevel = level(authorization.value);
  return {
    outcome: word,
    ...(riskLevel ? { risk: riskLevel } : {}),
    ...(authLevel ? { authorization: authLevel } : {}),
    rationale,
  };
}

/** The least risk the host classification allows the reviewer to state. */
export function hostRiskFloor(classification: Classification): Level {
  if (classification.risk === 'forbidden' || classification.risk === 'privileged') return 'high';
  if (classification.authority !== 'workspace' || classification.protected !== undefined) return 'medium';
  return 'low';
}

/**
 * Whether an allow follows the outcome rule: low risk with at least medium authorisation,
 * medium risk with high authorisation, or high risk with high authorisation (explicitly asked
 * for); the risk is never below the host's floor.
 */
export function allowFollowsRule(assessment: Assessment, classification: Classification): boolean {
  if (assessment.outcome !== 'allow' || !assessment.risk || !assessment.authorization) return false;
  const floor = hostRiskFloor(classification);
  const risk = RANK[assessment.risk] >= RANK[floor] ? assessment.risk : floor;
  const auth = RANK[assessment.authorization];
  if (risk === 'low') return auth >= RANK.medium;
  return auth >= RANK.high;
}
