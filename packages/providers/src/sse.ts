/** Server-sent events from a fetch body, parsed with `eventsource-parser`. */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent {
  readonly event: string | undefined;
  readonly data: string;
}

/** Yields the events of each network read as one batch (one await per read, not per event). */
export async function* sseEventBatches(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent[]> {
  let pending: SseEvent[] = [];
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => pending.push({ event: message.event, data: message.data }),
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      if (pending.length > 0) {
        const batch = pending;
        pending = [];
        yield batch;
      }
    }
    parser.feed(decoder.decode());
    if (pending.length > 0) yield pending;
  } finally {
    reader.releaseLock();
  }
}

/** Newline-delimited JSON lines (Ollama), grouped per network read (one await per read, not per line). */
export async function* ndjsonLineBatches(body: ReadableStream<Uint8Array>): AsyncGenerator<string[]> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const lines: string[] = [];
      let start = 0;
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n', start)) {
        const line = buffer.slice(start, nl).trim();
        start = nl + 1;
        if (line !== '') lines.push(line);
      }
      buffer = buffer.slice(start);
      if (lines.length > 0) yield lines;
    }
    buffer += decoder.decode();
    if (buffer.trim() !== '') yield [buffer.trim()];
  } finally {
    reader.releaseLock();
  }
}
