import type { WireEncoder } from '../wire.js';
import { openAiChatWire } from './openai-chat.js';

const factories: Record<string, () => WireEncoder> = {
  openai: () => openAiChatWire(),
  deepseek: () => openAiChatWire({ name: 'deepseek' }),
};

export const WIRE_NAMES: readonly string[] = Object.keys(factories);

export function wireByName(name: string): WireEncoder {
  const factory = factories[name];
  if (!factory) throw new Error(`Unknown fake wire '${name}'. Known wires: ${WIRE_NAMES.join(', ')}.`);
  return factory();
}

export { openAiChatWire };
