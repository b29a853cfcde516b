/** Error classification shared by the wires: HTTP status, body codes and transport failures. */
import { kindForStatus, parseRetryAfter, ProviderError, type ProviderErrorKind } from '@crystal/core';

export interface HttpErrorInput {
  readonly provider: string;
  readonly status: number;
  readonly headers?: { get(name: string): string | null } | undefined;
  /** The parsed error body, if any. */
  readonly body?: unknown;
  /** A message already extracted by an SDK, if any. */
  readonly message?: string | undefined;
}

const CONTEXT_OVERFLOW =
  /context[ _]length[ _]exceeded|context window|maximum context|context length|prompt is too long|too many tokens/i;

/** Reads `error.code` / `error.type` / `error.message` from the usual error envelopes. */
export function errorFields(body: unknown): { code?: string; type?: string; message?: string } {
  const root = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const inner = root.error && typeof root.error === 'object' ? (root.error as Record<string, unknown>) : root;
  const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
  return {
    code: str(inner.code) ?? str(inner.status),
    type: str(inner.type),
    message: str(inner.message) ?? str(root.message) ?? (typeof root.error === 'string' ? root.error : undefined),
  };
}

export function classifyHttpError(input: HttpErrorInput): ProviderError {
  const fields = errorFields(input.body);
  const detail = fields.message ?? input.message ?? 'no error message';
  const code = fields.code ?? fields.type;
  let kind: ProviderErrorKind = kindForStatus(input.status);
  const marker = `${code ?? ''} ${detail}`;
  if (CONTEXT_OVERFLOW.test(marker)) kind = 'context_overflow';
  else if (/insufficient_quota|usage_not_included|quota/i.test(code ?? '')) kind = 'quota';
  else if (/invalid_prompt/i.test(code ?? '')) kind = 'invalid_prompt';
  const retryAfterMs = input.headers ? parseRetryAfter((name) => input.headers?.get(name)) : undefined;
  return new ProviderError({
    kind,
    provider: input.provider,
    status: input.status,
    message: `${input.provider} returned HTTP ${input.status}: ${detail}`,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(code === undefined ? {} : { code }),
  });
}

/**
 * Transport failures (no HTTP status): network, timeout, a cut stream, or a connection closed
 * before the server read the request (RETRY-7, typically a stale pooled keep-alive
 * connection): a reset or close before any response byte arrived.
 */
export function classifyTransportError(provider: string, error: unknown, streamStarted: boolean): ProviderError {
  const chain = causeChain(error);
  const text = chain.map((e) => `${e.name} ${e.code ?? ''} ${e.message}`).join(' | ');
  const setup = chain.find((e) => e.name === 'TransportSetupError');
  if (setup && !streamStarted) {
    return new ProviderError({
      kind: 'unknown',
      provider,
      message: `${provider} request failed: ${setup.message}`,
      cause: error,
    });
  }
  const certificate = chain.find((e) => e.code !== undefined && CERTIFICATE_CODES.test(e.code));
  if (certificate && !streamStarted) {
    // Not transient: retrying an untrusted certificate only delays the message.
    return new ProviderError({
      kind: 'unknown',
      provider,
      message: `${provider}'s TLS certificate is not trusted (${certificate.code}: ${certificate.message}). If a corporate proxy or a private CA signs it, set "caFile" in config.json or NODE_EXTRA_CA_CERTS to that CA's PEM file.`,
      cause: error,
    });
  }
  let kind: ProviderErrorKind = 'network';
  const timeout = chain.some((e) => e.name === 'TransportTimeout');
  if (timeout) kind = 'timeout';
  else if (streamStarted) kind = 'incomplete_stream';
  else if (/timed? ?out|ETIMEDOUT|UND_ERR_.*TIMEOUT/i.test(text)) kind = 'timeout';
  else if (chain.some(closedBeforeResponse)) kind = 'body_write_closed';
  const reason = chain.at(-1)?.message ?? String(error);
  return new ProviderError({
    kind,
    provider,
    message: timeout
      ? `${provider} timed out: ${reason}`
      : streamStarted
        ? `${provider} stream ended early: ${reason}`
        : kind === 'body_write_closed'
          ? `${provider} closed the connection while the request was being sent: ${reason}`
          : `${provider} request failed: ${reason}`,
    cause: error,
  });
}

const CERTIFICATE_CODES =
  /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|CERT_UNTRUSTED|ERR_TLS_CERT_ALTNAME_INVALID|CERT_SIGNATURE_FAILURE)$/;

function closedBeforeResponse(e: ErrorLike): boolean {
  if (e.code === 'EPIPE' || e.code === 'ECONNRESET') return true;
  return e.code === 'UND_ERR_SOCKET' && e.bytesRead === 0;
}

interface ErrorLike {
  name: string;
  message: string;
  code?: string;
  bytesRead?: number;
}

function causeChain(error: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    if (typeof current !== 'object') {
      chain.push({ name: 'Error', message: String(current) });
      break;
    }
    const e = current as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown; socket?: { bytesRead?: unknown } };
    chain.push({
      name: typeof e.name === 'string' ? e.name : 'Error',
      message: typeof e.message === 'string' ? e.message : '',
      ...(typeof e.code === 'string' ? { code: e.code } : {}),
      ...(typeof e.socket?.bytesRead === 'number' ? { bytesRead: e.socket.bytesRead } : {}),
    });
    current = e.cause;
  }
  return chain;
}

export function isAbortError(error: unknown): boolean {
  return (
    !!error &&
    typeof error === 'object' &&
    ((error as { name?: string }).name === 'AbortError' || (error as { name?: string }).name === 'APIUserAbortError')
  );
}

export function abortError(): Error {
  const error = new Error('The request was cancelled.');
  error.name = 'AbortError';
  return error;
}

/** The same error with another kind (a vendor's own body mapping on top of the shared one). */
export function withKind(base: ProviderError, kind: ProviderErrorKind): ProviderError {
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
