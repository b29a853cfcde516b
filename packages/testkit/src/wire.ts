/** A wire encoder turns a scripted reply into the bytes one provider wire streams. */
import type { FakeReply } from './script.js';

export interface EncodedStream {
  readonly contentType: string;
  /** Each element is written as one chunk (one SSE event or one NDJSON line). */
  readonly chunks: readonly string[];
}

export interface RecordedRequestInfo {
  readonly path: string;
  readonly body: unknown;
}

export interface WireEncoder {
  readonly name: string;
  encodeStream(reply: FakeReply, request: RecordedRequestInfo): EncodedStream;
  errorBody(status: number, message: string): unknown;
}

export function sse(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}
