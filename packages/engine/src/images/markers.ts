/**
 * `[Image #N]` markers and their provenance prefix (IMG-1..IMG-7).
 *
 * The prefix is one invisible character, U+2063 INVISIBLE SEPARATOR, written right before an
 * attached marker: `\u2063[Image #3]`. It is the reference's own choice (§7), so sessions stay
 * readable both ways; it is invisible in terminals and browsers, has no case or width, and
 * ordinary typing never produces it. Only the engine writes it, and only on spans a frontend
 * reports as attached (IMG-4); every other text that enters the transcript (typed or pasted
 * text, tool output, model output) goes through `stripMarkerPrefix` first, so a look-alike,
 * even one carrying the invisible character, stays plain text (IMG-3).
 *
 * Only tagged markers in user messages and tool results become typed image parts (IMG-1,
 * WIRE-5); the marker label stays beside its image so the model can refer to it by number.
 * Display and text-only requests strip the prefix (IMG-5).
 */
import type { ChatMessage, ContentPart, ImagePart, TextPart, ToolResultContent } from '@crystal/core';
import { UsageError } from '../errors.js';

export const MARKER_PREFIX = '\u2063';

const TAGGED = /\u2063\[Image #([1-9][0-9]*)\]/g;
const PLAIN = /\[Image #([1-9][0-9]*)\]/g;
const PREFIX_BEFORE_MARKER = /\u2063+(?=\[Image #[0-9]+\])/g;

/** `[Image #N]`: the visible label (display, persistence). */
export function imageMarker(number: number): string {
  return `[Image #${number}]`;
}

/** `\u2063[Image #N]`: an attached marker as the transcript stores it. */
export function taggedMarker(number: number): string {
  return MARKER_PREFIX + imageMarker(number);
}

/** Removes the provenance prefix: for display, text-only requests (IMG-5), and any untrusted text entering the transcript. */
export function stripMarkerPrefix(text: string): string {
  return text.includes(MARKER_PREFIX) ? text.replace(PREFIX_BEFORE_MARKER, '') : text;
}

/** Where a frontend's attached span starts in its composer text, and the image number it holds. */
export interface MarkerSpan {
  readonly start: number;
  readonly number: number;
}

/**
 * The submitted text (IMG-4): every span the composer reports as attached gets the prefix;
 * any prefix already in the text is removed first, so typed or pasted look-alikes stay plain.
 * Throws when a span does not point at `[Image #N]` with its own number (a frontend bug).
 */
export function tagAttachedSpans(text: string, spans: readonly MarkerSpan[]): string {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const span of sorted) {
    const label = imageMarker(span.number);
    if (span.start < at || text.slice(span.start, span.start + label.length) !== label) {
      throw new Error(`Attached span at offset ${span.start} does not hold ${label} (or overlaps another span).`);
    }
    out += stripMarkerPrefix(text.slice(at, span.start)).replace(/\u2063+$/, '') + taggedMarker(span.number);
    at = span.start + label.length;
  }
  return out + stripMarkerPrefix(text.slice(at));
}

/** The image numbers of the tagged markers in `text`, in order of appearance (repeats kept). */
export function taggedMarkerNumbers(text: string): number[] {
  return [...text.matchAll(TAGGED)].map((m) => Number(m[1]));
}

/**
 * IMG-12: the image numbers a transcript refers to (tagged markers in user and tool-result
 * text). Only these images are persisted; pass the archive and the model context.
 */
export function referencedImageNumbers(...transcripts: readonly (readonly ChatMessage[])[]): Set<number> {
  const numbers = new Set<number>();
  const scan = (text: string): void => {
    for (const n of taggedMarkerNumbers(text)) numbers.add(n);
  };
  for (const messages of transcripts) {
    for (const message of messages) {
      if (message.role !== 'user' && message.role !== 'tool') continue;
      for (const part of message.content) {
        if (part.type === 'text') scan(part.text);
        else if (part.type === 'tool-result') for (const c of part.content) if (c.type === 'text') scan(c.text);
      }
    }
  }
  return numbers;
}

/**
 * IMG-7: the unsent images whose markers are gone from the composer. `taggedText` is the
 * composer text after `tagAttachedSpans` (so a typed look-alike keeps nothing alive);
 * `drafts` are the numbers attached but not yet sent.
 */
export function deletedDrafts(taggedText: string, drafts: Iterable<number>): number[] {
  const present = new Set(taggedMarkerNumbers(taggedText));
  return [...drafts].filter((n) => !present.has(n));
}

/**
 * IMG-6: an older session (no `imageMarkersTagged`) wrote plain markers. Those naming one of
 * its saved images were attachments, so they get the prefix; other numbers stay plain text.
 */
export function tagLegacyMarkers(text: string, savedNumbers: ReadonlySet<number>): string {
  return text.replace(PLAIN, (marker: string, digits: string, offset: number) =>
    savedNumbers.has(Number(digits)) && text[offset - 1] !== MARKER_PREFIX ? MARKER_PREFIX + marker : marker,
  );
}

/** IMG-6 for one transcript message: user text and tool-result text only (where images come from). */
export function tagLegacyMessage(message: ChatMessage, savedNumbers: ReadonlySet<number>): ChatMessage {
  if (message.role !== 'user' && message.role !== 'tool') return message;
  const tag = <P extends ContentPart>(part: P): P =>
    part.type === 'text' ? ({ ...part, text: tagLegacyMarkers(part.text, savedNumbers) } as P) : part;
  return {
    ...message,
    content: message.content.map((part) =>
      part.type === 'tool-result' ? { ...part, content: part.content.map(tag) } : tag(part),
    ),
  };
}

/** The images a projection may use, by marker number: bytes (`data`, base64) + MIME, or an absolute `uri`. */
export type MarkerImages = ReadonlyMap<number, Omit<ImagePart, 'type'>>;

/**
 * IMG-1: text with tagged markers → text and typed image parts, in marker order. Each image
 * follows its (unprefixed) label. A marker whose image is not in `images` (unavailable media,
 * IMG-13) stays as its label only.
 */
export function projectMessage(text: string, images: MarkerImages): (TextPart | ImagePart)[] {
  const parts: (TextPart | ImagePart)[] = [];
  let pending = '';
  let at = 0;
  for (const match of text.matchAll(TAGGED)) {
    const number = Number(match[1]);
    pending += stripMarkerPrefix(text.slice(at, match.index)) + imageMarker(number);
    at = match.index + match[0].length;
    const image = images.get(number);
    if (!image) continue;
    parts.push({ type: 'text', text: pending }, { type: 'image', ...image });
    pending = '';
  }
  pending += stripMarkerPrefix(text.slice(at));
  if (pending !== '' || parts.length === 0) parts.push({ type: 'text', text: pending });
  return parts;
}

/**
 * A request's messages. With `images` (an image-capable model, MODEL-1): user text and
 * tool-result text are projected (IMG-1, WIRE-5); assistant and system text are only stripped.
 * Without (`undefined`, a text-only request): every prefix is stripped and image parts are
 * left out (IMG-5).
 */
export function projectMessages(messages: readonly ChatMessage[], images: MarkerImages | undefined): ChatMessage[] {
  return messages.map((message) => {
    const imagesHere = message.role === 'user' || message.role === 'tool' ? images : undefined;
    const content: ContentPart[] = [];
    for (const part of message.content) {
      if (part.type === 'tool-result') content.push({ ...part, content: projectParts(part.content, imagesHere) });
      else if (part.type === 'text' || part.type === 'image') content.push(...projectParts([part], imagesHere));
      else content.push(part);
    }
    return { ...message, content };
  });
}

function projectParts(parts: readonly ToolResultContent[], images: MarkerImages | undefined): ToolResultContent[] {
  const out: ToolResultContent[] = [];
  for (const part of parts) {
    if (part.type === 'image') {
      if (images) out.push(part);
    } else if (images) {
      out.push(...projectMessage(part.text, images));
    } else {
      out.push({ type: 'text', text: stripMarkerPrefix(part.text) });
    }
  }
  return out;
}

/** The selected model as MODEL-1 needs it. */
export interface ImageInputModel {
  readonly provider: string;
  readonly model: string;
  readonly imageInput: boolean;
}

/**
 * MODEL-1: a message with attached images is refused before any request when the selected
 * model has not opted in with `imageInput: true`. Throws `UsageError`.
 */
export function requireImageInput(taggedText: string, model: ImageInputModel): void {
  if (model.imageInput) return;
  const numbers = [...new Set(taggedMarkerNumbers(taggedText))];
  if (numbers.length === 0) return;
  throw new UsageError(
    `The model ${model.provider}/${model.model} does not accept images (its catalog entry has no "imageInput": true). ` +
      `Remove ${numbers.map(imageMarker).join(', ')} or pick an image-capable model with /model.`,
  );
}
