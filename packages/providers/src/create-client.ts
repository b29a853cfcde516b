/** Builds the streaming client for an endpoint; each wire's module loads only when used (import()). */
import type { StreamingChatClient } from '@crystal/core';
import type { ClientOptions, Endpoint, ModelSettings, Protocol } from './endpoint.js';

export type ClientFactory = (endpoint: Endpoint, model: ModelSettings, options: ClientOptions) => StreamingChatClient;

const loaders: Record<Protocol, () => Promise<{ createClient: ClientFactory }>> = {
  openai: () => import('./openai-chat/client.js'),
  deepseek: () => import('./openai-chat/client.js'),
  responses: () => import('./openai-responses/client.js'),
  anthropic: () => import('./anthropic/client.js'),
  gemini: () => import('./gemini/client.js'),
  ollama: () => import('./ollama/client.js'),
};

/**
 * Creates the client. A model that declares `imageInput` gets a multimodal client (CORE-2);
 * a service tier or speed the wire cannot carry is refused here, before any request (MODEL-3).
 */
export async function createChatClient(
  endpoint: Endpoint,
  model: ModelSettings,
  options: ClientOptions = {},
): Promise<StreamingChatClient> {
  const { createClient } = await loaders[endpoint.protocol]();
  return createClient(endpoint, model, options);
}
