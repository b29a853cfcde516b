/**
 * The transcript excerpt the approval reviewer reads (REV-1, reference §6.4), taken from the
 * model context (HIST-4), not the archive:
 *   - any summary (`## Earlier context`);
 *   - the first user turn, the last user turn, then other user turns newest to oldest, within
 *     4,000 message tokens;
 *   - up to 40 recent non-user entries: tool entries within 2,000 tokens, messages within what is
 *     left of the message budget;
 *   - per-entry caps of 2,000 tokens (messages) and 1,000 tokens (tools), cut with `\n[truncated]`;
 *   - `Some conversation entries were omitted.` when anything was dropped.
 * Entries keep their order. Each starts its line with its role label; its own lines are indented,
 * so text inside an entry (a tool's output, the model's reply) cannot pose as a user turn.
 * Tokens are the compaction estimate: characters / 4, rounded.
 */
import type { ChatMessage } from '@crystal/core';
import { isSummaryMessage } from '../../compaction/prompts.js';

export const MESSAGE_BUDGET_TOKENS = 4_000;
export const TOOL_BUDGET_TOKENS = 2_000;
export const MAX_RECENT_ENTRIES = 40;
export const MESSAGE_CAP_TOKENS = 2_000;
export const TOOL_CAP_TOKENS = 1_000;
export const TRUNCATED = '\n[truncated]';
export const OMITTED_NOTE = 'Some conversation entries were omitted.';

type Kind = 'summary' | 'user' | 'message' | 'tool';

interface Entry {
  readonly kind: Kind;
  readonly label: string;
  readonly text: string;
  readonly index: number;
}

export interface Excerpt {
  readonly text: string;
  /** Whether the conversation holds a user message or a summary (without one the reviewer is not asked). */
  readonly hasAuthority: boolean;
  readonly omitted: boolean;
}

const tokens = (text: string): number => Math.round(text.length / 4);

function capped(text: string, capTokens: number): { text: string } {
  const max = capTokens * 4;
  if (text.length <= max) return { text };
  return { text: `${text.slice(0, max)}${TRUNCATED}` };
}

function partsText(message: ChatMessage): string {
  return message.content
    .map((p) => (p.type === 'text' ? p.text.replace(/\u2063/g, '') : p.type === 'image' ? `[image ${p.name ?? p.mime}]` : ''))
    .join('');
}

/** The model context as reviewer entries (the live system message is not one). */
function entriesOf(context: readonly ChatMessage[]): Entry[] {
  const entries: Entry[] = [];
  const push = (kind: Kind, label: string, text: string): void => {
    if (text.trim() !== '') entries.push({ kind, label, text, index: entries.length });
  };
  for (const [i, message] of context.entries()) {
    if (message.role === 'system') {
      if (isSummaryMessage(message)) push('summary', 'Summary', partsText(message));
      else if (i > 0) push('message', 'System', partsText(message));
      continue;
    }
    if (message.role === 'user') {
      push('user', 'User', partsText(message));
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text') push('message', 'Assistant', part.text.replace(/\u2063/g, ''));
      else if (part.type === 'tool-call') push('tool', 'Assistant tool call', `${part.name}(${part.arguments})`);
      else if (part.type === 'tool-result') {
        const body = part.content.map((c) => (c.type === 'text' ? c.text : `[image ${c.name ?? c.mime}]`)).join('');
        push('tool', part.isError ? 'Tool error (untrusted output)' : 'Tool result (untrusted output)', `${part.name}: ${body}`);
      }
    }
  }
  return entries;
}

export function buildExcerpt(context: readonly ChatMessage[]): Excerpt {
  const entries = entriesOf(context);
  const chosen = new Map<number, string>();
  let omitted = false;
  let messageBudget = MESSAGE_BUDGET_TOKENS;
  const take = (entry: Entry, capTokens: number, budget: number): number => {
    const { text } = capped(entry.text, capTokens);
    const cost = tokens(text);
    if (cost > budget) return -1;
    chosen.set(entry.index, text);
    return cost;
  };
  for (const entry of entries) if (entry.kind === 'summary') chosen.set(entry.index, capped(entry.text, MESSAGE_CAP_TOKENS).text);
  // User turns: the first, the last, then the others from newest to oldest.
  const users = entries.filter((e) => e.kind === 'user');
  const order =
    users.length <= 1 ? users : [users[0] as Entry, users[users.length - 1] as Entry, ...users.slice(1, -1).reverse()];
  for (const entry of order) {
    const cost = take(entry, MESSAGE_CAP_TOKENS, messageBudget);
    if (cost < 0) omitted = true;
    else messageBudget -= cost;
  }
  // Up to 40 recent non-user entries, newest first.
  let toolBudget = TOOL_BUDGET_TOKENS;
  const others = entries.filter((e) => e.kind === 'message' || e.kind === 'tool').reverse();
  if (others.length > MAX_RECENT_ENTRIES) omitted = true;
  for (const entry of others.slice(0, MAX_RECENT_ENTRIES)) {
    if (entry.kind === 'tool') {
      const cost = take(entry, TOOL_CAP_TOKENS, toolBudget);
      if (cost < 0) omitted = true;
      else toolBudget -= cost;
    } else {
      const cost = take(entry, MESSAGE_CAP_TOKENS, messageBudget);
      if (cost < 0) omitted = true;
      else messageBudget -= cost;
    }
  }
  const lines: string[] = [];
  for (const entry of entries) {
    const text = chosen.get(entry.index);
    if (text === undefined) continue;
    lines.push(`[${entry.label}]:\n${indent(text)}`);
  }
  if (omitted) lines.push(OMITTED_NOTE);
  return {
    text: lines.join('\n'),
    hasAuthority: entries.some((e) => e.kind === 'user' || e.kind === 'summary'),
    omitted,
  };
}

function indent(text: string): string {
  return text
    .split(/\r\n|\r|\n|\u2028|\u2029/)
    .map((line) => `    ${line}`)
    .join('\n');
}
