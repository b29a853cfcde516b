/**
 * The archive as the page shows it (`history`, WEB-11): user text with its attached images by
 * number and display name (WEB-8), assistant text and reasoning, tool calls and results. Image
 * bytes are not inlined; the page loads them from `/api/media/N` of the same scope.
 */
import type { ChatMessage } from '@crystal/core';
import {
  type DiffRow,
  type ImageRegistry,
  parseUnifiedPatch,
  type SavedChildCard,
  taggedMarkerNumbers,
  toolSummaryOf,
} from '@crystal/engine';

export interface ImageRef {
  readonly number: number;
  readonly name?: string | undefined;
  readonly available: boolean;
}

export type HistoryItem =
  | { readonly kind: 'user'; readonly text: string; readonly images: readonly ImageRef[] }
  | { readonly kind: 'assistant'; readonly text: string; readonly reasoning: string }
  | {
      readonly kind: 'tool-call';
      readonly callId: string;
      readonly name: string;
      readonly arguments: string;
      /** The engine's one-line summary (the terminal's card line). */
      readonly summary: string;
      /** AGENT-4: a `task` call's child agent, rebuilt from its saved transcript (a reload shows its card). */
      readonly agent?: SavedChildCard;
    }
  | {
      readonly kind: 'tool-result';
      readonly callId: string;
      readonly name: string;
      readonly isError: boolean;
      readonly text: string;
      readonly images: readonly ImageRef[];
      /** The applied change of an `edit`/`write`, numbered from the file (the tool's own patch). */
      readonly diff?: readonly DiffRow[];
    };

/** Tool output beyond this is cut in the view (the archive keeps it whole). */
export const MAX_TOOL_TEXT = 20_000;

/** Diff rows beyond this are cut in the view. */
export const MAX_DIFF_ROWS = 400;

/** The rows of the patch in an `edit`/`write` result; undefined for other tools or when it has none. */
export function resultDiff(name: string, isError: boolean, text: string): DiffRow[] | undefined {
  if (isError || (name !== 'edit' && name !== 'write')) return undefined;
  const rows = parseUnifiedPatch(text);
  if (!rows.some((r) => r.kind !== 'hunk')) return undefined;
  if (rows.length <= MAX_DIFF_ROWS) return rows;
  return [...rows.slice(0, MAX_DIFF_ROWS), { kind: 'note', text: `${rows.length - MAX_DIFF_ROWS} more lines` }];
}

export function capText(text: string, max = MAX_TOOL_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters)`;
}

/** The images a message's tagged markers name, in order, with their display names (WEB-8). */
export async function imageRefs(text: string, registry: ImageRegistry): Promise<ImageRef[]> {
  const out: ImageRef[] = [];
  for (const number of new Set(taggedMarkerNumbers(text))) {
    const image = await registry.get(number);
    out.push({ number, name: image?.name, available: image?.available ?? false });
  }
  return out;
}

export async function historyView(messages: readonly ChatMessage[], registry: ImageRegistry): Promise<HistoryItem[]> {
  const items: HistoryItem[] = [];
  const refs = (text: string): Promise<ImageRef[]> => imageRefs(text, registry);
  for (const message of messages) {
    if (message.role === 'user') {
      const text = message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
      items.push({ kind: 'user', text, images: await refs(text) });
    } else if (message.role === 'assistant') {
      let text = '';
      let reasoning = '';
      const calls: HistoryItem[] = [];
      for (const part of message.content) {
        if (part.type === 'text') text += part.text;
        else if (part.type === 'reasoning') reasoning += part.text;
        else if (part.type === 'tool-call')
          calls.push({
            kind: 'tool-call',
            callId: part.id,
            name: part.name,
            arguments: capText(part.arguments),
            summary: toolSummaryOf(part.name, part.arguments),
          });
      }
      if (text !== '' || reasoning !== '') items.push({ kind: 'assistant', text, reasoning });
      items.push(...calls);
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        const text = part.content.map((c) => (c.type === 'text' ? c.text : `[image ${c.mime}]`)).join('');
        const diff = resultDiff(part.name, part.isError, text);
        items.push({
          ...(diff ? { diff } : {}),
          kind: 'tool-result',
          callId: part.callId,
          name: part.name,
          isError: part.isError,
          text: capText(text),
          images: await refs(text),
        });
      }
    }
  }
  return items;
}
