/**
 * Controller events as the page receives them over SSE: the same values, made safe and small
 * for JSON (tool calls without provider state, tool results as capped text, images by MIME type
 * only). The page decides how they look, as the terminal does.
 */
import { type ControllerEvent, toolSummaryOf } from '@crystal/engine';
import { capText, resultDiff } from './history-view.js';

export type PageEvent = Record<string, unknown> & { readonly type: string };

export function toPageEvent(event: ControllerEvent): PageEvent {
  switch (event.type) {
    case 'tool-calls':
      return {
        type: 'tool-calls',
        calls: event.calls.map((c) => ({
          id: c.id,
          name: c.name,
          arguments: capText(c.arguments),
          summary: toolSummaryOf(c.name, c.arguments),
        })),
      };
    case 'tool-results':
      return {
        type: 'tool-results',
        results: event.results.map((r) => {
          const text = r.content.map((c) => (c.type === 'text' ? c.text : `[image ${c.mime}]`)).join('');
          const diff = resultDiff(r.name, r.isError, text);
          return { callId: r.callId, name: r.name, isError: r.isError, text: capText(text), ...(diff ? { diff } : {}) };
        }),
      };
    case 'tool-output':
      return { type: 'tool-output', callId: event.callId, chunk: capText(event.chunk) };
    case 'turn-finished': {
      const { result } = event;
      return {
        type: 'turn-finished',
        result: {
          sessionId: result.sessionId,
          stopReason: result.stopReason,
          usage: result.usage,
          modelCalls: result.modelCalls,
          retries: result.retries,
          denied: result.denied,
          ...(result.error ? { error: result.error } : {}),
        },
      };
    }
    default:
      return event as unknown as PageEvent;
  }
}
