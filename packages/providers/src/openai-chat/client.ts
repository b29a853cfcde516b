/**
 * The Chat Completions client (protocols `openai` and `deepseek`) through the official
 * `openai` SDK with its retries off: the engine owns retry (RETRY-1..7).
 */
import type { ChatEvent, ChatRequest, ClientCapabilities, StreamingChatClient } from '@crystal/core';
import { isProviderError, ProviderError } from '@crystal/core';
import OpenAI from 'openai';
import { type ClientOptions, type Endpoint, type ModelSettings, USER_AGENT } from '../endpoint.js';
import { abortError, classifyHttpError, classifyTransportError, isAbortError } from '../http-error.js';
import { ChatChunkDecoder } from './decode.js';
import { encodeRequest } from './encode.js';

export class OpenAiChatClient implements StreamingChatClient {
  readonly provider: string;
  readonly model: string;
  readonly capabilities: ClientCapabilities;
  private readonly sdk: OpenAI;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly settings: ModelSettings,
    options: ClientOptions = {},
  ) {
    this.provider = endpoint.name;
    this.model = settings.id;
    this.capabilities = { imageInput: settings.imageInput === true };
    this.sdk = new OpenAI({
      apiKey: endpoint.apiKey || 'none',
      baseURL: endpoint.baseUri,
      maxRetries: 0,
      timeout: options.timeoutMs ?? 10 * 60 * 1000,
      defaultHeaders: { 'User-Agent': USER_AGENT, ...(endpoint.apiKey ? {} : { Authorization: null }) },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async *stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent> {
    const body = encodeRequest(request, {
      provider: this.provider,
      model: this.settings,
      replayReasoning: this.endpoint.protocol === 'deepseek',
    });
    const decoder = new ChatChunkDecoder();
    let started = false;
    try {
      const stream = await this.sdk.chat.completions.create(
        body as unknown as OpenAI.ChatCompletionCreateParamsStreaming,
        signal ? { signal } : {},
      );
      started = true;
      for await (const chunk of stream) yield* decoder.push(chunk);
    } catch (error) {
      throw this.classify(error, started, signal);
    }
    if (signal?.aborted) throw abortError();
    if (!decoder.finished) {
      throw new ProviderError({
        kind: 'incomplete_stream',
        provider: this.provider,
        message: `${this.provider} stream ended without a finish reason.`,
      });
    }
    yield* decoder.close();
  }

  private classify(error: unknown, started: boolean, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted || isAbortError(error)) return abortError();
    if (isProviderError(error)) return error;
    if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
      return classifyHttpError({
        provider: this.provider,
        status: error.status,
        headers: error.headers,
        body: { error: error.error },
        message: error.message,
      });
    }
    return classifyTransportError(this.provider, error, started);
  }
}
