/** Server-sent events and NDJSON lines from a response body, one batch per network read. */
import { ProviderError } from '@crystal/core';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent {
  readonly event: string | undefined;
  readonly data: string;
}

/** REL-8: the largest single stream frame (an SSE event or an NDJSON line) that is buffered. */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;

export function frameTooLarge(provider: string, cap: number = MAX_FRAME_BYTES): ProviderError {
  return new ProviderError({
    kind: 'incomplete_stream',
    provider,
    message: `${provider} sent an invalid stream: one frame grew past the ${formatBytes(cap)} frame cap without ending.`,
  });
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * Yields the events of each network read as one batch (one await per read, not per event).
 * Bytes since the last dispatched event (or comment) are counted; past `maxFrameBytes` the
 * attempt fails instead of buffering without bound.
 */
export async function* sseEventBatches(
  body: AsyncIterable<Uint8Array>,
  provider = 'provider',
  maxFrameBytes: number = MAX_FRAME_BYTES,
): AsyncGenerator<SseEvent[]> {
  let pending: SseEvent[] = [];
  let progressed = false;
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      progressed = true;
      pending.push({ event: message.event, data: message.data });
    },
    onComment: () => {
      progressed = true;
    },
  });
  const decoder = new TextDecoder();
  let open = 0;
  for await (const value of body) {
    progressed = false;
    parser.feed(decoder.decode(value, { stream: true }));
    open = progressed ? 0 : open + value.length;
    if (open > maxFrameBytes) throw frameTooLarge(provider, maxFrameBytes);
    if (pending.length > 0) {
      const batch = pending;
      pending = [];
      yield batch;
    }
  }
  parser.feed(decoder.decode());
  if (pending.length > 0) yield pending;
}

/** Newline-delimited JSON lines (Ollama), grouped per network read (one await per read, not per line). */
export async function* ndjsonLineBatches(
  body: AsyncIterable<Uint8Array>,
  provider = 'provider',
  maxFrameBytes: number = MAX_FRAME_BYTES,
): AsyncGenerator<string[]> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const value of body) {
    buffer += decoder.decode(value, { stream: true });
    const lines: string[] = [];
    let start = 0;
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n', start)) {
      const line = buffer.slice(start, nl).trim();
      start = nl + 1;
      if (line !== '') lines.push(line);
    }
    buffer = buffer.slice(start);
    if (buffer.length > maxFrameBytes) throw frameTooLarge(provider, maxFrameBytes);
    if (lines.length > 0) yield lines;
  }
  buffer += decoder.decode();
  if (buffer.trim() !== '') yield [buffer.trim()];
}
