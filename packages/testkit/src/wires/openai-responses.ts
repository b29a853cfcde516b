/** Placeholder until the openai-responses fake wire lands (issue 3). */
import type { WireEncoder } from '../wire.js';

export function openAiResponsesWire(): WireEncoder {
  throw new Error("The fake provider does not speak the 'openai-responses' wire yet.");
}
