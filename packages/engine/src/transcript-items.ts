/** Transcript messages ↔ the session file's item shape (reference §4.5: message, tool_call, tool_result, reasoning). */
import type { ChatMessage, ContentPart, Role, ToolResultPart } from '@crystal/core';

export type SessionItem =
  | { kind: 'message'; role: Role; text: string }
  | { kind: 'tool_call'; callId: string; name: string; arguments: string }
  | { kind: 'tool_result'; callId: string; name?: string; text: string; status: 'success' | 'failure' }
  | { kind: 'reasoning'; segments: { text: string; kind: string }[]; stateFormat?: string; stateData?: string };

export function toItems(messages: readonly ChatMessage[]): SessionItem[] {
  const items: SessionItem[] = [];
  for (const message of messages) {
    let text = '';
    const flushText = (): void => {
      if (text !== '') items.push({ kind: 'message', role: message.role, text });
      text = '';
    };
    for (const part of message.content) {
      switch (part.type) {
        case 'text':
          text += part.text;
          break;
        case 'reasoning':
          flushText();
          items.push({
            kind: 'reasoning',
            segments: [{ text: part.text, kind: 'text' }],
            ...(part.state ? { stateFormat: part.state.format, stateData: part.state.data } : {}),
          });
          break;
        case 'tool-call':
          flushText();
          items.push({ kind: 'tool_call', callId: part.id, name: part.name, arguments: part.arguments });
          break;
        case 'tool-result':
          flushText();
          items.push({
            kind: 'tool_result',
            callId: part.callId,
            name: part.name,
            text: part.content.map((c) => (c.type === 'text' ? c.text : '')).join(''),
            status: part.isError ? 'failure' : 'success',
          });
          break;
        case 'image':
          break;
      }
    }
    flushText();
  }
  return items;
}

/** Rebuilds messages; invalid items are skipped (reference §4.5). */
export function fromItems(items: readonly unknown[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let assistant: ContentPart[] | undefined;
  let tool: ToolResultPart[] | undefined;
  const flush = (): void => {
    if (assistant?.length) messages.push({ role: 'assistant', content: assistant });
    if (tool?.length) messages.push({ role: 'tool', content: tool });
    assistant = undefined;
    tool = undefined;
  };
  for (const raw of items) {
    if (!raw || typeof raw !== 'object') continue;
    const item = raw as Record<string, unknown>;
    const str = (key: string): string | undefined => (typeof item[key] === 'string' ? (item[key] as string) : undefined);
    if (item.kind === 'message' && str('text') !== undefined && isRole(item.role)) {
      if (item.role === 'assistant') {
        if (tool) flush();
        assistant ??= [];
        assistant.push({ type: 'text', text: str('text') as string });
      } else {
        flush();
        messages.push({ role: item.role, content: [{ type: 'text', text: str('text') as string }] });
      }
    } else if (item.kind === 'reasoning' && Array.isArray(item.segments)) {
      if (tool) flush();
      assistant ??= [];
      const text = (item.segments as { text?: unknown }[]).map((s) => (typeof s?.text === 'string' ? s.text : '')).join('');
      const format = str('stateFormat');
      const data = str('stateData');
      assistant.push({ type: 'reasoning', text, ...(format && data ? { state: { format, data } } : {}) });
    } else if (item.kind === 'tool_call' && str('callId') && str('name')) {
      if (tool) flush();
      assistant ??= [];
      assistant.push({
        type: 'tool-call',
        id: str('callId') as string,
        name: str('name') as string,
        arguments: str('arguments') ?? '',
      });
    } else if (item.kind === 'tool_result' && str('callId')) {
      tool ??= [];
      tool.push({
        type: 'tool-result',
        callId: str('callId') as string,
        name: str('name') ?? '',
        content: [{ type: 'text', text: str('text') ?? '' }],
        isError: item.status === 'failure',
      });
    }
  }
  flush();
  return messages;
}

function isRole(value: unknown): value is Role {
  return value === 'system' || value === 'user' || value === 'assistant' || value === 'tool';
}
