/** The OpenAI Chat Completions wire (also DeepSeek): `data:` chunks, then `data: [DONE]`. */
import { replyTextDeltas, splitDeltas, splitInto, toolArguments, type FakeReply } from '../script.js';
import { sse, type EncodedStream, type RecordedRequestInfo, type WireEncoder } from '../wire.js';

export interface OpenAiChatOptions {
  /** Field that carries reasoning deltas: DeepSeek's `reasoning_content` (default) or `reasoning`. */
  readonly reasoningField?: string;
  readonly name?: string;
}

export function openAiChatWire(options: OpenAiChatOptions = {}): WireEncoder {
  const reasoningField = options.reasoningField ?? 'reasoning_content';
  return {
    name: options.name ?? 'openai',
    errorBody: (status, message) => ({
      error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'api_error', code: null, param: null },
    }),
    encodeStream(reply: FakeReply, request: RecordedRequestInfo): EncodedStream {
      const model = modelOf(request.body);
      const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model };
      const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
        sse({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
      const chunks: string[] = [chunk({ role: 'assistant', content: '' })];
      for (const piece of splitDeltas(reply.reasoning)) chunks.push(chunk({ [reasoningField]: piece }));
      for (const piece of replyTextDeltas(reply)) chunks.push(chunk({ content: piece }));
      (reply.toolCalls ?? []).forEach((call, index) => {
        const id = call.id ?? `call_${index + 1}`;
        const pieces = splitInto(toolArguments(call), call.chunks ?? 2);
        pieces.forEach((piece, i) => {
          const head =
            i === 0
              ? { id, type: 'function', function: { name: call.name, arguments: piece } }
              : { function: { arguments: piece } };
          chunks.push(chunk({ tool_calls: [{ index, ...head }] }));
        });
      });
      const finish = reply.finish === undefined ? (reply.toolCalls?.length ? 'tool_calls' : 'stop') : reply.finish;
      if (finish !== null) chunks.push(chunk({}, finish));
      if (reply.usage) {
        const usage: Record<string, unknown> = {
          prompt_tokens: reply.usage.input,
          completion_tokens: reply.usage.output,
          total_tokens: reply.usage.input + reply.usage.output,
        };
        if (reply.usage.reasoning !== undefined) usage.completion_tokens_details = { reasoning_tokens: reply.usage.reasoning };
        chunks.push(sse({ ...base, choices: [], usage }));
      }
      if (finish !== null) chunks.push('data: [DONE]\n\n');
      return { contentType: 'text/event-stream', chunks };
    },
  };
}

function modelOf(body: unknown): string {
  if (body && typeof body === 'object' && 'model' in body && typeof body.model === 'string') return body.model;
  return 'fake-model';
}
