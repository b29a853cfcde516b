import type { WireEncoder } from '../wire.js';
import { anthropicWire } from './anthropic.js';
import { geminiWire } from './gemini.js';
import { ollamaWire } from './ollama.js';
import { openAiChatWire } from './openai-chat.js';
import { openAiResponsesWire } from './openai-responses.js';

/** Wire names are the config protocols, so a test can run the same script against any wire. */
const factories: Record<string, () => WireEncoder> = {
  openai: () => openAiChatWire(),
  deepseek: () => openAiChatWire({ name: 'deepseek' }),
  responses: () => openAiResponsesWire(),
  anthropic: () => anthropicWire(),
  gemini: () => geminiWire(),
  ollama: () => ollamaWire(),
};

export const WIRE_NAMES: readonly string[] = Object.keys(factories);

export function wireByName(name: string): WireEncoder {
  const factory = factories[name];
  if (!factory) throw new Error(`Unknown fake wire '${name}'. Known wires: ${WIRE_NAMES.join(', ')}.`);
  return factory();
}

export { anthropicWire, geminiWire, ollamaWire, openAiChatWire, openAiResponsesWire };
