import { defineContractSuite, type FoundImage } from './contract/suite.js';

type Message = { role: string; content: string; images?: string[] };

/** Ollama carries images as raw base64 on the message's `images` array: no MIME, no URI. */
function imagesOf(body: unknown, role: string): FoundImage[] {
  const out: FoundImage[] = [];
  for (const message of (body as { messages: Message[] }).messages) {
    if (message.role !== role || !Array.isArray(message.images)) continue;
    for (const data of message.images) out.push({ data });
  }
  return out;
}

defineContractSuite({
  protocol: 'ollama',
  // Ollama has no content filter of its own; `content_filter` is what Ollama-compatible gateways send.
  finishes: { stop: 'stop', length: 'length', contentFilter: 'content_filter', other: 'unload' },
  errors: {
    quota: { status: 429, body: { error: "you've reached your weekly usage limit, upgrade for higher limits" } },
    contextOverflow: {
      status: 400,
      body: { error: 'the input length exceeds the context length' },
    },
  },
  userImages: (body) => imagesOf(body, 'user'),
  toolResultImages: (body) => imagesOf(body, 'tool'),
  imageUri: false,
});
