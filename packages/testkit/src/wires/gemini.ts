/** Placeholder until the gemini fake wire lands (issue 3). */
import type { WireEncoder } from '../wire.js';

export function geminiWire(): WireEncoder {
  throw new Error("The fake provider does not speak the 'gemini' wire yet.");
}
