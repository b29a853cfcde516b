/** Placeholder until the anthropic fake wire lands (issue 3). */
import type { WireEncoder } from '../wire.js';

export function anthropicWire(): WireEncoder {
  throw new Error("The fake provider does not speak the 'anthropic' wire yet.");
}
