/**
 * The values an approval card shows (APPR-3, §6.5): Title Case risk and authority, the classifier
 * summary, what the call acts on and, for `edit`/`write`, a capped `-`/`+` preview. Every string
 * is safe to print: control and bidi characters are shown escaped (`\xNN`, `\uNNNN`), never
 * dropped. Values only; surfaces decide how a card looks.
 */
import type { ParsedToolCall } from '@crystal/core';
import type { Authority, Classification, Risk } from './classifier.js';

export type RiskLabel = 'Read' | 'Write' | 'Privileged' | 'Forbidden';
export type AuthorityLabel = 'Workspace' | 'Outside Workspace' | 'Network' | 'Privileged Escalation';

export interface ApprovalCard {
  readonly tool: string;
  readonly risk: RiskLabel;
  readonly authority: AuthorityLabel;
  readonly summary: string;
  /** The path, command or arguments the call acts on (escaped, capped). */
  readonly subject: string;
  /** `edit`/`write`: `-` lines of `old_string`, `+` lines of `new_string` or `contents` (escaped, capped). */
  readonly preview?: readonly string[];
  /** SBX-3: for a call that starts a process, whether it runs in the OS sandbox (`Sandboxed: …` / `Not sandboxed: …`). */
  readonly sandbox?: string;
  /** TUIX-12: what a Session or Always answer covers (the tool and the path or command). */
  readonly grantScope?: string;
  /** REV-1: the reviewer's verdict (an ask card shows the pending one; a review allow its outcome). */
  readonly review?: ReviewCardFields;
}

/** The reviewer's assessment as a card shows it (Title Case levels, escaped rationale). */
export interface ReviewCardFields {
  readonly outcome: 'Allow' | 'Deny' | 'Ask';
  readonly risk?: 'Low' | 'Medium' | 'High';
  readonly authorization?: 'Low' | 'Medium' | 'High';
  readonly rationale: string;
}

/** The card of a call that passed without asking (§6.5): by policy, a grant or a review allow. */
export interface AutoPassCard extends ApprovalCard {
  readonly status: 'Approved';
  readonly reason: 'Policy' | 'Grant' | 'Review';
}

const TITLE = { low: 'Low', medium: 'Medium', high: 'High', allow: 'Allow', deny: 'Deny', ask: 'Ask' } as const;

/** A review verdict as card fields; the rationale (or the failure) is escaped and capped. */
export function reviewCardFields(verdict: {
  readonly outcome: 'allow' | 'deny' | 'ask';
  readonly risk?: 'low' | 'medium' | 'high' | undefined;
  readonly authorization?: 'low' | 'medium' | 'high' | undefined;
  readonly rationale: string;
  readonly failure?: string | undefined;
}): ReviewCardFields {
  const rationale = verdict.failure ?? verdict.rationale;
  return {
    outcome: TITLE[verdict.outcome],
    ...(verdict.risk ? { risk: TITLE[verdict.risk] } : {}),
    ...(verdict.authorization ? { authorization: TITLE[verdict.authorization] } : {}),
    rationale: capLine(escapeCardText(rationale)),
  };
}

/**
 * The lines of an auto-pass card (§6.5), compact, for every surface: Status, Reason, Risk and
 * Authority on one line, the classifier summary, and for a review allow its Outcome, review risk
 * and authorisation, then the rationale. Values are already escaped.
 */
export function autoPassCardLines(card: AutoPassCard): string[] {
  const lines = [
    `Status: ${card.status} · Reason: ${card.reason} · Risk: ${card.risk} · Authority: ${card.authority}`,
    `Summary: ${card.summary}`,
  ];
  if (card.review) {
    const levels = [
      `Outcome: ${card.review.outcome}`,
      ...(card.review.risk ? [`Review risk: ${card.review.risk}`] : []),
      ...(card.review.authorization ? [`Authorization: ${card.review.authorization}`] : []),
    ];
    lines.push(levels.join(' · '));
    if (card.review.rationale) lines.push(`Rationale: ${card.review.rationale}`);
  }
  return lines;
}

export const PREVIEW_MAX_LINES = 40;
export const CARD_MAX_LINE_CHARS = 400;

const RISK_LABELS: Readonly<Record<Risk, RiskLabel>> = {
  read: 'Read',
  write: 'Write',
  privileged: 'Privileged',
  forbidden: 'Forbidden',
};
const AUTHORITY_LABELS: Readonly<Record<Authority, AuthorityLabel>> = {
  workspace: 'Workspace',
  outside_workspace: 'Outside Workspace',
  network: 'Network',
  privileged_escalation: 'Privileged Escalation',
};

// C0, DEL and C1 controls; bidi embeddings, overrides, isolates and marks; line/paragraph separators.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** Shows control and bidi characters as `\xNN` / `\uNNNN` text. */
export function escapeCardText(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`
      : `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
  });
}

function capLine(text: string): string {
  return text.length <= CARD_MAX_LINE_CHARS ? text : `${text.slice(0, CARD_MAX_LINE_CHARS)}…`;
}

export function buildCard(call: ParsedToolCall, classification: Classification, sandbox?: string): ApprovalCard {
  const preview = previewOf(call);
  return {
    tool: escapeCardText(call.name),
    risk: RISK_LABELS[classification.risk],
    authority: AUTHORITY_LABELS[classification.authority],
    summary: escapeCardText(classification.summary),
    subject: capLine(escapeCardText(subjectOf(call))),
    ...(preview ? { preview } : {}),
    ...(sandbox ? { sandbox } : {}),
  };
}

function inputOf(call: ParsedToolCall): Record<string, unknown> {
  return call.input !== null && typeof call.input === 'object' ? (call.input as Record<string, unknown>) : {};
}

const PATH_TOOLS = new Set(['read', 'list', 'glob', 'grep', 'write', 'edit', 'view_image', 'describe_image']);

function subjectOf(call: ParsedToolCall): string {
  const input = inputOf(call);
  if (call.name === 'bash' && typeof input.command === 'string') return input.command;
  if (PATH_TOOLS.has(call.name)) return typeof input.path === 'string' ? input.path : '.';
  return call.arguments;
}

/** A capped `-`/`+` preview for `edit` and `write`; undefined for other tools. */
export function previewOf(call: ParsedToolCall): readonly string[] | undefined {
  const input = inputOf(call);
  const lines: string[] = [];
  if (call.name === 'edit') {
    if (typeof input.old_string === 'string') for (const line of input.old_string.split('\n')) lines.push(`-${line}`);
    if (typeof input.new_string === 'string') for (const line of input.new_string.split('\n')) lines.push(`+${line}`);
  } else if (call.name === 'write') {
    if (typeof input.contents === 'string') for (const line of input.contents.split('\n')) lines.push(`+${line}`);
  } else {
    return undefined;
  }
  const shown = lines.slice(0, PREVIEW_MAX_LINES).map((line) => capLine(escapeCardText(line)));
  if (lines.length > PREVIEW_MAX_LINES) shown.push(`… ${lines.length - PREVIEW_MAX_LINES} more lines`);
  return shown;
}
