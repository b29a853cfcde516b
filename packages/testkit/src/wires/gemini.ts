/**
 * The Gemini GenerateContent wire (`streamGenerateContent?alt=sse`): each `data:` event is a whole
 * GenerateContentResponse. Reasoning streams as `{text, thought: true}` parts, function calls
 * arrive whole, and the last chunk carries `finishReason` (default `STOP`, also with calls) and
 * `usageMetadata`. A `reasoningSignature` travels as `thoughtSignature` on the first function call
 * part, or on the last text part when there are no calls.
 */
import { replyTextDeltas, splitDeltas, toolArguments, type FakeReply, type FakeToolCall } from '../script.js';
import { sse, type EncodedStream, type RecordedRequestInfo, type WireEncoder } from '../wire.js';

type Part = Record<string, unknown>;

const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function geminiWire(): WireEncoder {
  return {
    name: 'gemini',
    errorBody: (status, message) => ({ error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN' } }),
    encodeStream(reply: FakeReply, request: RecordedRequestInfo): EncodedStream {
      const base = { modelVersion: modelOf(request.path), responseId: 'fake-response' };
      const contents: Part[][] = [];
      for (const piece of splitDeltas(reply.reasoning)) contents.push([{ text: piece, thought: true }]);
      const texts = replyTextDeltas(reply).map((piece) => [{ text: piece }] as Part[]);
      const calls = (reply.toolCalls ?? []).map((call) => [{ functionCall: functionCall(call) }] as Part[]);
      const signature = reply.reasoningSignature;
      if (signature !== undefined) {
        const carrier = calls[0]?.[0] ?? texts.at(-1)?.[0];
        if (carrier) carrier.thoughtSignature = signature;
        else texts.push([{ text: '', thoughtSignature: signature }]);
      }
      contents.push(...texts, ...calls);
      if (contents.length === 0) contents.push([{ text: '' }]);
      const finish = reply.finish === undefined ? 'STOP' : reply.finish;
      const chunks = contents.map((parts, i) => {
        const last = i === contents.length - 1;
        const candidate: Record<string, unknown> = { content: { parts, role: 'model' }, index: 0 };
        if (last && finish !== null) candidate.finishReason = finish;
        const chunk: Record<string, unknown> = { candidates: [candidate] };
        if (last && reply.usage) chunk.usageMetadata = usageMetadata(reply.usage);
        return sse({ ...chunk, ...base });
      });
      return { contentType: 'text/event-stream', chunks };
    },
  };
}

/** Gemini sends `args` as an object (and an `id` when it assigns one); unparseable scripted arguments go as the raw string. */
function functionCall(call: FakeToolCall): Record<string, unknown> {
  const raw = toolArguments(call);
  let args: unknown;
  try {
    args = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch {
    args = raw;
  }
  return { ...(call.id ? { id: call.id } : {}), name: call.name, args };
}

/** `candidatesTokenCount` excludes thoughts; the scripted `output` includes them. */
function usageMetadata(usage: NonNullable<FakeReply['usage']>): Record<string, unknown> {
  const thoughts = usage.reasoning ?? 0;
  return {
    promptTokenCount: usage.input,
    candidatesTokenCount: usage.output - thoughts,
    ...(usage.reasoning === undefined ? {} : { thoughtsTokenCount: thoughts }),
    totalTokenCount: usage.input + usage.output,
  };
}

function modelOf(path: string): string {
  const match = /\/models\/([^/:?]+)/.exec(path);
  if (!match?.[1]) return 'fake-model';
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return match[1];
  }
}
