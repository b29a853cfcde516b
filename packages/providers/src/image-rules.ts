/**
 * Image rules every wire shares (WIRE-5, MODEL-1): the errors raised before a request when an
 * image has no source, sits where the wire cannot carry it, or goes to a text-only model.
 */
import type { ImagePart } from '@crystal/core';
import { ProviderError } from '@crystal/core';
import type { ModelSettings } from './endpoint.js';

export function imageWithoutSource(part: ImagePart, provider: string): ProviderError {
  return new ProviderError({
    kind: 'unsupported',
    provider,
    message: `An image${part.name ? ` (${part.name})` : ''} has neither bytes nor a URI; attach it again.`,
  });
}

/** An image where the wire cannot carry it is an error before sending, never a silent drop. */
export function misplacedImage(wire: string, carries: string, role: string, provider: string): ProviderError {
  return new ProviderError({
    kind: 'unsupported',
    provider,
    message: `The ${wire} wire carries images only in ${carries}; a ${role} message holds one. Remove the image from that message.`,
  });
}

/** MODEL-1: a model opts in with `imageInput: true`. */
export function requireImageModel(model: ModelSettings, provider: string): void {
  if (!model.imageInput) {
    throw new ProviderError({
      kind: 'unsupported',
      provider,
      message: `Model '${model.id}' of provider '${provider}' does not declare imageInput; set "imageInput": true in its catalog entry or remove the image.`,
    });
  }
}
