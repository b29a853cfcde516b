/**
 * Model discovery (SETUP-3): what a provider serves, from each wire's own list endpoint.
 * OpenAI-compatible and DeepSeek `GET models`, Anthropic `GET v1/models`, Gemini
 * `GET v1beta/models`, Ollama `GET api/tags` plus `POST api/show` per model for its real
 * context window. One cheap request (or one per Ollama model) and no streaming, so it also
 * serves as the key check of `crystal login`.
 */
import { ProviderError } from '@crystal/core';
import { type Endpoint, joinUri, USER_AGENT } from './endpoint.js';
import { abortError, classifyHttpError, classifyTransportError, isAbortError } from './http-error.js';
import { cleanProviderError } from './http.js';
import { defaultTransport, type Transport, type TransportResponse } from './transport/transport.js';

/** A model list is JSON of a few hundred kilobytes at most (OpenRouter's is ~1 MB); more is cut. */
const MAX_LIST_BYTES = 8 * 1024 * 1024;

export interface ServedModel {
  readonly id: string;
  readonly displayName?: string;
  /** Input context window in tokens, when the endpoint tells. */
  readonly contextWindow?: number;
  /** Maximum output tokens, when the endpoint tells. */
  readonly maxTokens?: number;
  readonly imageInput?: boolean;
  readonly thinking?: boolean;
}

export interface ListModelsOptions {
  /** The HTTP transport (proxies, CA file); the process-wide default when absent. */
  readonly transport?: Transport | undefined;
  readonly signal?: AbortSignal;
  /** Per request; default 15 s, so a hung server is an error, not a hang. */
  readonly timeoutMs?: number;
}

export async function listServedModels(endpoint: Endpoint, options: ListModelsOptions = {}): Promise<ServedModel[]> {
  let models: ServedModel[];
  try {
    models = await listRaw(endpoint, options);
  } catch (error) {
    // SEC-9: an error text never carries the key that was sent.
    throw error instanceof ProviderError ? cleanProviderError(error, [endpoint.apiKey]) : error;
  }
  return models
    .filter(printable)
    .map((m) => (m.displayName !== undefined && !CONTROL.test(m.displayName) ? m : { ...m, displayName: undefined }));
}

/** A hostile or broken server must not put terminal escapes on the operator's screen. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
function printable(model: ServedModel): boolean {
  return model.id !== '' && model.id.length <= 256 && !CONTROL.test(model.id);
}

function listRaw(endpoint: Endpoint, options: ListModelsOptions): Promise<ServedModel[]> {
  switch (endpoint.protocol) {
    case 'openai':
    case 'responses':
    case 'deepseek':
      return listOpenAi(endpoint, options);
    case 'anthropic':
      return listAnthropic(endpoint, options);
    case 'gemini':
      return listGemini(endpoint, options);
    case 'ollama':
      return listOllama(endpoint, options);
  }
}

async function listOpenAi(endpoint: Endpoint, options: ListModelsOptions): Promise<ServedModel[]> {
  const headers: Record<string, string> = endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {};
  const body = (await getJson(endpoint, joinUri(endpoint.baseUri, 'models'), headers, options)) as {
    data?: Array<{ id?: unknown; context_length?: unknown; context_window?: unknown; max_model_len?: unknown }>;
  };
  return (body.data ?? [])
    .filter((m) => typeof m.id === 'string')
    .map((m) => {
      // Many OpenAI-compatible servers (vLLM, OpenRouter, LM Studio) add a context length.
      const context = positive(m.context_length) ?? positive(m.context_window) ?? positive(m.max_model_len);
      return { id: m.id as string, ...(context ? { contextWindow: context } : {}) };
    });
}

async function listAnthropic(endpoint: Endpoint, options: ListModelsOptions): Promise<ServedModel[]> {
  const headers = {
    'anthropic-version': '2023-06-01',
    ...(endpoint.apiKey ? { 'x-api-key': endpoint.apiKey } : {}),
  };
  const out: ServedModel[] = [];
  let after: string | undefined;
  for (let page = 0; page < 20; page++) {
    const url = joinUri(endpoint.baseUri, `v1/models?limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ''}`);
    const body = (await getJson(endpoint, url, headers, options)) as {
      data?: Array<{ id?: unknown; display_name?: unknown; max_input_tokens?: unknown; max_tokens?: unknown }>;
      has_more?: unknown;
      last_id?: unknown;
    };
    for (const m of body.data ?? []) {
      if (typeof m.id !== 'string') continue;
      const context = positive(m.max_input_tokens);
      const max = positive(m.max_tokens);
      out.push({
        id: m.id,
        ...(typeof m.display_name === 'string' ? { displayName: m.display_name } : {}),
        ...(context ? { contextWindow: context } : {}),
        ...(max ? { maxTokens: max } : {}),
      });
    }
    if (body.has_more !== true || typeof body.last_id !== 'string') break;
    after = body.last_id;
  }
  return out;
}

async function listGemini(endpoint: Endpoint, options: ListModelsOptions): Promise<ServedModel[]> {
  const headers: Record<string, string> = endpoint.apiKey ? { 'x-goog-api-key': endpoint.apiKey } : {};
  const out: ServedModel[] = [];
  let token: string | undefined;
  for (let page = 0; page < 20; page++) {
    const url = joinUri(endpoint.baseUri, `v1beta/models?pageSize=1000${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`);
    const body = (await getJson(endpoint, url, headers, options)) as {
      models?: Array<{
        name?: unknown;
        displayName?: unknown;
        inputTokenLimit?: unknown;
        outputTokenLimit?: unknown;
        supportedGenerationMethods?: unknown;
        thinking?: unknown;
      }>;
      nextPageToken?: unknown;
    };
    for (const m of body.models ?? []) {
      if (typeof m.name !== 'string') continue;
      const methods = Array.isArray(m.supportedGenerationMethods) ? m.supportedGenerationMethods : undefined;
      // Embedding and other non-chat models cannot run a turn.
      if (methods && !methods.includes('generateContent') && !methods.includes('streamGenerateContent')) continue;
      const context = positive(m.inputTokenLimit);
      const max = positive(m.outputTokenLimit);
      out.push({
        id: m.name.replace(/^models\//, ''),
        ...(typeof m.displayName === 'string' ? { displayName: m.displayName } : {}),
        ...(context ? { contextWindow: context } : {}),
        ...(max ? { maxTokens: max } : {}),
        ...(m.thinking === true ? { thinking: true } : {}),
      });
    }
    if (typeof body.nextPageToken !== 'string' || body.nextPageToken === '') break;
    token = body.nextPageToken;
  }
  return out;
}

async function listOllama(endpoint: Endpoint, options: ListModelsOptions): Promise<ServedModel[]> {
  const headers: Record<string, string> = endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {};
  const tags = (await getJson(endpoint, joinUri(endpoint.baseUri, 'api/tags'), headers, options)) as {
    models?: Array<{ name?: unknown; model?: unknown }>;
  };
  const names = (tags.models ?? [])
    .map((m) => (typeof m.name === 'string' ? m.name : typeof m.model === 'string' ? m.model : undefined))
    .filter((n): n is string => n !== undefined);
  const out: ServedModel[] = [];
  // api/show per model, a few at a time (a server with hundreds of models answers in batches).
  const shows: unknown[] = [];
  for (let i = 0; i < names.length; i += 8) {
    const batch = names.slice(i, i + 8);
    shows.push(
      ...(await Promise.all(
        batch.map((name) => getJson(endpoint, joinUri(endpoint.baseUri, 'api/show'), headers, options, { model: name })),
      )),
    );
  }
  for (const [index, name] of names.entries()) {
    const show = shows[index] as {
      model_info?: Record<string, unknown>;
      capabilities?: unknown;
    };
    let context: number | undefined;
    for (const [key, value] of Object.entries(show.model_info ?? {})) {
      if (key.endsWith('.context_length')) context = positive(value) ?? context;
    }
    const capabilities = Array.isArray(show.capabilities) ? show.capabilities : [];
    out.push({
      id: name,
      ...(context ? { contextWindow: context } : {}),
      ...(capabilities.includes('vision') ? { imageInput: true } : {}),
      ...(capabilities.includes('thinking') ? { thinking: true } : {}),
    });
  }
  return out;
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

async function getJson(
  endpoint: Endpoint,
  url: string,
  headers: Record<string, string>,
  options: ListModelsOptions,
  post?: unknown,
): Promise<unknown> {
  const transport = options.transport ?? defaultTransport();
  const timeoutMs = options.timeoutMs ?? 15_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: TransportResponse | undefined;
  let text: string;
  const timedOut = (): ProviderError =>
    new ProviderError({
      kind: 'timeout',
      provider: endpoint.name,
      message: `${endpoint.name} did not answer ${redact(url)} within ${Math.round(timeoutMs / 1000)} s.`,
    });
  // The whole exchange, body included, is bounded: a server that stalls mid-body is a timeout.
  const onTimeout = (): void => response?.destroy(timedOut());
  signal.addEventListener('abort', onTimeout, { once: true });
  try {
    response = await transport.request({
      url,
      method: post === undefined ? 'GET' : 'POST',
      headers: {
        accept: 'application/json',
        'user-agent': USER_AGENT,
        ...(post === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(post === undefined ? {} : { body: JSON.stringify(post) }),
      signal,
      connectTimeoutMs: timeoutMs,
      firstByteTimeoutMs: timeoutMs,
    });
    text = await response.text(MAX_LIST_BYTES);
  } catch (error) {
    if (options.signal?.aborted) throw abortError();
    if (timeout.aborted || isAbortError(error)) throw timedOut();
    throw classifyTransportError(endpoint.name, error, false);
  } finally {
    signal.removeEventListener('abort', onTimeout);
  }
  if (timeout.aborted) throw timedOut();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.status < 200 || response.status >= 300) {
    throw classifyHttpError({
      provider: endpoint.name,
      status: response.status,
      headers: response.headers,
      body: body ?? (text === '' ? undefined : { error: { message: text.slice(0, 300) } }),
    });
  }
  if (body === undefined || body === null || typeof body !== 'object') {
    throw new ProviderError({
      kind: 'unknown',
      provider: endpoint.name,
      message: `${endpoint.name} answered ${redact(url)} with something that is not a JSON object; is baseUri "${endpoint.baseUri}" right?`,
    });
  }
  return body;
}

function redact(url: string): string {
  return url.replace(/([?&]key=)[^&]*/, '$1...');
}
