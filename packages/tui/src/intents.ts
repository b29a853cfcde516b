/** What the terminal reports to its host: input as intents, never engine calls. */
import type { ComposerSpan } from './composer.js';
import type { ApprovalChoice } from './view-model.js';

/** What Ctrl+C did, as the host decided it (QUEUE-12, QUEUE-13). */
export type CtrlCResult = 'interrupted' | 'clear-composer' | 'exit-armed' | 'exit';

/** An attached clipboard image, or the operator error to show on the status line (CLIP-6). */
export type PasteImageResult = { readonly number: number } | { readonly error: string };

export interface Intents {
  /** Enter: the composer text with its attached marker spans (`text` may be empty: QUEUE-4/5). */
  submit(text: string, spans: readonly ComposerSpan[]): void;
  ctrlC(composerEmpty: boolean): CtrlCResult;
  /** Esc (TUIX-1): interrupts a running turn, keeping the queue; false when there is nothing to stop. */
  interrupt?(): boolean;
  /** Esc Esc (CKPT-3): the host opens the rewind picker; false when it has none (checkpoints off). */
  rewind?(): boolean;
  /** The user messages of this conversation, oldest first (Esc Esc without checkpoints: edit and send again). */
  userMessages?(): readonly string[];
  /** `@` + Tab (TUIX-5): workspace paths matching the query, best first. */
  completePath?(query: string): Promise<readonly string[]>;
  togglePlan(): void;
  /** `feedback` goes with a denial: the model reads it in the tool result (TUIX-12). */
  answerApproval(id: number, answer: ApprovalChoice, feedback?: string): void;
  /** One list of chosen labels or typed text per question, or dismissed. */
  answerQuestion(id: number, answers: readonly (readonly string[])[] | 'dismissed'): void;
  /** Ctrl+V: reserve a number, read the clipboard, attach (the next keys wait for it: IMG-21). */
  pasteImage(): Promise<PasteImageResult>;
  /** BTW-10. */
  cancelSide(): void;
  /** BTW-9 `x`. */
  clearSideThread(): void;
  /** The attached images still in the composer changed (IMG-7: the host discards deleted drafts). */
  imagesChanged?(numbers: readonly number[]): void;
  /** The history entry to remember (text-only submissions). */
  remember?(text: string): void;
}
