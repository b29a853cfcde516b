/** What an adapter needs to know about one provider endpoint and one model. */
import type { ThinkingEffort } from '@crystal/core';
import type { Transport } from './transport/transport.js';

export type Protocol = 'responses' | 'openai' | 'deepseek' | 'anthropic' | 'gemini' | 'ollama';

export const PROTOCOLS: readonly Protocol[] = ['responses', 'openai', 'deepseek', 'anthropic', 'gemini', 'ollama'];

export interface Endpoint {
  /** The provider's name in the catalog (used in error messages). */
  readonly name: string;
  readonly protocol: Protocol;
  /** The API root as the vendor SDK takes it; the adapter appends the wire's path. */
  readonly baseUri: string;
  /** Resolved key; empty or undefined sends no auth header. */
  readonly apiKey?: string;
}

export interface ModelSettings {
  readonly id: string;
  readonly contextWindow?: number;
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly thinking?: boolean;
  readonly thinkingEfforts?: readonly ThinkingEffort[];
  readonly imageInput?: boolean;
  /** Stored declarations only (MODEL-2): no adapter reads them. */
  readonly audioInput?: boolean;
  readonly videoInput?: boolean;
  readonly serviceTier?: string;
  readonly speed?: string;
}

export interface ClientOptions {
  /** The HTTP transport (proxies, CA file); the process-wide default when absent. */
  readonly transport?: Transport | undefined;
  /** REL-5: time to open a connection (`retry.connectTimeoutSeconds`). */
  readonly connectTimeoutMs?: number | undefined;
  /** REL-5: time from the connection to the response headers (`retry.firstByteTimeoutSeconds`). */
  readonly firstByteTimeoutMs?: number | undefined;
  /** REL-5: time without a complete stream event (`retry.idleTimeoutSeconds`). */
  readonly idleTimeoutMs?: number | undefined;
  /** REL-8: the largest stream frame buffered (default MAX_FRAME_BYTES). */
  readonly maxFrameBytes?: number | undefined;
  /** Debug notes of the wire (an inferred finish, …); nothing is written when absent. */
  readonly debug?: ((text: string) => void) | undefined;
}

/** REL-5 defaults: the peers' 300 s stream watchdog; a connection that takes 30 s is not coming. */
export const DEFAULT_TIMEOUTS = {
  connectTimeoutMs: 30_000,
  firstByteTimeoutMs: 300_000,
  idleTimeoutMs: 300_000,
} as const;

/** `baseUri` with exactly one trailing slash, then `path` appended. */
export function joinUri(baseUri: string, path: string): string {
  return `${baseUri.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

export const USER_AGENT = 'Crystal Code';
