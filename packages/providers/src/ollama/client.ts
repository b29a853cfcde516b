/**
 * The Ollama Chat client (protocol `ollama`: local Ollama and Ollama cloud) over plain fetch.
 *
 * Why not the `ollama` npm package: its errors carry no response headers, so a Retry-After on a
 * 429 is lost, and it retries or wraps mid-stream errors on its own. The vendor SDKs of the other
 * wires were measured and dropped for the same family of reasons: the `openai` SDK's SSE line
 * decoder cost ~40 ms of decoding plus ~50 ms of GC on a 2,000-token stream (1.45x our plain-fetch
 * floor against a 1.2x goal), the Anthropic SDK shares that Stainless decoder and (v1.14) sends
 * `Authorization: Bearer` instead of `x-api-key`, and `@google/genai` errors carry no headers
 * either. The wire is small: JSON in, NDJSON out (`POST {baseUri}api/chat`), read with
 * `ndjsonLines`.
 */
import type { ChatEvent, ChatRequest, ClientCapabilities, StreamingChatClient } from '@crystal/core';
import { ProviderError } from '@crystal/core';
import { type ClientOptions, type Endpoint, joinUri, type ModelSettings, USER_AGENT } from '../endpoint.js';
import { abortError, classifyHttpError, errorFields, type HttpErrorInput } from '../http-error.js';
import { flattenBatches } from '../event-batches.js';
import { postStream, streamFailure } from '../http.js';
import { ndjsonLineBatches } from '../sse.js';
import type { ClientFactory } from '../create-client.js';
import { OllamaChunkDecoder } from './decode.js';
import { encodeRequest } from './encode.js';

export class OllamaChatClient implements StreamingChatClient {
  readonly provider: string;
  readonly model: string;
  readonly capabilities: ClientCapabilities;
  private readonly url: string;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly settings: ModelSettings,
    private readonly options: ClientOptions = {},
  ) {
    this.provider = endpoint.name;
    this.model = settings.id;
    this.capabilities = { imageInput: settings.imageInput === true };
    this.url = joinUri(endpoint.baseUri, 'api/chat');
  }

  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
    return flattenBatches(this.batches(request, signal), signal);
  }

  private async *batches(request: ChatRequest, signal?: AbortSignal): AsyncGenerator<ChatEvent[]> {
    const body = encodeRequest(request, { provider: this.provider, model: this.settings });
    const headers: Record<string, string> = { 'user-agent': USER_AGENT };
    // Local Ollama needs no key; Ollama cloud takes a bearer key.
    if (this.endpoint.apiKey) headers.authorization = `Bearer ${this.endpoint.apiKey}`;
    const stream = await postStream({
      provider: this.provider,
      url: this.url,
      headers,
      body,
      signal,
      fetch: this.options.fetch,
      classify: classifyOllamaError,
    });
    const decoder = new OllamaChunkDecoder();
    try {
      for await (const lines of ndjsonLineBatches(stream)) {
        if (signal?.aborted) throw abortError();
        const out: ChatEvent[] = [];
        try {
          for (const line of lines) {
            for (const e of decoder.push(parseLine(this.provider, line))) out.push(e);
            if (decoder.finished) break;
          }
        } catch (error) {
          // Events decoded before a mid-stream error still reach the consumer first.
          if (out.length > 0) yield out;
          throw error;
        }
        yield out;
        if (decoder.finished) break;
      }
    } catch (error) {
      throw streamFailure(this.provider, error, signal);
    }
    if (signal?.aborted) throw abortError();
    if (!decoder.finished) {
      throw new ProviderError({
        kind: 'incomplete_stream',
        provider: this.provider,
        message: `${this.provider} stream ended without a "done": true line (the connection closed early).`,
      });
    }
  }
}

function parseLine(provider: string, line: string): unknown {
  let chunk: unknown;
  try {
    chunk = JSON.parse(line);
  } catch {
    throw new ProviderError({
      kind: 'incomplete_stream',
      provider,
      message: `${provider} sent a stream line that is not JSON: ${line.slice(0, 200)}`,
    });
  }
  // Ollama reports a failure after the stream started as a line `{"error": "…"}`.
  if (chunk && typeof chunk === 'object' && 'error' in chunk && (chunk as { error: unknown }).error) {
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
  if (kind === base.kind) return base;
  return new ProviderError({
    kind,
    provider: base.provider,
    message: base.message,
    ...(base.status === undefined ? {} : { status: base.status }),
    ...(base.retryAfterMs === undefined ? {} : { retryAfterMs: base.retryAfterMs }),
    ...(base.code === undefined ? {} : { code: base.code }),
  });
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
