/** Builds the streaming client for an endpoint; each wire's module (and its SDK) loads only when used. */
import type { StreamingChatClient } from '@crystal/core';
import { ProviderError } from '@crystal/core';
import type { ClientOptions, Endpoint, ModelSettings } from './endpoint.js';

export async function createChatClient(
  endpoint: Endpoint,
  model: ModelSettings,
  options: ClientOptions = {},
): Promise<StreamingChatClient> {
  switch (endpoint.protocol) {
    case 'openai':
    case 'deepseek': {
      const { OpenAiChatClient } = await import('./openai-chat/client.js');
      return new OpenAiChatClient(endpoint, model, options);
    }
    default:
      throw new ProviderError({
        kind: 'unsupported',
        provider: endpoint.name,
        message: `Protocol '${endpoint.protocol}' of provider '${endpoint.name}' has no adapter in this build yet; use protocol 'openai' or 'deepseek'.`,
      });
  }
}
