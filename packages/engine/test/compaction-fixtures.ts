/** Hand-built transcripts for the compaction tests. */
import { type ChatMessage, type ContentPart, systemMessage, text, userMessage } from '@crystal/core';

export const liveSystem = (): ChatMessage => systemMessage('You are Crystal Code.\n\n<env>\nWorkspace: /w\n</env>');

/** A string of `tokens` estimated tokens (4 characters each). */
export const ofTokens = (tokens: number, fill = 'x'): string => fill.repeat(tokens * 4);

export const user = (value: string): ChatMessage => userMessage(value);

export const assistant = (value: string): ChatMessage => ({ role: 'assistant', content: [text(value)] });

export const call = (id: string, name: string, args: string): ChatMessage => ({
  role: 'assistant',
  content: [{ type: 'tool-call', id, name, arguments: args }],
});

export const result = (id: string, output: string, isError = false, name = 'read'): ChatMessage => ({
  role: 'tool',
  content: [{ type: 'tool-result', callId: id, name, content: [text(output)], isError }],
});

export const assistantParts = (...content: ContentPart[]): ChatMessage => ({ role: 'assistant', content });

/** One user turn: the user message, one tool call with its result, and a closing assistant text. */
export function toolTurn(id: string, resultTokens: number, isError = false): ChatMessage[] {
  return [
    user(`turn ${id}`),
    call(id, 'read', `{"path":"${id}.txt"}`),
    result(id, ofTokens(resultTokens), isError),
    assistant(`done ${id}`),
  ];
}

/** The tool-result text of a tool message. */
export function resultText(message: ChatMessage | undefined): string {
  const part = message?.content[0];
  if (part?.type !== 'tool-result') throw new Error('expected a tool message');
  return part.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}
