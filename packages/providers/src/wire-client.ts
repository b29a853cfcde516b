/**
 * What every wire client shares: the POST, reading the stream one network read at a time,
 * decoding each frame (an SSE event or an NDJSON line), flattening the batches into the
 * contract's event stream, and the errors (a cut stream, a stream without a finish, an abort).
 * A wire supplies only its URL, headers, request encoding, frame source and frame decoder.
 */
import type { ChatEvent, ChatRequest, ClientCapabilities, StreamingChatClient } from '@crystal/core';
import { monotonicMs, ProviderError } from '@crystal/core';
import { type ClientOptions, DEFAULT_TIMEOUTS, type Endpoint, type ModelSettings } from './endpoint.js';
import { abortError, type HttpErrorInput } from './http-error.js';
import { type OpenStream, postStream, streamFailure } from './http.js';
import type { FrameSource } from './sse.js';
import { TransportTimeout } from './transport/transport.js';

/** Decodes one wire's frames into chat events. */
export interface FrameDecoder<F> {
  /**
   * Appends the events of one frame to `out` (issue 22: an array, not a generator per frame: a
   * streamed reply has thousands of frames). Events appended before a throw are kept.
   */
  push(frame: F, out: ChatEvent[]): void;
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
  protected abstract frames(): FrameSource<F>;
  protected abstract decoder(): FrameDecoder<F>;
  /** The vendor's own error-body mapping; the shared one when absent. */
  protected classify?(input: HttpErrorInput): ProviderError;

  /** The message of a stream that ended without a finish. */
  protected incompleteMessage(done: boolean): string {
    return `${this.provider} stream ended without a finish reason${done ? '' : ' (the connection closed early)'}.`;
  }

  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
    return new WireStream(this, request, signal);
  }

  /** Opens the streaming POST (WireStream's first step). */
  openStream(request: ChatRequest, signal: AbortSignal | undefined): Promise<OpenStream> {
    const body = this.encode(request);
    return postStream({
      provider: this.provider,
      url: this.url,
      headers: this.headers(),
      body,
      signal,
      transport: this.options.transport,
      connectTimeoutMs: this.options.connectTimeoutMs ?? DEFAULT_TIMEOUTS.connectTimeoutMs,
      firstByteTimeoutMs: this.options.firstByteTimeoutMs ?? DEFAULT_TIMEOUTS.firstByteTimeoutMs,
      idleTimeoutMs: this.idleMs(),
      secrets: [this.endpoint.apiKey],
      classify: this.classify?.bind(this),
      sendAfter: request.sendAfter,
    });
  }

  idleMs(): number {
    return this.options.idleTimeoutMs ?? DEFAULT_TIMEOUTS.idleTimeoutMs;
  }

  get apiKey(): string | undefined {
    return this.endpoint.apiKey;
  }

  frameSource(): FrameSource<F> {
    return this.frames();
  }

  frameDecoder(): FrameDecoder<F> {
    return this.decoder();
  }

  incomplete(done: boolean): ProviderError {
    return new ProviderError({ kind: 'incomplete_stream', provider: this.provider, message: this.incompleteMessage(done) });
  }
}

const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true };

/**
 * One streamed reply as the contract's `AsyncIterable<ChatEvent>`: each network read is split
 * into frames and decoded in the same synchronous step, so a read costs one await between the
 * socket and the consumer (issue 22: no async-generator layer per stage, no generator step per
 * event). Errors: a failure while reading is classified (streamFailure); events decoded before
 * a mid-stream error still reach the consumer first; a stream that ended without its finish is
 * an incomplete stream; an abort ends it at once, also between events.
 */
class WireStream<F> implements AsyncIterableIterator<ChatEvent> {
  private queue: ChatEvent[] = [];
  private index = 0;
  private state: 'new' | 'reading' | 'done' = 'new';
  private open: OpenStream | undefined;
  private reader: AsyncIterator<Uint8Array> | undefined;
  private source: FrameSource<F> | undefined;
  private decoder: FrameDecoder<F> | undefined;
  private idle: IdleWatch | undefined;
  /** An error to throw once the events decoded before it are taken. */
  private failure: unknown;
  private readonly frames: F[] = [];
  /** The events of one read, before neighbouring deltas are joined. */
  private readonly decoded: ChatEvent[] = [];

  constructor(
    private readonly client: WireClient<F>,
    private readonly request: ChatRequest,
    private readonly signal: AbortSignal | undefined,
  ) {}

  [Symbol.asyncIterator](): AsyncIterableIterator<ChatEvent> {
    return this;
  }

  async next(): Promise<IteratorResult<ChatEvent>> {
    for (;;) {
      if (this.signal?.aborted) {
        this.release();
        throw abortError();
      }
      if (this.index < this.queue.length) return { value: this.queue[this.index++] as ChatEvent, done: false };
      if (this.failure !== undefined) {
        const failure = this.failure;
        this.failure = undefined;
        throw failure;
      }
      if (this.state === 'done') return DONE;
      if (this.state === 'new') {
        await this.start();
        continue;
      }
      // The one await of a network read; splitting and decoding it is synchronous (take).
      let result: IteratorResult<Uint8Array>;
      try {
        result = await (this.reader as AsyncIterator<Uint8Array>).next();
      } catch (error) {
        this.fail(error);
        continue;
      }
      if (this.take(result)) await this.finish();
    }
  }

  async return(): Promise<IteratorResult<ChatEvent>> {
    this.release();
    return DONE;
  }

  private async start(): Promise<void> {
    // Until the stream is open, a failure ends the iteration as it is (already classified).
    this.state = 'done';
    const open = await this.client.openStream(this.request, this.signal);
    this.open = open;
    this.reader = open.body[Symbol.asyncIterator]();
    this.source = this.client.frameSource();
    this.decoder = this.client.frameDecoder();
    // REL-5: the stream watchdog; every read that completes a frame counts as progress, so a
    // server that stalls or trickles bytes without finishing an event ends as a timeout.
    const idleMs = this.client.idleMs();
    this.idle = new IdleWatch(idleMs, () => open.destroy(new TransportTimeout('idle', idleMs, 'retry.idleTimeoutSeconds')));
    this.state = 'reading';
  }

  /** Splits and decodes one read into the queue; true when the stream ended or reached its terminal frame. */
  private take(result: IteratorResult<Uint8Array>): boolean {
    const frames = this.frames;
    frames.length = 0;
    try {
      if (result.done) (this.source as FrameSource<F>).end(frames);
      else {
        (this.source as FrameSource<F>).feed(result.value, frames);
        if (frames.length > 0) (this.idle as IdleWatch).progress();
      }
      if (this.signal?.aborted) throw abortError();
    } catch (error) {
      this.fail(error);
      return false;
    }
    const decoder = this.decoder as FrameDecoder<F>;
    if (frames.length > 0) {
      const decoded = this.decoded;
      decoded.length = 0;
      let failed = false;
      try {
        // Indexed, as in mergeDeltas: a for-of over an array allocates an iterator result per frame until V8 optimises
        // the loop, about 80 KB of young objects on a 2,000-frame reply (issue 22).
        for (let i = 0; i < frames.length; i++) {
          decoder.push(frames[i] as F, decoded);
          if (decoder.done) break;
        }
      } catch (error) {
        // Events decoded before a mid-stream error still reach the consumer first.
        this.fail(error);
        failed = true;
      }
      this.queue = mergeDeltas(decoded);
      this.index = 0;
      if (failed) return false;
    }
    return result.done === true || decoder.done;
  }

  /** The stream was read to its end or its terminal frame: hand the connection back, then the closing checks. */
  private async finish(): Promise<void> {
    this.state = 'done';
    this.idle?.stop();
    // A stream read to its finish hands its connection back for the next request.
    await (this.open as OpenStream).close();
    const decoder = this.decoder as FrameDecoder<F>;
    if (this.signal?.aborted) this.failure = abortError();
    else if (!decoder.finished) this.failure = this.client.incomplete(decoder.done);
    else if (decoder.close) for (const event of decoder.close()) this.queue.push(event);
  }

  private fail(error: unknown): void {
    this.release();
    this.failure = streamFailure(this.client.provider, error, this.signal, [this.client.apiKey]);
  }

  /** Ends the stream early (an error, an abort, a consumer that stopped): the connection is closed. */
  private release(): void {
    if (this.state === 'reading') this.open?.destroy(abortError());
    this.state = 'done';
    this.idle?.stop();
  }
}

/**
 * Issue 22: the text of one network read reaches the consumer as one delta, not one per frame.
 * A paced stream's read holds several frames (read-coalescer.ts); each consumer (the turn, the
 * archive, the terminal, `run`'s output) then does its per-event work once per read. Only
 * neighbours of the same kind merge, so the order of text, reasoning and tool calls is kept.
 */
function mergeDeltas(events: readonly ChatEvent[]): ChatEvent[] {
  const out: ChatEvent[] = [];
  // A run of same-kind deltas: its first event, and its joined text once a second one came.
  let first: ChatEvent | undefined;
  let text = '';
  let joined = false;
  const close = (): void => {
    if (first === undefined) return;
    out.push(joined ? { type: first.type as 'text-delta', text } : first);
    first = undefined;
    joined = false;
  };
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as ChatEvent;
    if (event.type === 'text-delta' || event.type === 'reasoning-delta') {
      if (first !== undefined && first.type === event.type) {
        text += event.text;
        joined = true;
        continue;
      }
      close();
      first = event;
      text = event.text;
      continue;
    }
    close();
    out.push(event);
  }
  close();
  return out;
}

/**
 * The stream watchdog without a timer re-armed on every read: progress only records the time;
 * the one timer, when it fires, re-arms for what is left of the window, or calls `onIdle`.
 */
class IdleWatch {
  private last = monotonicMs();
  private timer: NodeJS.Timeout;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {
    this.timer = this.arm(ms);
  }

  progress(): void {
    this.last = monotonicMs();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => this.check(), ms);
    timer.unref();
    return timer;
  }

  private check(): void {
    const left = this.ms - (monotonicMs() - this.last);
    if (left <= 0) this.onIdle();
    else this.timer = this.arm(left);
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
