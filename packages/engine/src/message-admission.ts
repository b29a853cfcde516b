/**
 * How a user message enters the transcript, in one place for every surface and every path
 * (the message that starts a turn, a follow-up sent after a tool batch, `crystal run`'s
 * prompt): DESIGN.md "a rule two surfaces need lives in the engine once".
 *
 * 1. IMG-3 / IMG-4: `submittedText` is the only way typed text becomes transcript text. Only
 *    the spans a surface reports as attached get the provenance prefix; any prefix typed or
 *    pasted into the text is removed, so a look-alike marker stays plain text.
 * 2. MODEL-1: a model without image input refuses a message with attached images before any
 *    request carries it.
 * 3. IMG-7: unsent images are discarded only when they are gone from everywhere a message can
 *    still come from: this message, the messages still queued, and the composer.
 * 4. IMG-12: the images the message carries stop being drafts, so the next save persists them.
 */
import {
  type ImageInputModel,
  type MarkerSpan,
  requireImageInput,
  tagAttachedSpans,
  taggedMarker,
  taggedMarkerNumbers,
} from './images/index.js';

/** The registry face admission needs (the session's `ImageRegistry`). */
export interface DraftRegistry {
  discardDeleted(taggedComposerText: string): Promise<number[]>;
  markSent(numbers: Iterable<number>): Promise<void>;
}

/** IMG-3/IMG-4: the transcript text of a typed message and the spans the surface attached. */
export function submittedText(text: string, spans: readonly MarkerSpan[] = []): string {
  return tagAttachedSpans(text, spans);
}

/**
 * Admits one user message (already passed through `submittedText`): throws the MODEL-1
 * refusal (a UsageError naming the images and the fix) before anything changes; otherwise
 * discards the drafts that no longer appear anywhere (IMG-7) and marks the message's images
 * as sent (IMG-12). `stillHeld` are the image numbers the composer and the queue still hold.
 */
export async function admitUserText(
  text: string,
  options: { readonly registry: DraftRegistry; readonly model: ImageInputModel; readonly stillHeld?: Iterable<number> },
): Promise<void> {
  requireImageInput(text, options.model);
  const held = [...(options.stillHeld ?? [])].map(taggedMarker).join(' ');
  await options.registry.discardDeleted(held === '' ? text : `${text} ${held}`);
  await options.registry.markSent(taggedMarkerNumbers(text));
}
