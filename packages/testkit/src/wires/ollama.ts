/** Placeholder until the ollama fake wire lands (issue 3). */
import type { WireEncoder } from '../wire.js';

export function ollamaWire(): WireEncoder {
  throw new Error("The fake provider does not speak the 'ollama' wire yet.");
}
