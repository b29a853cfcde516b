/**
 * SEC-9: provider error text is capped and key-like strings in it are redacted before it
 * reaches a terminal, a session file or a log. A provider (or a proxy in front of it) may echo
 * the request's key, an `Authorization` header or a token back in its error body.
 */

/** The most of an error body that is read from the network. */
export const ERROR_BODY_READ_BYTES = 64 * 1024;
/** The most of an error message that is kept. */
export const ERROR_TEXT_MAX_CHARS = 4096;

const REDACTED = '[redacted]';

const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  // Bearer and Basic credentials, as in an echoed Authorization header.
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  // OpenAI / Anthropic / DeepSeek style keys: sk-..., sk-ant-..., sk-proj-...
  [/\bsk-[A-Za-z0-9_-]{8,}/g, `sk-${REDACTED}`],
  // Google API keys.
  [/\bAIza[0-9A-Za-z_-]{20,}/g, REDACTED],
  // key-ish names followed by a long token: api_key=..., "x-api-key": "...", token: ..., key=...
  [
    /((?:api[_-]?key|x-api-key|x-goog-api-key|access[_-]?token|auth[_-]?token|token|secret|password|authorization|key)["']?\s*[:=]\s*["']?)([A-Za-z0-9._~+/-]{16,}={0,2})/gi,
    `$1${REDACTED}`,
  ],
];

/** Redacts `secrets` (the request's own key values) and key-like strings, then caps the text. */
export function cleanErrorText(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 6) out = out.split(secret).join(REDACTED);
  }
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  if (out.length > ERROR_TEXT_MAX_CHARS) {
    out = `${out.slice(0, ERROR_TEXT_MAX_CHARS)}… (${out.length - ERROR_TEXT_MAX_CHARS} more characters cut)`;
  }
  return out;
}
