/** A plain session state for the save tests (save-hops, save-failures): `messages` in both transcripts. */
import { type ChatMessage, emptyUsage, systemMessage } from '@crystal/core';
import type { SessionState } from '../src/index.js';

export const assistant = (text: string): ChatMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });
export const textOf = (m: ChatMessage): string => m.content.map((p) => (p.type === 'text' ? p.text : '')).join('');

export function stateOf(id: string, messages: ChatMessage[]): SessionState {
  return {
    id,
    workspace: '/ws',
    createdUtc: '2026-12-01T00:00:00.000Z',
    updatedUtc: '2026-12-01T00:00:00.000Z',
    provider: 'fake',
    model: 'm',
    context: [systemMessage('live system'), ...messages],
    archive: [...messages],
    userTurns: 1,
    modelCalls: 0,
    toolCalls: 0,
    usage: emptyUsage,
    cumulativeUsage: emptyUsage,
    queued: [],
    images: [],
    imageMarkersTagged: true,
    pendingApprovals: [],
  };
}
