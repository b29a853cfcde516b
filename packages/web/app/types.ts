/**
 * The shapes the host sends, taken from the host itself (types only: nothing of the host is
 * bundled into the page), so the page and the host cannot drift apart.
 */
import type { HistoryItem, PageState } from '../src/index.js';

export type { HistoryItem, ImageRef, InputRegistry, PageControls, PageEvent, PageState } from '../src/index.js';

export type ApprovalAnswer = PageState['inputs']['approvalAnswers'][number];
export type Activity = PageState['activity'];
export type QueueItem = PageState['queue'][number];
/** AGENT-4: a child agent's card as a reload gets it (the engine's saved-card.ts). */
export type SavedChildCard = NonNullable<Extract<HistoryItem, { kind: 'tool-call' }>['agent']>;
export type ApprovalPrompt = PageState['approvals'][number];
export type QuestionPrompt = PageState['questions'][number];

/** The body of a refused request (see ConversationError in src/conversation.ts). */
export interface Refusal {
  readonly error: string;
  readonly kind?: string;
  readonly position?: number;
  readonly name?: string;
  readonly rule?: string;
  /** The session the host is on now (a 409 for a stale scope). */
  readonly scope?: string;
}
