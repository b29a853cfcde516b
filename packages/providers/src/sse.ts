/** Server-sent events and NDJSON lines from a response body, split one network read at a time. */
import { ProviderError } from '@crystal/core';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent {
  readonly event?: string | undefined;
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
 * A wire's frames from its body, split synchronously one network read at a time: `feed`
 * appends the complete frames of a read to `out`, `end` what is left when the body ends. The
 * wire client decodes them in the same step, so a read costs one await, not one per layer.
 */
export interface FrameSource<F> {
  feed(chunk: Uint8Array, out: F[]): void;
  end(out: F[]): void;
}

/** UTF-8 text of a body read by read: a character cut between reads is joined; a leading BOM is dropped. */
class Utf8Reads {
  private readonly decoder = new StringDecoder('utf8');
  private first = true;

  text(chunk: Uint8Array): string {
    const text = this.decoder.write(chunk as Buffer);
    if (!this.first || text === '') return text;
    this.first = false;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  end(): string {
    return this.decoder.end();
  }
}

/**
 * Server-sent events (eventsource-parser). Bytes since the last dispatched event (or comment)
 * are counted; past `maxFrameBytes` the attempt fails instead of buffering without bound (REL-8).
 */
export function sseFrames(provider = 'provider', maxFrameBytes: number = MAX_FRAME_BYTES): FrameSource<SseEvent> {
  let out: SseEvent[] = [];
  let progressed = false;
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      progressed = true;
      out.push(message);
    },
    onComment: () => {
      progressed = true;
    },
  });
  const text = new Utf8Reads();
  let open = 0;
  // Whether the last read ended inside a line (the parser holds that partial line).
  let partial = false;
  return {
    feed(chunk, into) {
      out = into;
      progressed = false;
      const read = text.text(chunk);
      // A read that ends inside a line leaves the parser holding that partial line, which it joins with the whole of
      // the next read before it splits lines: a copy of every read (50 KB each on a fast stream). Then the next read is
      // fed up to its first line break on its own, which only finishes that line, and the rest where it lies. A read
      // after one that ended on a line break (a paced stream's, one frame each) is fed whole, in one step.
      const lf = partial ? read.indexOf('\n') : -1;
      if (lf === -1 || lf === read.length - 1) parser.feed(read);
      else {
        parser.feed(read.slice(0, lf + 1));
        parser.feed(read.slice(lf + 1));
      }
      if (read !== '') partial = read.charCodeAt(read.length - 1) !== 0x0a;
      open = progressed ? 0 : open + chunk.length;
      if (open > maxFrameBytes) throw frameTooLarge(provider, maxFrameBytes);
    },
    end(into) {
      out = into;
      parser.feed(text.end());
    },
  };
}

/** Newline-delimited JSON lines (Ollama); a line longer than `maxFrameBytes` fails the attempt (REL-8). */
export function ndjsonFrames(provider = 'provider', maxFrameBytes: number = MAX_FRAME_BYTES): FrameSource<string> {
  const text = new Utf8Reads();
  let buffer = '';
  return {
    feed(chunk, out) {
      buffer += text.text(chunk);
      let start = 0;
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n', start)) {
        const line = buffer.slice(start, nl).trim();
        start = nl + 1;
        if (line !== '') out.push(line);
      }
      if (start > 0) buffer = buffer.slice(start);
      if (buffer.length > maxFrameBytes) throw frameTooLarge(provider, maxFrameBytes);
    },
    end(out) {
      buffer += text.end();
      if (buffer.trim() !== '') out.push(buffer.trim());
    },
  };
}

/** The frames of a body, one batch per network read that completed any (one await per read, not per frame). */
async function* frameBatches<F>(body: AsyncIterable<Uint8Array>, source: FrameSource<F>): AsyncGenerator<F[]> {
  for await (const value of body) {
    const batch: F[] = [];
    source.feed(value, batch);
    if (batch.length > 0) yield batch;
  }
  const rest: F[] = [];
  source.end(rest);
  if (rest.length > 0) yield rest;
}

/** Server-sent events of a body, one batch per network read (see sseFrames). */
export function sseEventBatches(
  body: AsyncIterable<Uint8Array>,
  provider = 'provider',
  maxFrameBytes: number = MAX_FRAME_BYTES,
): AsyncGenerator<SseEvent[]> {
  return frameBatches(body, sseFrames(provider, maxFrameBytes));
}

/** NDJSON lines of a body, one batch per network read (see ndjsonFrames). */
export function ndjsonLineBatches(
  body: AsyncIterable<Uint8Array>,
  provider = 'provider',
  maxFrameBytes: number = MAX_FRAME_BYTES,
): AsyncGenerator<string[]> {
  return frameBatches(body, ndjsonFrames(provider, maxFrameBytes));
}
