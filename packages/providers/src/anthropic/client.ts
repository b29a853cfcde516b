/**
 * The Anthropic Messages client (protocol `anthropic`) over the lean transport (transport/transport.ts).
 *
 * Why not `@anthropic-ai/sdk`: it shares the Stainless SSE line decoder of the `openai` SDK,
 * which we measured at ~40 ms of decoding plus ~50 ms of garbage collection on a 2,000-token
 * stream (1.45x the plain-fetch floor against a 1.2x goal); and v1.14 of it sends
 * `Authorization: Bearer` instead of `x-api-key`. The wire is small: JSON in, named SSE events
 * out, parsed with `eventsource-parser`.
 */
import type { ChatRequest } from '@crystal/core';
import type { ProviderError } from '@crystal/core';
import type { ClientFactory } from '../create-client.js';
import { type ClientOptions, type Endpoint, joinUri, type ModelSettings, USER_AGENT } from '../endpoint.js';
import { classifyHttpError, errorFields, type HttpErrorInput, withKind } from '../http-error.js';
import { type FrameSource, type SseEvent, sseFrames } from '../sse.js';
import { type FrameDecoder, parseFrame, refuseSpeed, WireClient } from '../wire-client.js';
import { messagesTextTemplate, TextFrames } from '../text-frames.js';
import { MessagesStreamDecoder, type StreamEvent } from './decode.js';
import { encodeRequest } from './encode.js';

export const ANTHROPIC_VERSION = '2023-06-01';

const CREDIT = /credit balance is too low|reached your specified (api )?usage limits/i;
const OVERFLOW = /prompt is too long|exceeds? (the )?context (limit|window)/i;

/** Anthropic's own error bodies first (credit balance, prompt too long), then the shared mapping. */
export function classifyAnthropicError(input: HttpErrorInput): ProviderError {
  const base = classifyHttpError(input);
  const { type, message = '' } = errorFields(input.body);
  let kind = base.kind;
  if (type === 'billing_error' || CREDIT.test(message)) kind = 'quota';
  else if (OVERFLOW.test(message)) kind = 'context_overflow';
  return withKind(base, kind);
}

export class AnthropicClient extends WireClient<SseEvent> {
  constructor(endpoint: Endpoint, settings: ModelSettings, options: ClientOptions = {}) {
    super(endpoint, settings, options, joinUri(endpoint.baseUri, 'v1/messages'));
  }

  protected headers(): Record<string, string> {
    return {
      'anthropic-version': ANTHROPIC_VERSION,
      'user-agent': USER_AGENT,
      ...(this.endpoint.apiKey ? { 'x-api-key': this.endpoint.apiKey } : {}),
    };
  }

  protected encode(request: ChatRequest): unknown {
    return encodeRequest(request, { provider: this.provider, model: this.settings });
  }

  protected frames(): FrameSource<SseEvent> {
    return sseFrames(this.provider, this.options.maxFrameBytes);
  }

  protected override classify(input: HttpErrorInput): ProviderError {
    return classifyAnthropicError(input);
  }

  protected override incompleteMessage(done: boolean): string {
    return `${this.provider} stream ended without a stop reason${done ? '' : ' (the connection closed early)'}.`;
  }

  protected decoder(): FrameDecoder<SseEvent> {
    const inner = new MessagesStreamDecoder(this.provider);
    const provider = this.provider;
    // A frame that differs from the last text-only frame only in its text is not parsed (../text-frames.ts).
    const texts = new TextFrames(messagesTextTemplate);
    return {
      push: (event, out) => {
        if (texts.take(event.data, out)) return;
        const frame = parseFrame(provider, event.data);
        inner.push(frame as StreamEvent, event.event, out);
        texts.learn(event.data, frame);
      },
      get done() {
        return inner.stopped;
      },
      get finished() {
        return inner.finished;
      },
      close: () => inner.close(),
    };
  }
}

/** MODEL-3: `service_tier` is a field of this wire (sent as the model sets it); speed is not. */
export const createClient: ClientFactory = (endpoint, model, options) => {
  refuseSpeed(endpoint, model, 'Anthropic Messages');
  return new AnthropicClient(endpoint, model, options);
};
