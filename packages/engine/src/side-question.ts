/**
 * Side questions (`/btw`, BTW-1..6): a question about the conversation asked on its own
 * request, with the working model, the current system message, no tools and its own
 * cancellation. Question, answer and usage never enter the queue, the transcripts, the usage
 * ledger, compaction or the saved session; the thread lives in this process only.
 */
import { type ChatMessage, isProviderError, type StreamingChatClient, systemMessage, userMessage } from '@crystal/core';
import type { Clock } from './clock.js';
import { compact, compactionLimit, estimateTokens } from './compaction/index.js';
import { messageLines } from './compaction/serialise.js';
import type { RetryPolicy } from './retry-policy.js';

export interface SideExchange {
  readonly question: string;
  readonly answer: string;
}

export type SideEvent =
  | { readonly type: 'side-started'; readonly question: string }
  /** Reasoning began: the panel caption turns from `Waiting for the model` to `Thinking` (BTW-8). */
  | { readonly type: 'side-thinking' }
  | { readonly type: 'side-delta'; readonly text: string }
  | { readonly type: 'side-finished'; readonly question: string; readonly answer: string }
  | { readonly type: 'side-failed'; readonly question: string; readonly message: string };

export interface SideInput {
  readonly question: string;
  readonly system: ChatMessage | undefined;
  readonly archive: readonly ChatMessage[];
  /** The model context (index 0 the live system message): compacted as a copy when the archive does not fit. */
  readonly context: readonly ChatMessage[];
  readonly thread: readonly SideExchange[];
  readonly client: StreamingChatClient;
  readonly contextWindow: number | undefined;
  readonly maxTokens: number | undefined;
  readonly retry: RetryPolicy;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  readonly publish: (event: SideEvent) => void;
}

/** The side thread keeps the newest 20 exchanges (BTW-1). */
export const SIDE_THREAD_LIMIT = 20;

const SIDE_NOTE =
  'This is a side question about the conversation above. Answer it directly and briefly. You cannot use tools here, and nothing you say is added to the main conversation.';

/**
 * The archive as plain text lines (tool calls and results included as text), so the request
 * carries no tool blocks while the tool list is empty.
 */
function conversationText(archive: readonly ChatMessage[]): string {
  return archive
    .flatMap((m) => (m.role === 'system' ? [m.content.map((p) => (p.type === 'text' ? p.text : '')).join('')] : messageLines(m)))
    .join('\n');
}

export function buildSideMessages(input: Pick<SideInput, 'question' | 'system' | 'archive' | 'thread'>): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (input.system) messages.push(input.system);
  const transcript = conversationText(input.archive);
  if (transcript !== '')
    messages.push(userMessage(`<conversation>\n${transcript}\n</conversation>`), assistantText('Understood.'));
  for (const exchange of input.thread.slice(-SIDE_THREAD_LIMIT)) {
    messages.push(userMessage(exchange.question), assistantText(exchange.answer));
  }
  messages.push(systemMessage(SIDE_NOTE), userMessage(input.question));
  return messages;
}

function assistantText(text: string): ChatMessage {
  return { role: 'assistant', content: [{ type: 'text', text }] };
}

/** Asks one side question; resolves with the answer, or throws with the reason it failed. */
export async function askSideQuestion(input: SideInput): Promise<string> {
  input.publish({ type: 'side-started', question: input.question });
  try {
    let messages = buildSideMessages(input);
    if (input.contextWindow !== undefined) {
      const limit = compactionLimit({ contextWindow: input.contextWindow, maxTokens: input.maxTokens });
      if (estimateTokens(messages) > limit) {
        // BTW-3: compact a copy of the model context (which already folds older turns into its
        // summary); the copy is never written back. Fail if it still does not fit.
        const copy = await compact({
          context: [...input.context],
          client: input.client,
          contextWindow: input.contextWindow,
          maxTokens: input.maxTokens,
          forced: true,
          retry: input.retry,
          clock: input.clock,
          signal: input.signal,
          envBlock: '',
        });
        messages = buildSideMessages({ ...input, archive: copy.context.slice(1) });
        if (estimateTokens(messages) > limit)
          throw new Error('The side question does not fit the model window, even with the conversation compacted.');
      }
    }
    let answer = '';
    let calls = 0;
    let thinking = false;
    // BTW-2: the working model, the current system message, an empty tool list.
    for await (const event of input.client.stream({ messages, tools: [] }, input.signal)) {
      if (event.type === 'reasoning-delta' && !thinking) {
        thinking = true;
        input.publish({ type: 'side-thinking' });
      } else if (event.type === 'text-delta') {
        answer += event.text;
        input.publish({ type: 'side-delta', text: event.text });
      } else if (event.type === 'tool-call') calls++;
    }
    // BTW-5: tool calls are never executed; text that came with them is kept.
    if (answer.trim() === '') {
      throw new Error(
        calls > 0 ? 'The model answered with a tool call and no text; ask again.' : 'The model returned no answer; ask again.',
      );
    }
    input.publish({ type: 'side-finished', question: input.question, answer });
    return answer;
  } catch (error) {
    const message = input.signal.aborted
      ? 'The side question was cancelled.'
      : isProviderError(error)
        ? error.message
        : (error as Error).message;
    input.publish({ type: 'side-failed', question: input.question, message });
    throw new Error(message);
  }
}
