/**
 * The input registry (WEB-11): the kinds of input the conversation takes from the page, what
 * each may hold, and the parser that turns a manifest into one of them. A message carries text
 * and an ordered image batch; an approval or a question answers a prompt the engine raised.
 */
import { type ApprovalAnswer, IMAGE_MIMES, type ImageLimits } from '@crystal/engine';

export type InputKind = 'message' | 'approval' | 'question' | 'plan' | 'queue';

/** One image of a message as the manifest lists it; its bytes follow the manifest. */
export interface ImageEntry {
  readonly name: string | undefined;
  readonly type: string | undefined;
  readonly size: number;
}

export type ConversationInput =
  | { readonly kind: 'message'; readonly text: string; readonly images: readonly ImageEntry[] }
  | { readonly kind: 'approval'; readonly id: number; readonly answer: ApprovalAnswer; readonly feedback?: string }
  | { readonly kind: 'question'; readonly id: number; readonly answers: readonly (readonly string[])[] | 'dismissed' }
  /** The Plan/Work toggle (the terminal's Shift+Tab). */
  | { readonly kind: 'plan'; readonly mode: 'plan' | 'work' }
  /** The queue panel: take a waiting item out, or change a waiting message's text. */
  | { readonly kind: 'queue'; readonly id: number; readonly action: 'remove' }
  | { readonly kind: 'queue'; readonly id: number; readonly action: 'edit'; readonly text: string };

/** What the page reads at start-up: the accepted kinds and the bounds a message must keep. */
export interface InputRegistry {
  readonly kinds: readonly InputKind[];
  readonly message: {
    readonly maxTextChars: number;
    /** Declared types the browser may preview (WEB-2); anything else is refused before a preview exists. */
    readonly imageTypes: readonly string[];
    readonly limits: ImageLimits;
    /** Whether the session's model takes images (MODEL-1). */
    readonly imageInput: boolean;
  };
  readonly approvalAnswers: readonly ApprovalAnswer[];
}

export const MAX_TEXT_CHARS = 200_000;
/** A denial's feedback (TUIX-12): a sentence or two for the model, not a second message. */
export const MAX_FEEDBACK_CHARS = 4_000;
const MAX_NAME_CHARS = 200;
const ANSWERS: readonly ApprovalAnswer[] = ['once', 'session', 'always', 'deny'];

export function inputRegistry(limits: ImageLimits, imageInput: boolean): InputRegistry {
  return {
    kinds: ['message', 'approval', 'question', 'plan', 'queue'],
    message: { maxTextChars: MAX_TEXT_CHARS, imageTypes: IMAGE_MIMES, limits, imageInput },
    approvalAnswers: ANSWERS,
  };
}

export class InputError extends Error {
  override readonly name = 'InputError';
}

export interface ScopedInput {
  readonly scope: string;
  readonly input: ConversationInput;
}

/** Parses `{ scope, input }`; every refusal says which field is wrong. */
export function parseScopedInput(manifest: unknown): ScopedInput {
  const root = record(manifest, 'the manifest');
  if (typeof root.scope !== 'string' || root.scope === '') throw new InputError('scope must name the session the page shows.');
  const input = record(root.input, 'input');
  switch (input.kind) {
    case 'message':
      return { scope: root.scope, input: parseMessage(input) };
    case 'approval': {
      const answer = input.answer as ApprovalAnswer;
      if (!ANSWERS.includes(answer)) throw new InputError(`input.answer must be one of ${ANSWERS.join(', ')}.`);
      const feedback = input.feedback;
      if (feedback === undefined) return { scope: root.scope, input: { kind: 'approval', id: promptId(input.id), answer } };
      if (typeof feedback !== 'string') throw new InputError('input.feedback must be a string.');
      if (answer !== 'deny') throw new InputError('input.feedback goes only with answer deny.');
      if (feedback.length > MAX_FEEDBACK_CHARS) {
        throw new InputError(`input.feedback has ${feedback.length} characters; at most ${MAX_FEEDBACK_CHARS}.`);
      }
      return { scope: root.scope, input: { kind: 'approval', id: promptId(input.id), answer, feedback } };
    }
    case 'question': {
      const answers = input.answers;
      if (answers === 'dismissed') return { scope: root.scope, input: { kind: 'question', id: promptId(input.id), answers } };
      if (!Array.isArray(answers) || !answers.every((a) => Array.isArray(a) && a.every((s) => typeof s === 'string'))) {
        throw new InputError("input.answers must be a list of string lists (one per question), or 'dismissed'.");
      }
      return { scope: root.scope, input: { kind: 'question', id: promptId(input.id), answers: answers as string[][] } };
    }
    case 'plan':
      if (input.mode !== 'plan' && input.mode !== 'work') throw new InputError('input.mode must be plan or work.');
      return { scope: root.scope, input: { kind: 'plan', mode: input.mode } };
    case 'queue': {
      const id = promptId(input.id);
      if (input.action === 'remove') return { scope: root.scope, input: { kind: 'queue', id, action: 'remove' } };
      if (input.action !== 'edit') throw new InputError('input.action must be remove or edit.');
      if (typeof input.text !== 'string' || input.text.trim() === '') throw new InputError('input.text must be the new text.');
      if (input.text.length > MAX_TEXT_CHARS) throw new InputError(`input.text has more than ${MAX_TEXT_CHARS} characters.`);
      return { scope: root.scope, input: { kind: 'queue', id, action: 'edit', text: input.text } };
    }
    default:
      throw new InputError(`input.kind must be message, approval, question, plan or queue, not ${JSON.stringify(input.kind)}.`);
  }
}

function parseMessage(input: Record<string, unknown>): ConversationInput {
  const text = input.text ?? '';
  if (typeof text !== 'string') throw new InputError('input.text must be a string.');
  if (text.length > MAX_TEXT_CHARS)
    throw new InputError(`The message text has ${text.length} characters; at most ${MAX_TEXT_CHARS}.`);
  const list = input.images ?? [];
  if (!Array.isArray(list)) throw new InputError('input.images must be a list.');
  const images = list.map((raw, i): ImageEntry => {
    const entry = record(raw, `input.images[${i}]`);
    const size = entry.size;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      throw new InputError(`Image ${i + 1}: size must be a byte count.`);
    }
    return { name: displayName(entry.name), type: typeof entry.type === 'string' && entry.type ? entry.type : undefined, size };
  });
  return { kind: 'message', text, images };
}

/** A file name fit to show (WEB-8): controls and bidi marks removed, at most 200 characters. */
export function displayName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const clean = value
    .replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2060-\u2069\u2028\u2029\ufeff]/g, '')
    .trim();
  if (clean === '') return undefined;
  return clean.length > MAX_NAME_CHARS ? `${clean.slice(0, MAX_NAME_CHARS - 1)}…` : clean;
}

function promptId(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new InputError('input.id must be a prompt or queue item number.');
  return value;
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError(`${what} must be an object.`);
  return value as Record<string, unknown>;
}
