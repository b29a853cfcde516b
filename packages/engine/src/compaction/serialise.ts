/**
 * Step 3 of compaction: the head as plain lines for the summariser (reference §4.4).
 * `[User]: …`, `[Assistant]: …`, `[Reasoning]: …`, `[Assistant tool call]: name(args)`,
 * `[Tool result]: …`, `[Tool error]: …`. Pure.
 */
import type { ChatMessage, ContentPart, ImagePart, ToolResultContent, ToolResultPart } from '@crystal/core';
import { isPrunedResult } from './prune.js';

/** Tool output longer than this is cut. */
export const MAX_SERIALISED_TOOL_OUTPUT = 2_000;

export const TRUNCATED_SUFFIX = '\n[truncated]';

export const CLEARED_RESULT_TEXT = '[Old tool result content cleared]';

/** The invisible prefix that marks an attached image marker (`\u2063[Image #N]`). */
const MARKER_PREFIX = /\u2063/g;

const IMAGE_MARKER = /\[Image #\d+\]/;

/** The head as lines, one per text, reasoning block, tool call and tool result, joined by newlines. */
export function serialiseConversation(messages: readonly ChatMessage[]): string {
  const lines: string[] = [];
  for (const message of messages) lines.push(...messageLines(message));
  return lines.join('\n');
}

/**
 * REL-9: the head as lines that fit `maxChars` together. Lines are kept whole while they fit;
 * the longest are shortened to their beginning and end (the largest common cap that fits), so a
 * single item larger than the model window never makes the summary request impossible.
 */
export function serialiseWithin(messages: readonly ChatMessage[], maxChars: number): string {
  const lines: string[] = [];
  for (const message of messages) lines.push(...messageLines(message));
  const total = lines.reduce((sum, line) => sum + line.length + 1, 0);
  if (total <= maxChars) return lines.join('\n');
  const marker = (omitted: number): string => `\n[… ${omitted} characters left out …]\n`;
  const overhead = marker(10 ** 9).length;
  // The largest cap c with sum(min(len, c + overhead)) <= maxChars.
  let low = 0;
  let high = lines.reduce((max, l) => Math.max(max, l.length), 0);
  const size = (cap: number): number => lines.reduce((sum, line) => sum + Math.min(line.length, cap + overhead) + 1, 0);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (size(mid) <= maxChars) low = mid;
    else high = mid - 1;
  }
  const cap = Math.max(low, 64);
  return lines
    .map((line) => {
      if (line.length <= cap + overhead) return line;
      const head = Math.ceil(cap / 2);
      const tail = cap - head;
      return `${line.slice(0, head)}${marker(line.length - cap)}${line.slice(line.length - tail)}`;
    })
    .join('\n');
}

export function messageLines(message: ChatMessage): string[] {
  switch (message.role) {
    case 'user': {
      const body = contentText(message.content.filter(isTextOrImage));
      return body === '' ? [] : [`[User]: ${body}`];
    }
    case 'assistant': {
      const lines: string[] = [];
      for (const part of message.content) {
        if (part.type === 'reasoning' && part.text !== '') lines.push(`[Reasoning]: ${part.text}`);
        else if (part.type === 'text' && part.text !== '') lines.push(`[Assistant]: ${stripMarkerPrefix(part.text)}`);
        else if (part.type === 'tool-call') lines.push(`[Assistant tool call]: ${part.name}(${part.arguments})`);
      }
      return lines;
    }
    case 'tool': {
      const lines: string[] = [];
      for (const part of message.content) if (part.type === 'tool-result') lines.push(resultLine(part));
      return lines;
    }
    case 'system':
      // The live system message and summaries never reach the head; other system text is not conversation.
      return [];
  }
}

export function resultLine(result: ToolResultPart): string {
  if (isPrunedResult(result)) return `[Tool result]: ${CLEARED_RESULT_TEXT}`;
  const label = result.isError ? '[Tool error]' : '[Tool result]';
  return `${label}: ${truncateToolOutput(contentText(result.content))}`;
}

/** Tool output cut to 2,000 characters plus `\n[truncated]`. */
export function truncateToolOutput(output: string): string {
  if (output.length <= MAX_SERIALISED_TOOL_OUTPUT) return output;
  return output.slice(0, MAX_SERIALISED_TOOL_OUTPUT) + TRUNCATED_SUFFIX;
}

/**
 * Text and images as one string. Image markers lose their provenance prefix. An image part is
 * shown as a marker of its own only when the text carries no `[Image #N]` marker for it.
 */
function contentText(content: readonly ToolResultContent[]): string {
  const text = content
    .filter((part) => part.type === 'text')
    .map((part) => stripMarkerPrefix(part.text))
    .join('');
  if (IMAGE_MARKER.test(text)) return text;
  return content.map((part) => (part.type === 'text' ? stripMarkerPrefix(part.text) : imageLabel(part))).join('');
}

function isTextOrImage(part: ContentPart): part is ToolResultContent {
  return part.type === 'text' || part.type === 'image';
}

function imageLabel(image: ImagePart): string {
  return image.name ? `[Image: ${image.name}]` : '[Image]';
}

function stripMarkerPrefix(text: string): string {
  return text.replace(MARKER_PREFIX, '');
}
