/**
 * The Gemini GenerateContent client (protocol `gemini`) over the lean transport (transport/transport.ts):
 * POST `{baseUri}v1beta/models/{model}:streamGenerateContent?alt=sse`, SSE out.
 *
 * Why not `@google/genai`: its errors carry no response headers, so a Retry-After is lost, and
 * the Stainless-style SDK decoders we measured (the `openai` SDK's SSE line decoder re-concatenates
 * its buffer per line: ~40 ms of decoding plus ~50 ms of GC on a 2,000-token stream, 1.45x our
 * plain-fetch floor against a 1.2x goal; the Anthropic SDK shares that decoder and, in v1.14,
 * sends `Authorization: Bearer` instead of `x-api-key`) taught us to keep SDKs off the hot path.
 * The wire is small: JSON in, SSE out, parsed with `eventsource-parser`.
 */
import type { ChatRequest, ProviderErrorKind } from '@crystal/core';
import { ProviderError } from '@crystal/core';
import type { ClientFactory } from '../create-client.js';
import { type ClientOptions, type Endpoint, joinUri, type ModelSettings, USER_AGENT } from '../endpoint.js';
import { classifyHttpError, type HttpErrorInput } from '../http-error.js';
import { type FrameSource, type SseEvent, sseFrames } from '../sse.js';
import { type FrameDecoder, parseFrame, WireClient } from '../wire-client.js';
import { GeminiChunkDecoder } from './decode.js';
import { encodeRequest } from './encode.js';

export class GeminiClient extends WireClient<SseEvent> {
  constructor(endpoint: Endpoint, settings: ModelSettings, options: ClientOptions = {}) {
    super(
      endpoint,
      settings,
      options,
      joinUri(endpoint.baseUri, `v1beta/models/${encodeURIComponent(modelName(settings.id))}:streamGenerateContent?alt=sse`),
    );
  }

  protected headers(): Record<string, string> {
    return { 'user-agent': USER_AGENT, ...(this.endpoint.apiKey ? { 'x-goog-api-key': this.endpoint.apiKey } : {}) };
  }

  protected encode(request: ChatRequest): unknown {
    return encodeRequest(request, { provider: this.provider, model: this.settings });
  }

  protected frames(): FrameSource<SseEvent> {
    return sseFrames(this.provider, this.options.maxFrameBytes);
  }

  protected override classify(input: HttpErrorInput): ProviderError {
    return classifyGeminiError(input);
  }

  protected override incompleteMessage(): string {
    return `${this.provider} stream ended without a finish reason.`;
  }

  protected decoder(): FrameDecoder<SseEvent> {
    const inner = new GeminiChunkDecoder();
    const provider = this.provider;
    return {
      push: (event, out) => inner.push(parseChunk(provider, event.data), out),
      done: false,
      get finished() {
        return inner.finished;
      },
      close: () => inner.close(),
    };
  }
}

/** A model id given as `models/…` (the resource name) is the same model. */
function modelName(id: string): string {
  return id.startsWith('models/') ? id.slice('models/'.length) : id;
}

function parseChunk(provider: string, data: string): unknown {
  const chunk = parseFrame(provider, data, 'stream chunk');
  // An error reported inside the stream carries the usual Google envelope.
  if (chunk.error) {
    const error = googleError(chunk);
    const status = typeof error?.code === 'number' ? error.code : 500;
    const classified = classifyGeminiError({ provider, status, body: chunk });
    throw new ProviderError({
      kind: classified.kind,
      provider,
      status,
      message: `${provider} reported an error mid-stream: ${error?.message ?? data.slice(0, 200)}`,
      ...(classified.code === undefined ? {} : { code: classified.code }),
      ...(classified.retryAfterMs === undefined ? {} : { retryAfterMs: classified.retryAfterMs }),
    });
  }
  return chunk;
}

interface GoogleError {
  readonly code?: unknown;
  readonly message?: string;
  readonly status?: string;
  readonly details?: ReadonlyArray<Record<string, unknown>>;
}

/** The `error` of a Google envelope `{error:{code, message, status, details}}` (also when wrapped in an array). */
function googleError(body: unknown): GoogleError | undefined {
  const root = Array.isArray(body) ? body[0] : body;
  if (!root || typeof root !== 'object') return undefined;
  const error = (root as { error?: unknown }).error;
  if (!error || typeof error !== 'object') return undefined;
  const e = error as Record<string, unknown>;
  return {
    code: e.code,
    ...(typeof e.message === 'string' ? { message: e.message } : {}),
    ...(typeof e.status === 'string' ? { status: e.status } : {}),
    ...(Array.isArray(e.details)
      ? { details: e.details.filter((d): d is Record<string, unknown> => !!d && typeof d === 'object') }
      : {}),
  };
}

const CONTEXT_OVERFLOW = /input token count.*exceeds the maximum|exceeds the maximum number of tokens/i;

/**
 * Google's error envelope onto core kinds, then `classifyHttpError` for everything generic
 * (status kinds, Retry-After). Note `errorFields` reads the numeric `error.code` as absent and
 * takes the `error.status` string (RESOURCE_EXHAUSTED, INVALID_ARGUMENT, …) as the code.
 *
 * - 400 INVALID_ARGUMENT "The input token count (…) exceeds the maximum number of tokens allowed (…)" → context_overflow.
 * - 400 INVALID_ARGUMENT with ErrorInfo reason API_KEY_INVALID ("API key not valid") → auth.
 * - 429 RESOURCE_EXHAUSTED is ambiguous: "You exceeded your current quota, please check your plan
 *   and billing details." is quota, unless its QuotaFailure details name only per-minute quotas
 *   (a free-tier rate limit: retryable, with the RetryInfo delay); a daily / zero-limit quota is
 *   quota; a plain "Resource has been exhausted (e.g. check quota)." stays rate_limit.
 */
export function classifyGeminiError(input: HttpErrorInput): ProviderError {
  const error = googleError(input.body);
  const base = classifyHttpError(Array.isArray(input.body) ? { ...input, body: input.body[0] } : input);
  if (!error) return base;
  const message = error.message ?? '';
  let kind: ProviderErrorKind = base.kind;
  let retryAfterMs = base.retryAfterMs;
  if (CONTEXT_OVERFLOW.test(message)) kind = 'context_overflow';
  else if (errorInfoReason(error) === 'API_KEY_INVALID' || /API key not valid/i.test(message)) kind = 'auth';
  else if (input.status === 429 || error.status === 'RESOURCE_EXHAUSTED') {
    kind = quotaKind(error, message);
    if (retryAfterMs === undefined) retryAfterMs = retryInfoMs(error);
  }
  if (kind === base.kind && retryAfterMs === base.retryAfterMs) return base;
  return new ProviderError({
    kind,
    provider: base.provider,
    message: base.message,
    ...(base.status === undefined ? {} : { status: base.status }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(base.code === undefined ? {} : { code: base.code }),
  });
}

const typeOf = (detail: Record<string, unknown>): string => (typeof detail['@type'] === 'string' ? detail['@type'] : '');

function errorInfoReason(error: GoogleError): string | undefined {
  const info = error.details?.find((d) => typeOf(d).endsWith('google.rpc.ErrorInfo'));
  return typeof info?.reason === 'string' ? info.reason : undefined;
}

function quotaKind(error: GoogleError, message: string): ProviderErrorKind {
  const failure = error.details?.find((d) => typeOf(d).endsWith('google.rpc.QuotaFailure'));
  const violations = Array.isArray(failure?.violations) ? (failure.violations as Array<Record<string, unknown>>) : [];
  if (violations.length > 0) {
    const exhausted = violations.some((v) => {
      const id = `${v.quotaId ?? ''} ${v.quotaMetric ?? ''}`;
      return /PerDay|PerMonth|PerYear/i.test(id) || v.quotaValue === '0' || v.quotaValue === 0;
    });
    return exhausted ? 'quota' : 'rate_limit';
  }
  return /exceeded your current quota|quota exceeded|billing/i.test(message) ? 'quota' : 'rate_limit';
}

/** `RetryInfo.retryDelay` is a protobuf Duration in JSON: "37s", "0.5s". */
function retryInfoMs(error: GoogleError): number | undefined {
  const info = error.details?.find((d) => typeOf(d).endsWith('google.rpc.RetryInfo'));
  const delay = info?.retryDelay;
  if (typeof delay !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}

export const createClient: ClientFactory = (endpoint, model, options) => {
  for (const field of ['serviceTier', 'speed'] as const) {
    if (model[field] !== undefined) {
      throw new ProviderError({
        kind: 'unsupported',
        provider: endpoint.name,
        message: `The Gemini wire has no ${field === 'serviceTier' ? 'service tier' : 'speed'} setting; remove "${field}" from model '${model.id}' of provider '${endpoint.name}'.`,
      });
    }
  }
  return new GeminiClient(endpoint, model, options);
};
