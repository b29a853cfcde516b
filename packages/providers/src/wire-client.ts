/**
 * What every wire client shares: the POST, reading the stream one network read at a time,
 * decoding each frame (an SSE event or an NDJSON line), flattening the batches into the
 * contract's event stream, and the errors (a cut stream, a stream without a finish, an abort).
 * A wire supplies only its URL, headers, request encoding, frame source and frame decoder.
 */
import type { ChatEvent, ChatRequest, ClientCapabilities, StreamingChatClient } from '@crystal/core';
import { ProviderError } from '@crystal/core';
import { type ClientOptions, DEFAULT_TIMEOUTS, type Endpoint, type ModelSettings } from './endpoint.js';
import { flattenBatches } from './event-batches.js';
import { abortError, type HttpErrorInput } from './http-error.js';
import { postStream, streamFailure } from './http.js';
import { TransportTimeout } from './transport/transport.js';

/** Decodes one wire's frames into chat events. */
export interface FrameDecoder<F> {
  push(frame: F): Iterable<ChatEvent>;
  /** A terminal frame was seen: stop reading. */
  readonly done: boolean;
  /** The finish was seen. */
  readonly finished: boolean;
  /** Events that close the stream (complete tool calls, usage, finish), when the wire holds them back. */
  close?(): Iterable<ChatEvent>;
}

export abstract class WireClient<F> implements StreamingChatClient {
  readonly provider: string;
  readonly model: string;
  readonly capabilities: ClientCapabilities;

  constructor(
    protected readonly endpoint: Endpoint,
    protected readonly settings: ModelSettings,
    protected readonly options: ClientOptions,
    protected readonly url: string,
  ) {
    this.provider = endpoint.name;
    this.model = settings.id;
    this.capabilities = { imageInput: settings.imageInput === true };
  }

  protected abstract headers(): Record<string, string>;
  protected abstract encode(request: ChatRequest): unknown;
  protected abstract frames(body: AsyncIterable<Uint8Array>): AsyncGenerator<F[]>;
  protected abstract decoder(): FrameDecoder<F>;
  /** The vendor's own error-body mapping; the shared one when absent. */
  protected classify?(input: HttpErrorInput): ProviderError;

  /** The message of a stream that ended without a finish. */
  protected incompleteMessage(done: boolean): string {
    return `${this.provider} stream ended without a finish reason${done ? '' : ' (the connection closed early)'}.`;
  }

  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
    return flattenBatches(this.batches(request, signal), signal);
  }

  private async *batches(request: ChatRequest, signal: AbortSignal | undefined): AsyncGenerator<ChatEvent[]> {
    const body = this.encode(request);
    const secrets = [this.endpoint.apiKey];
    const idleMs = this.options.idleTimeoutMs ?? DEFAULT_TIMEOUTS.idleTimeoutMs;
    const stream = await postStream({
      provider: this.provider,
      url: this.url,
      headers: this.headers(),
      body,
      signal,
      transport: this.options.transport,
      connectTimeoutMs: this.options.connectTimeoutMs ?? DEFAULT_TIMEOUTS.connectTimeoutMs,
      firstByteTimeoutMs: this.options.firstByteTimeoutMs ?? DEFAULT_TIMEOUTS.firstByteTimeoutMs,
      idleTimeoutMs: idleMs,
      secrets,
      classify: this.classify?.bind(this),
    });
    // REL-5: the stream watchdog; it restarts on every batch holding a complete frame, so a
    // server that stalls or trickles bytes without finishing an event ends as a timeout.
    const idle = setTimeout(() => stream.destroy(new TransportTimeout('idle', idleMs, 'retry.idleTimeoutSeconds')), idleMs);
    idle.unref();
    const decoder = this.decoder();
    let read = false;
    try {
      for await (const batch of this.frames(stream.body)) {
        idle.refresh();
        if (signal?.aborted) throw abortError();
        const out: ChatEvent[] = [];
        try {
          for (const frame of batch) {
            for (const event of decoder.push(frame)) out.push(event);
            if (decoder.done) break;
          }
        } catch (error) {
          // Events decoded before a mid-stream error still reach the consumer first.
          if (out.length > 0) yield out;
          throw error;
        }
        yield out;
        if (decoder.done) break;
      }
      read = true;
    } catch (error) {
      throw streamFailure(this.provider, error, signal, secrets);
    } finally {
      clearTimeout(idle);
      // A stream read to its finish hands its connection back for the next request; one left
      // early (an error, an abort, a consumer that stopped) is closed.
      if (read) await stream.close();
      else stream.destroy(abortError());
    }
    if (signal?.aborted) throw abortError();
    if (!decoder.finished) {
      throw new ProviderError({
        kind: 'incomplete_stream',
        provider: this.provider,
        message: this.incompleteMessage(decoder.done),
      });
    }
    if (decoder.close) yield [...decoder.close()];
  }
}

/** Parses one frame's JSON text; a frame that is not a JSON object is an incomplete stream. */
export function parseFrame(provider: string, data: string, what = 'stream event'): Record<string, unknown> {
  try {
    const value = JSON.parse(data) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new ProviderError({
    kind: 'incomplete_stream',
    provider,
    message: `${provider} sent a ${what} that is not a JSON object: ${data.slice(0, 200)}`,
  });
}

/** MODEL-3: a wire without a speed setting refuses one at client creation. */
export function refuseSpeed(endpoint: Endpoint, model: ModelSettings, wire: string): void {
  if (model.speed !== undefined) {
    throw new ProviderError({
      kind: 'unsupported',
      provider: endpoint.name,
      message: `The ${wire} wire has no speed setting; remove "speed" from model '${model.id}' of provider '${endpoint.name}'.`,
    });
  }
}
