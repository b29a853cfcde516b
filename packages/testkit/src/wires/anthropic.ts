/**
 * The Anthropic Messages wire: named SSE events `message_start`, `ping`, per content block
 * `content_block_start` / `content_block_delta` / `content_block_stop` (thinking, then text, then
 * each tool_use), then `message_delta` (stop reason, output tokens) and `message_stop`.
 */
import { replyTextDeltas, splitDeltas, splitInto, toolArguments, type FakeReply } from '../script.js';
import { sse, type EncodedStream, type RecordedRequestInfo, type WireEncoder } from '../wire.js';

/** The signature a thinking block carries when the reply does not script one. */
export const FAKE_THINKING_SIGNATURE = 'fake-thinking-signature';

/** Error `type` per HTTP status, as the Messages API answers. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 500:
      return 'api_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return 'invalid_request_error';
  }
}

export function anthropicWire(): WireEncoder {
  return {
    name: 'anthropic',
    errorBody: (status, message) => ({ type: 'error', error: { type: anthropicErrorType(status), message } }),
    encodeStream(reply: FakeReply, request: RecordedRequestInfo): EncodedStream {
      const event = (type: string, data: Record<string, unknown>): string => sse({ type, ...data }, type);
      const chunks: string[] = [
        event('message_start', {
          message: {
            id: 'msg_fake',
            type: 'message',
            role: 'assistant',
            model: modelOf(request.body),
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: {
              input_tokens: reply.usage?.input ?? 0,
              cache_creation_input_tokens: 0,
              cache_read_input_tokens: 0,
              output_tokens: reply.usage ? Math.min(1, reply.usage.output) : 0,
            },
          },
        }),
        event('ping', {}),
      ];
      let index = 0;
      const block = (start: Record<string, unknown>, deltas: Array<Record<string, unknown>>): void => {
        chunks.push(event('content_block_start', { index, content_block: start }));
        for (const delta of deltas) chunks.push(event('content_block_delta', { index, delta }));
        chunks.push(event('content_block_stop', { index }));
        index++;
      };
      if (reply.reasoning !== undefined || reply.reasoningSignature !== undefined) {
        block({ type: 'thinking', thinking: '', signature: '' }, [
          ...splitDeltas(reply.reasoning).map((thinking) => ({ type: 'thinking_delta', thinking })),
          { type: 'signature_delta', signature: reply.reasoningSignature ?? FAKE_THINKING_SIGNATURE },
        ]);
      }
      const text = replyTextDeltas(reply);
      if (text.length > 0) {
        block(
          { type: 'text', text: '' },
          text.map((piece) => ({ type: 'text_delta', text: piece })),
        );
      }
      (reply.toolCalls ?? []).forEach((call, i) => {
        block(
          { type: 'tool_use', id: call.id ?? `toolu_fake_${i + 1}`, name: call.name, input: {} },
          splitInto(toolArguments(call), call.chunks ?? 2).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
        );
      });
      const finish = reply.finish === undefined ? (reply.toolCalls?.length ? 'tool_use' : 'end_turn') : reply.finish;
      if (finish !== null) {
        chunks.push(
          event('message_delta', {
            delta: { stop_reason: finish, stop_sequence: null },
            usage: { output_tokens: reply.usage?.output ?? 0 },
          }),
        );
        chunks.push(event('message_stop', {}));
      }
      return { contentType: 'text/event-stream', chunks };
    },
  };
}

function modelOf(body: unknown): string {
  if (body && typeof body === 'object' && 'model' in body && typeof body.model === 'string') return body.model;
  return 'fake-model';
}
