/**
 * The Ollama Chat client (protocol `ollama`: local Ollama and Ollama cloud) over the lean transport (transport/transport.ts).
 *
 * Why not the `ollama` npm package: its errors carry no response headers, so a Retry-After on a
 * 429 is lost, and it retries or wraps mid-stream errors on its own. The vendor SDKs of the other
 * wires were measured and dropped for the same family of reasons: the `openai` SDK's SSE line
 * decoder cost ~40 ms of decoding plus ~50 ms of GC on a 2,000-token stream (1.45x our plain-fetch
 * floor against a 1.2x goal), the Anthropic SDK shares that Stainless decoder and (v1.14) sends
 * `Authorization: Bearer` instead of `x-api-key`, and `@google/genai` errors carry no headers
 * either. The wire is small: JSON in, NDJSON out (`POST {baseUri}api/chat`), read with
 * `ndjsonFrames`.
 */
import type { ChatRequest } from '@crystal/core';
import { ProviderError } from '@crystal/core';
import type { ClientFactory } from '../create-client.js';
import { type ClientOptions, type Endpoint, joinUri, type ModelSettings, USER_AGENT } from '../endpoint.js';
import { classifyHttpError, errorFields, type HttpErrorInput, withKind } from '../http-error.js';
import { type FrameSource, ndjsonFrames } from '../sse.js';
import { type FrameDecoder, parseFrame, WireClient } from '../wire-client.js';
import { OllamaChunkDecoder } from './decode.js';
import { encodeRequest } from './encode.js';

export class OllamaChatClient extends WireClient<string> {
  constructor(endpoint: Endpoint, settings: ModelSettings, options: ClientOptions = {}) {
    super(endpoint, settings, options, joinUri(endpoint.baseUri, 'api/chat'));
  }

  /** Local Ollama needs no key; Ollama cloud takes a bearer key. */
  protected headers(): Record<string, string> {
    return { 'user-agent': USER_AGENT, ...(this.endpoint.apiKey ? { authorization: `Bearer ${this.endpoint.apiKey}` } : {}) };
  }

  protected encode(request: ChatRequest): unknown {
    return encodeRequest(request, { provider: this.provider, model: this.settings });
  }

  protected frames(): FrameSource<string> {
    return ndjsonFrames(this.provider, this.options.maxFrameBytes);
  }

  protected override classify(input: HttpErrorInput): ProviderError {
    return classifyOllamaError(input);
  }

  protected override incompleteMessage(): string {
    return `${this.provider} stream ended without a "done": true line (the connection closed early).`;
  }

  protected decoder(): FrameDecoder<string> {
    const inner = new OllamaChunkDecoder();
    const provider = this.provider;
    return {
      push: (line, out) => inner.push(parseLine(provider, line), out),
      get done() {
        return inner.finished;
      },
      get finished() {
        return inner.finished;
      },
    };
  }
}

function parseLine(provider: string, line: string): unknown {
  const chunk = parseFrame(provider, line, 'stream line');
  // Ollama reports a failure after the stream started as a line `{"error": "…"}`.
  if (chunk.error) {
    const fields = errorFields(chunk);
    throw new ProviderError({
      kind: 'server',
      provider,
      message: `${provider} reported an error mid-stream: ${fields.message ?? line.slice(0, 200)}`,
    });
  }
  return chunk;
}

/** Ollama cloud's plan limits ("you've reached your weekly usage limit, upgrade for higher limits"). */
const USAGE_LIMIT = /usage limit|upgrade|subscription|quota|out of credits|insufficient (credits|balance)/i;
/** llama.cpp / Ollama runner overflow messages that the shared pattern does not cover. */
const OVERFLOW = /exceeds the context window|input length exceeds|context length|context window/i;

/**
 * Ollama error bodies are `{"error": "…"}`: 404 `model "x" not found, try pulling it first`
 * stays not_found (kindForStatus, retryable per RETRY-1); a 429 or 402 naming a usage limit is
 * quota; a message naming the context length or window is context_overflow. Everything else, with Retry-After,
 * is the shared classification.
 */
export function classifyOllamaError(input: HttpErrorInput): ProviderError {
  const base = classifyHttpError(input);
  const message = errorFields(input.body).message ?? '';
  let kind = base.kind;
  if ((input.status === 429 || input.status === 402) && USAGE_LIMIT.test(message)) kind = 'quota';
  else if (input.status === 402) kind = 'quota';
  else if (OVERFLOW.test(message)) kind = 'context_overflow';
  return withKind(base, kind);
}

export const createClient: ClientFactory = (endpoint, model, options) => {
  for (const field of ['serviceTier', 'speed'] as const) {
    if (model[field] !== undefined) {
      throw new ProviderError({
        kind: 'unsupported',
        provider: endpoint.name,
        message: `The Ollama wire has no ${field === 'serviceTier' ? 'service tier' : 'speed'} setting; remove "${field}" from model '${model.id}' of provider '${endpoint.name}'.`,
      });
    }
  }
  return new OllamaChatClient(endpoint, model, options);
};
