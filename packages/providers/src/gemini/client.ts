/** Placeholder until the gemini adapter lands (issue 3): refuses at client creation. */
import { ProviderError } from '@crystal/core';
import type { ClientFactory } from '../create-client.js';

export const createClient: ClientFactory = (endpoint) => {
  throw new ProviderError({
    kind: 'unsupported',
    provider: endpoint.name,
    message: `Protocol '${endpoint.protocol}' of provider '${endpoint.name}' has no adapter in this build yet; use protocol 'openai' or 'deepseek'.`,
  });
};
