/** What the wire tests share: drain a stream, or expect it to fail with a ProviderError. */
import type { ChatEvent, ChatRequest, StreamingChatClient } from '@crystal/core';
import { ProviderError, userMessage } from '@crystal/core';
import { expect } from 'vitest';

export async function collect(
  c: StreamingChatClient,
  request: Partial<ChatRequest> = {},
  signal?: AbortSignal,
): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  for await (const event of c.stream({ messages: [userMessage('hi')], ...request }, signal)) events.push(event);
  return events;
}

export async function failure(c: StreamingChatClient, request: Partial<ChatRequest> = {}): Promise<ProviderError> {
  try {
    await collect(c, request);
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  throw new Error('expected the stream to fail');
}
