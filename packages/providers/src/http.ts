/**
 * One streaming POST over fetch: a non-2xx answer becomes a classified ProviderError with its
 * headers and body; a transport failure becomes network, timeout or body_write_closed.
 */
import { ProviderError } from '@crystal/core';
import { abortError, classifyHttpError, classifyTransportError, type HttpErrorInput, isAbortError } from './http-error.js';

export interface PostOptions {
  readonly provider: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly signal?: AbortSignal | undefined;
  readonly fetch?: typeof fetch | undefined;
  /** A vendor's own mapping of an error answer (its quota or overflow shapes); defaults to classifyHttpError. */
  readonly classify?: ((input: HttpErrorInput) => ProviderError) | undefined;
}

export async function postStream(options: PostOptions): Promise<ReadableStream<Uint8Array>> {
  const doFetch = options.fetch ?? fetch;
  let response: Response;
  try {
    response = await doFetch(options.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream, application/x-ndjson, application/json',
        ...options.headers,
      },
      body: JSON.stringify(options.body),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (options.signal?.aborted || isAbortError(error)) throw abortError();
    throw classifyTransportError(options.provider, error, false);
  }
  if (!response.ok) {
    const text = await response.text().catch(() => '');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      body = text === '' ? undefined : { error: { message: text.slice(0, 500) } };
    }
    throw (options.classify ?? classifyHttpError)({
      provider: options.provider,
      status: response.status,
      headers: response.headers,
      body,
    });
  }
  if (!response.body) {
    throw new ProviderError({
      kind: 'incomplete_stream',
      provider: options.provider,
      message: `${options.provider} sent no response body.`,
    });
  }
  return response.body;
}

/** Maps an error thrown while a stream was being read. */
export function streamFailure(provider: string, error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted || isAbortError(error)) return abortError();
  if (error instanceof ProviderError) return error;
  return classifyTransportError(provider, error, true);
}
