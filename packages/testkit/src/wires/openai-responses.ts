/**
 * The OpenAI Responses wire: named SSE events (`event: response.…`) whose `data:` JSON repeats
 * the name in `type` and carries a `sequence_number`. Output items stream in order (reasoning,
 * message, function calls), then `response.completed` (default finish `completed`) or
 * `response.incomplete` with the scripted reason; there is no `[DONE]` sentinel.
 */
import { type FakeReply, replyTextDeltas, splitDeltas, splitInto, toolArguments } from '../script.js';
import { type EncodedStream, type RecordedRequestInfo, sse, type WireEncoder } from '../wire.js';

export function openAiResponsesWire(): WireEncoder {
  return {
    name: 'responses',
    errorBody: (status, message) => ({ error: { message, ...errorKind(status), param: null } }),
    encodeStream(reply: FakeReply, request: RecordedRequestInfo): EncodedStream {
      const chunks: string[] = [];
      let sequence = 0;
      const emit = (type: string, fields: Record<string, unknown>): void => {
        chunks.push(sse({ type, sequence_number: sequence++, ...fields }, type));
      };
      const output: Record<string, unknown>[] = [];
      const response = (status: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
        id: 'resp_fake',
        object: 'response',
        created_at: 1700000000,
        status,
        model: modelOf(request.body),
        output: [...output],
        usage: null,
        ...extra,
      });

      emit('response.created', { response: response('in_progress') });
      emit('response.in_progress', { response: response('in_progress') });

      const reasoning = splitDeltas(reply.reasoning);
      if (reasoning.length > 0 || reply.reasoningSignature !== undefined) {
        const output_index = output.length;
        const id = 'rs_fake_1';
        emit('response.output_item.added', { output_index, item: { id, type: 'reasoning', summary: [] } });
        const text = reasoning.join('');
        if (reasoning.length > 0) {
          const at = { item_id: id, output_index, summary_index: 0 };
          emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
          for (const delta of reasoning) emit('response.reasoning_summary_text.delta', { ...at, delta });
          emit('response.reasoning_summary_text.done', { ...at, text });
          emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
        }
        const item = {
          id,
          type: 'reasoning',
          summary: text === '' ? [] : [{ type: 'summary_text', text }],
          ...(reply.reasoningSignature === undefined ? {} : { encrypted_content: reply.reasoningSignature }),
        };
        output.push(item);
        emit('response.output_item.done', { output_index, item });
      }

      const textDeltas = replyTextDeltas(reply);
      if (textDeltas.length > 0) {
        const output_index = output.length;
        const id = 'msg_fake_1';
        const at = { item_id: id, output_index, content_index: 0 };
        emit('response.output_item.added', {
          output_index,
          item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
        });
        emit('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } });
        for (const delta of textDeltas) emit('response.output_text.delta', { ...at, delta, logprobs: [] });
        const text = textDeltas.join('');
        const part = { type: 'output_text', text, annotations: [] };
        emit('response.output_text.done', { ...at, text, logprobs: [] });
        emit('response.content_part.done', { ...at, part });
        const item = { id, type: 'message', status: 'completed', role: 'assistant', content: [part] };
        output.push(item);
        emit('response.output_item.done', { output_index, item });
      }

      (reply.toolCalls ?? []).forEach((call, index) => {
        const output_index = output.length;
        const id = `fc_fake_${index + 1}`;
        const head = { id, type: 'function_call', call_id: call.id ?? `call_${index + 1}`, name: call.name };
        emit('response.output_item.added', { output_index, item: { ...head, status: 'in_progress', arguments: '' } });
        const args = toolArguments(call);
        for (const delta of splitInto(args, call.chunks ?? 2)) {
          emit('response.function_call_arguments.delta', { item_id: id, output_index, delta });
        }
        emit('response.function_call_arguments.done', { item_id: id, output_index, arguments: args });
        const item = { ...head, status: 'completed', arguments: args };
        output.push(item);
        emit('response.output_item.done', { output_index, item });
      });

      const usage = reply.usage
        ? {
            input_tokens: reply.usage.input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: reply.usage.output,
            output_tokens_details: { reasoning_tokens: reply.usage.reasoning ?? 0 },
            total_tokens: reply.usage.input + reply.usage.output,
          }
        : null;
      const finish = reply.finish === undefined ? 'completed' : reply.finish;
      if (finish === 'completed') {
        emit('response.completed', { response: response('completed', { usage }) });
      } else if (finish !== null) {
        emit('response.incomplete', {
          response: response('incomplete', { incomplete_details: { reason: finish }, usage }),
        });
      }
      return { contentType: 'text/event-stream', chunks };
    },
  };
}

/** The `type` / `code` OpenAI puts in its error envelope for a status. */
function errorKind(status: number): { type: string; code: string | null } {
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status === 404) return { type: 'invalid_request_error', code: 'model_not_found' };
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' };
  if (status >= 500) return { type: 'server_error', code: null };
  return { type: 'invalid_request_error', code: null };
}

function modelOf(body: unknown): string {
  if (body && typeof body === 'object' && 'model' in body && typeof body.model === 'string') return body.model;
  return 'fake-model';
}
