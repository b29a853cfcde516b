/** What an adapter needs to know about one provider endpoint and one model. */
import type { ThinkingEffort } from '@crystal/core';

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
  /** A fetch to use instead of the global one (tests may wrap it to observe headers). */
  readonly fetch?: typeof fetch;
  /** Idle timeout of one request, in milliseconds. */
  readonly timeoutMs?: number;
  /** Debug notes of the wire (an inferred finish, …); nothing is written when absent. */
  readonly debug?: (text: string) => void;
}

/** `baseUri` with exactly one trailing slash, then `path` appended. */
export function joinUri(baseUri: string, path: string): string {
  return `${baseUri.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

export const USER_AGENT = 'Crystal Code';
