/**
 * The Ollama Chat wire (`POST /api/chat`): NDJSON, one `{model, created_at, message, done:false}`
 * object per line, then a `done: true` line with `done_reason` and the token counts. Thinking
 * streams in `message.thinking`; tool calls arrive whole in `message.tool_calls` with their
 * arguments as an object. Errors are `{"error": "…"}`.
 */
import { replyTextDeltas, splitDeltas, toolArguments, type FakeReply, type FakeToolCall } from '../script.js';
import type { EncodedStream, RecordedRequestInfo, WireEncoder } from '../wire.js';

const CREATED_AT = '2024-07-01T12:00:00.000000Z';

export function ollamaWire(): WireEncoder {
  return {
    name: 'ollama',
    errorBody: (_status, message) => ({ error: message }),
    encodeStream(reply: FakeReply, request: RecordedRequestInfo): EncodedStream {
      const model = modelOf(request.body);
      const line = (message: Record<string, unknown>, extra: Record<string, unknown> = { done: false }): string =>
        `${JSON.stringify({ model, created_at: CREATED_AT, message: { role: 'assistant', content: '', ...message }, ...extra })}\n`;
      const chunks: string[] = [];
      for (const piece of splitDeltas(reply.reasoning)) chunks.push(line({ thinking: piece }));
      for (const piece of replyTextDeltas(reply)) chunks.push(line({ content: piece }));
      // Ollama parses each call whole before sending it; one call per line.
      (reply.toolCalls ?? []).forEach((call, index) => {
        chunks.push(line({ tool_calls: [toolCall(call, index)] }));
      });
      // Ollama says `stop` also after tool calls.
      const finish = reply.finish === undefined ? 'stop' : reply.finish;
      if (finish !== null) {
        const done: Record<string, unknown> = {
          done: true,
          done_reason: finish,
          total_duration: 1_250_000_000,
          load_duration: 50_000_000,
        };
        if (reply.usage) {
          done.prompt_eval_count = reply.usage.input;
          done.prompt_eval_duration = 200_000_000;
          done.eval_count = reply.usage.output;
          done.eval_duration = 1_000_000_000;
        }
        chunks.push(line({}, done));
      }
      return { contentType: 'application/x-ndjson', chunks };
    },
  };
}

function toolCall(call: FakeToolCall, index: number): Record<string, unknown> {
  const raw = toolArguments(call);
  let args: unknown = raw;
  try {
    args = JSON.parse(raw);
  } catch {
    // Not JSON: sent as the string, as a lenient gateway would.
  }
  return { ...(call.id ? { id: call.id } : {}), function: { index, name: call.name, arguments: args } };
}

function modelOf(body: unknown): string {
  if (body && typeof body === 'object' && 'model' in body && typeof body.model === 'string') return body.model;
  return 'fake-model';
}
