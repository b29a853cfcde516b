import { defineContractSuite, type FoundImage } from './contract/suite.js';

type Source = { type: string; media_type?: string; data?: string; url?: string };
type Block = { type: string; source?: Source; content?: Block[] };
type Message = { role: string; content: Block[] };

function found(block: Block): FoundImage | undefined {
  if (block.type !== 'image' || !block.source) return undefined;
  const { source } = block;
  return source.type === 'base64' ? { mime: source.media_type, data: source.data } : { uri: source.url };
}

/** Image blocks directly in user content (not inside a tool_result). */
function userImages(body: unknown): FoundImage[] {
  const out: FoundImage[] = [];
  for (const message of (body as { messages: Message[] }).messages) {
    if (message.role !== 'user') continue;
    for (const block of message.content) {
      const image = found(block);
      if (image) out.push(image);
    }
  }
  return out;
}

/** Image blocks inside tool_result content (which sits in user messages). */
function toolResultImages(body: unknown): FoundImage[] {
  const out: FoundImage[] = [];
  for (const message of (body as { messages: Message[] }).messages) {
    if (message.role !== 'user') continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      for (const inner of block.content ?? []) {
        const image = found(inner);
        if (image) out.push(image);
      }
    }
  }
  return out;
}

defineContractSuite({
  protocol: 'anthropic',
  finishes: { stop: 'end_turn', length: 'max_tokens', contentFilter: 'refusal', other: 'pause_turn' },
  errors: {
    quota: {
      status: 400,
      body: {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message:
            'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
        },
      },
    },
    contextOverflow: {
      status: 400,
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'prompt is too long: 215000 tokens > 200000 maximum' },
      },
    },
  },
  userImages,
  toolResultImages,
  imageUri: true,
});
