/** Client interfaces: what a wire adapter implements and what the engine calls. */
import type { ChatMessage } from './content.js';
import type { ChatEvent } from './events.js';

/** A tool as the model sees it: name, description, JSON-schema parameters. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** Thinking gear of the host; adapters map it to their wire or omit it. */
export type ThinkingEffort = 'default' | 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'maximum';

export const THINKING_EFFORTS: readonly ThinkingEffort[] = ['default', 'off', 'minimal', 'low', 'medium', 'high', 'maximum'];

/** One request. The model and sampling live in the client's options, not here. */
export interface ChatRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolSpec[];
  readonly thinking?: ThinkingEffort;
  /**
   * The request's bytes are written only once this settles (either way); the client may build
   * the request and open its connection before. The engine passes the save of the user message
   * (REL-1: on disk before the first request), so the save's disk waits and the request's
   * preparation overlap (issue 22). A client that sends nothing over a network may ignore it.
   */
  readonly sendAfter?: PromiseLike<unknown>;
}

export interface ClientCapabilities {
  readonly imageInput: boolean;
}

/** A streaming chat client (CORE-1). Throws only `ProviderError`; honours `signal` at once. */
export interface StreamingChatClient {
  readonly provider: string;
  readonly model: string;
  readonly capabilities: ClientCapabilities;
  stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<ChatEvent>;
}

/** A streaming client whose model accepts image content (CORE-2). */
export interface MultimodalChatClient extends StreamingChatClient {
  readonly capabilities: ClientCapabilities & { readonly imageInput: true };
}

export function isMultimodal(client: StreamingChatClient): client is MultimodalChatClient {
  return client.capabilities.imageInput;
}
