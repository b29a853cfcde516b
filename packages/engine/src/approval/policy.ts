/**
 * The approval policy (APPR-1, APPR-2, CORE-5): a `ToolInvocationPolicy` handed to core's
 * `ToolExecutor`, deciding in the order of §6.2:
 *   1. Plan rejects `edit`, `write` and `bash`;
 *   2. auto-pass by mode for workspace-bounded, non-privileged calls;
 *   3. a Session or Always grant passes;
 *   4. in Review and Audit, the reviewer model (REV-1, `reviewer/`): deny is a model-visible
 *      rejection, allow passes unless Forbidden or protected, ask (and every failure) falls through;
 *   5. ask the operator: Once / Session / Always / Deny. Without an operator (`crystal run`)
 *      the ask is a deny. A Forbidden call is only ever granted Once.
 * A denial is returned as a reason; core writes the model-visible result, never the tool.
 */
import { resolve } from 'node:path';
import type { ParsedToolCall, PolicyDecision, ToolInvocationPolicy } from '@crystal/core';
import { changePreview } from '../change-preview.js';
import { type ApprovalCard, type AutoPassCard, buildCard, escapeCardText, reviewCardFields } from './card.js';
import { type Classification, type ExternalToolFacts, classify, type ToolClassifier } from './classifier.js';
import { grantScopeText } from './grant-scope.js';
import { GrantStore, grantFor, NETWORK_ASK_TOOL } from './grants.js';
import { type Reviewer, type ReviewVerdict, reviewerDeniedText } from './reviewer/reviewer.js';
import { approvedNetwork, type SandboxFacts, sandboxContains } from './sandbox-rule.js';

import { type ApprovalMode, APPROVAL_MODES, parseApprovalMode } from './modes.js';

export { type ApprovalMode, APPROVAL_MODES, parseApprovalMode };

export type ApprovalAnswer = 'once' | 'session' | 'always' | 'deny';
/** TUIX-12: a denial that tells the model what to do instead (the text reaches it in the tool result). */
export interface DenyWithFeedback {
  readonly answer: 'deny';
  readonly feedback: string;
}
export type ApprovalReply = ApprovalAnswer | DenyWithFeedback;
export const ALL_ANSWERS: readonly ApprovalAnswer[] = ['once', 'session', 'always', 'deny'];
/** A Forbidden call is only ever granted Once. */
export const FORBIDDEN_ANSWERS: readonly ApprovalAnswer[] = ['once', 'deny'];

export const DECLINED_TEXT = 'The user declined this action. Do not retry the same call. Change the approach or ask the user.';
export const CANCELLED_TEXT = 'The turn was cancelled before the operator answered.';
/** Tools Plan never runs, whatever the catalog offers. */
export const PLAN_REJECTED_TOOLS: ReadonlySet<string> = new Set(['edit', 'write', 'bash']);

/** The model-visible result of a denial with the operator's instruction. */
export function declinedWithFeedbackText(feedback: string): string {
  return `The user declined this action and said what to do instead:\n${feedback.trim()}\nDo not retry the same call; follow the user's instruction.`;
}

export function planRejectionText(tool: string): string {
  return `Plan mode does not allow ${tool}.`;
}

/** What the operator is asked about: the call, its classification and the card to show. */
export interface ApprovalRequest {
  readonly call: ParsedToolCall;
  readonly classification: Classification;
  readonly card: ApprovalCard;
  /** The answers to offer: all four, or Once and Deny for a Forbidden call. */
  readonly choices: readonly ApprovalAnswer[];
  /** Aborted when the turn is cancelled; the surface closes its overlay. */
  readonly signal: AbortSignal;
}

/** How a call was decided, for the session's record (a denied ask makes `crystal run` exit 4). */
export interface ApprovalOutcome {
  readonly call: ParsedToolCall;
  readonly classification?: Classification;
  readonly allowed: boolean;
  readonly by:
    | 'plan'
    | 'policy'
    | 'grant'
    | 'review'
    | 'review-deny'
    | 'once'
    | 'session'
    | 'always'
    | 'deny'
    | 'unattended'
    | 'cancelled';
  /** The reviewer's verdict, when it was asked (REV-1). */
  readonly review?: ReviewVerdict;
  /** The operator's instruction with a denial (TUIX-12). */
  readonly feedback?: string;
}

export interface ApprovalPolicyOptions {
  readonly mode: ApprovalMode;
  /** Whether the session is in Plan (a catalog, not an approval mode). */
  readonly plan: () => boolean;
  /** The workspace root; a function when `/cd` can change it. */
  readonly workspace: string | (() => string);
  readonly home: string;
  /** Asks the operator. Omitted (as in `crystal run`): every ask is a deny. */
  readonly ask?: (request: ApprovalRequest) => Promise<ApprovalReply>;
  /** A call passed without asking (policy or grant): the auto-pass card. */
  readonly onAutoPass?: (card: AutoPassCard) => void;
  readonly onDecided?: (outcome: ApprovalOutcome) => void;
  /** Operator notes, e.g. an Always grant that could not be saved. */
  readonly onNote?: (text: string) => void;
  /** Facts about external tools (path arguments, author `always`). */
  readonly externalTool?: (name: string) => ExternalToolFacts | undefined;
  /** Skill search trees when skills are on. */
  readonly skillRoots?: () => readonly string[];
  /** Plugin classifiers for tools the host does not know. */
  readonly classifiers?: readonly ToolClassifier[];
  /** The OS sandbox (SBX-3): which calls it covers, the card line, network grants. */
  readonly sandbox?: SandboxFacts;
  /** The reviewer model of Review and Audit (REV-1); without one those modes ask like Edit and Default. */
  readonly reviewer?: Reviewer;
}

export interface ApprovalPolicy extends ToolInvocationPolicy {
  readonly mode: ApprovalMode;
  /**
   * The final path the last allowed decision for `callId` was made on (SEC-4), handed out once:
   * the tool opens that path and no other.
   */
  checkedPath(callId: string): string | undefined;
  setMode(mode: ApprovalMode): void;
  classify(call: ParsedToolCall): Classification;
  /**
   * A sandboxed command wants a host not on the allow list (SBX-1): a Session or Always grant
   * passes, otherwise the operator is asked (a Network card); without an operator it is refused.
   */
  askHost(host: string, signal: AbortSignal): Promise<boolean>;
}

/** Creates the policy; throws `ConfigError` when `permissions.json` is corrupt (it is never overwritten). */
export function createApprovalPolicy(options: ApprovalPolicyOptions): ApprovalPolicy {
  let mode = options.mode;
  let hostAsks = 0;
  const grants = new GrantStore(options.home);
  const workspace = (): string => resolve(typeof options.workspace === 'function' ? options.workspace() : options.workspace);
  const classifyCall = (call: ParsedToolCall): Classification =>
    classify(call, {
      workspace: workspace(),
      home: options.home,
      ...(options.externalTool ? { externalTool: options.externalTool } : {}),
      ...(options.skillRoots ? { skillRoots: options.skillRoots() } : {}),
      ...(options.classifiers ? { classifiers: options.classifiers } : {}),
    });

  const sandboxed = (call: ParsedToolCall): boolean => options.sandbox?.covers(call.name) ?? false;
  const cardOf = (call: ParsedToolCall, classification: Classification): ApprovalCard =>
    buildCard(call, classification, options.sandbox?.cardLine(call.name));
  const checked = new Map<string, string>();
  const decided = (outcome: ApprovalOutcome): PolicyDecision => {
    options.onDecided?.(outcome);
    const { call, classification } = outcome;
    if (outcome.allowed && classification && outcome.by !== 'policy' && approvedNetwork(classification, sandboxed(call))) {
      options.sandbox?.grantNetwork(call.id);
    }
    const target = classification?.target;
    if (outcome.allowed && target !== undefined) checked.set(call.id, target);
    else checked.delete(call.id);
    if (outcome.allowed) return { allow: true };
    if (outcome.by === 'plan') return { allow: false, reason: planRejectionText(outcome.call.name) };
    if (outcome.by === 'cancelled') return { allow: false, reason: CANCELLED_TEXT };
    if (outcome.by === 'review-deny')
      return { allow: false, reason: reviewerDeniedText(outcome.review?.rationale ?? ''), by: 'reviewer' };
    if (outcome.feedback) return { allow: false, reason: declinedWithFeedbackText(outcome.feedback) };
    return { allow: false, reason: DECLINED_TEXT };
  };
  const autoPass = (
    call: ParsedToolCall,
    classification: Classification,
    reason: 'Policy' | 'Grant' | 'Review',
    review?: ReviewVerdict,
  ): PolicyDecision => {
    options.onAutoPass?.({
      ...cardOf(call, classification),
      status: 'Approved',
      reason,
      ...(review ? { review: reviewCardFields(review) } : {}),
    });
    const by = reason === 'Policy' ? 'policy' : reason === 'Grant' ? 'grant' : 'review';
    return decided({ call, classification, allowed: true, by, ...(review ? { review } : {}) });
  };

  const askOperator = async (
    call: ParsedToolCall,
    classification: Classification,
    signal: AbortSignal,
    review?: ReviewVerdict,
  ): Promise<PolicyDecision> => {
    if (!options.ask) {
      if (review?.failure) options.onNote?.(review.failure);
      return decided({ call, classification, allowed: false, by: 'unattended', ...(review ? { review } : {}) });
    }
    // A Forbidden call or a protected path (SEC-2, SEC-3) is only ever granted Once.
    const forbidden = classification.risk === 'forbidden' || classification.protected !== undefined;
    const preview = await changePreview(workspace(), call.name, call.input).catch(() => undefined);
    const request: ApprovalRequest = {
      call,
      classification,
      card: {
        ...cardOf(call, classification),
        // TUIX-10: edit/write show the real hunks of the file as it is now.
        ...(preview ? { preview: preview.map(escapeCardText) } : {}),
        ...(forbidden ? {} : { grantScope: grantScopeText(call) }),
        // §6.2 step 5: the pending review verdict is shown.
        ...(review ? { review: reviewCardFields(review) } : {}),
      },
      choices: forbidden ? FORBIDDEN_ANSWERS : ALL_ANSWERS,
      signal,
    };
    const reply = await answerOf(options.ask, request, signal, options.onNote);
    if (typeof reply === 'object') return decided({ call, classification, allowed: false, by: 'deny', feedback: reply.feedback });
    const answer = reply;
    if (answer === 'cancelled') return decided({ call, classification, allowed: false, by: 'cancelled' });
    if (answer === 'deny') return decided({ call, classification, allowed: false, by: 'deny' });
    // A Forbidden call is only ever granted Once: Session and Always count as Once.
    if (forbidden || answer === 'once') return decided({ call, classification, allowed: true, by: 'once' });
    const grant = grantFor(workspace(), call);
    if (answer === 'session') grants.addSession(grant);
    else {
      try {
        await grants.addPersistent(grant);
      } catch (error) {
        options.onNote?.(
          `The Always grant for ${call.name} could not be saved to ${grants.file} (${(error as Error).message}); it holds for this session only.`,
        );
      }
    }
    return decided({ call, classification, allowed: true, by: answer });
  };

  return {
    get mode() {
      return mode;
    },
    setMode(next: ApprovalMode) {
      mode = next;
    },
    classify: classifyCall,
    async askHost(host: string, signal: AbortSignal): Promise<boolean> {
      hostAsks += 1;
      const call: ParsedToolCall = {
        id: `sandbox-network-${hostAsks}`,
        name: NETWORK_ASK_TOOL,
        arguments: host,
        input: { host },
      };
      const classification: Classification = {
        risk: 'write',
        authority: 'network',
        summary: `Network access to ${host} from a sandboxed command`,
      };
      if (grants.matches(grantFor(workspace(), call))) return true;
      return (await askOperator(call, classification, signal)).allow;
    },
    checkedPath(callId: string): string | undefined {
      const path = checked.get(callId);
      checked.delete(callId);
      return path;
    },
    async decide(call: ParsedToolCall, signal: AbortSignal): Promise<PolicyDecision> {
      // 1. Plan offers no edit, write or bash, and the policy rejects them as well.
      if (options.plan() && PLAN_REJECTED_TOOLS.has(call.name)) return decided({ call, allowed: false, by: 'plan' });
      // SBX-3: whether the sandbox covers the call is known from here on.
      await options.sandbox?.prepare?.(call.name);
      const classification = classifyCall(call);
      const facts = options.externalTool?.(call.name);
      // 2. Auto-pass by mode.
      if (autoPasses(mode, call.name, classification, facts?.automatic === true, sandboxed(call))) {
        return autoPass(call, classification, 'Policy');
      }
      // 3. Session and Always grants (never for a Forbidden call or a protected path).
      if (
        classification.risk !== 'forbidden' &&
        classification.protected === undefined &&
        grants.matches(grantFor(workspace(), call))
      ) {
        return autoPass(call, classification, 'Grant');
      }
      // 4. Review / Audit: the reviewer judges; deny is a model-visible rejection, allow passes
      //    unless Forbidden or protected, ask and every failure fall through to the operator.
      let review: ReviewVerdict | undefined;
      if ((mode === 'review' || mode === 'audit') && options.reviewer) {
        const card = cardOf(call, classification);
        const verdict = await options.reviewer.review(call, classification, card, signal);
        if (verdict === 'cancelled') return decided({ call, classification, allowed: false, by: 'cancelled' });
        if (verdict !== undefined) {
          review = verdict;
          if (verdict.outcome === 'deny') return decided({ call, classification, allowed: false, by: 'review-deny', review });
          const mayPass = classification.risk !== 'forbidden' && classification.protected === undefined;
          if (verdict.outcome === 'allow' && mayPass) return autoPass(call, classification, 'Review', verdict);
        }
      }
      // 5. Ask the operator (with the pending verdict).
      return askOperator(call, classification, signal, review);
    },
  };
}

/**
 * §6.2 step 2: only workspace-bounded calls that are neither Privileged nor Forbidden, and then
 * when the tool is automatic, the call only reads, or the mode allows the write. With the OS
 * sandbox on, `full` also passes a Privileged command the sandbox contains (SBX-3).
 */
export function autoPasses(
  mode: ApprovalMode,
  tool: string,
  classification: Classification,
  automatic: boolean,
  sandboxed = false,
): boolean {
  // SEC-2: a protected path asks in every mode, whatever an author, the mode or the sandbox says.
  if (classification.protected !== undefined) return false;
  if (sandboxContains(mode, classification, sandboxed)) return true;
  const { risk, authority } = classification;
  if (risk === 'forbidden' || risk === 'privileged' || authority !== 'workspace') return false;
  if (automatic || risk === 'read') return true;
  if (mode === 'full') return true;
  // Review passes workspace write/edit like Edit; Audit has the reviewer judge them too.
  return (mode === 'edit' || mode === 'review') && (tool === 'write' || tool === 'edit');
}

async function answerOf(
  ask: (request: ApprovalRequest) => Promise<ApprovalReply>,
  request: ApprovalRequest,
  signal: AbortSignal,
  onNote: ((text: string) => void) | undefined,
): Promise<ApprovalReply | 'cancelled'> {
  if (signal.aborted) return 'cancelled';
  let onAbort: (() => void) | undefined;
  const cancelled = new Promise<'cancelled'>((resolve) => {
    onAbort = () => resolve('cancelled');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const answer = await Promise.race([ask(request), cancelled]);
    if (answer === 'cancelled') return answer;
    if (typeof answer === 'object')
      return answer.answer === 'deny' && typeof answer.feedback === 'string' && answer.feedback.trim() !== '' ? answer : 'deny';
    return ALL_ANSWERS.includes(answer) ? answer : 'deny';
  } catch (error) {
    // A failing surface must not run the call: the ask counts as a deny.
    onNote?.(`The approval prompt failed (${(error as Error).message}); the call was declined.`);
    return 'deny';
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
