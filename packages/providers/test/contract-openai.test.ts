import { defineContractSuite, type FoundImage } from './contract/suite.js';

type Part = { type: string; image_url?: { url: string } };
type Message = { role: string; content: string | Part[] | null };

function imagesOf(body: unknown, role: string): FoundImage[] {
  const out: FoundImage[] = [];
  for (const message of (body as { messages: Message[] }).messages) {
    if (message.role !== role || !Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part.type !== 'image_url' || !part.image_url) continue;
      const match = /^data:([^;]+);base64,(.*)$/.exec(part.image_url.url);
      out.push(match ? { mime: match[1], data: match[2] } : { uri: part.image_url.url });
    }
  }
  return out;
}

const openAiErrors = {
  quota: {
    status: 429,
    body: {
      error: { message: 'You exceeded your current quota.', type: 'insufficient_quota', code: 'insufficient_quota', param: null },
    },
  },
  contextOverflow: {
    status: 400,
    body: {
      error: {
        message: "This model's maximum context length is 128000 tokens.",
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
        param: 'messages',
      },
    },
  },
  invalidPrompt: {
    status: 400,
    body: { error: { message: 'Invalid prompt: flagged.', type: 'invalid_request_error', code: 'invalid_prompt', param: null } },
  },
};

for (const protocol of ['openai', 'deepseek'] as const) {
  defineContractSuite({
    protocol,
    finishes: { stop: 'stop', length: 'length', contentFilter: 'content_filter', other: 'insufficient_system_resource' },
    errors: openAiErrors,
    userImages: (body) => imagesOf(body, 'user'),
    toolResultImages: (body) => imagesOf(body, 'tool'),
    imageUri: true,
  });
}
