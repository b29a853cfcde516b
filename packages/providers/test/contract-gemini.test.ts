import { defineContractSuite, type FoundImage } from './contract/suite.js';

type Media = { inlineData?: { mimeType: string; data: string }; fileData?: { mimeType: string; fileUri: string } };
type Part = Media & { functionResponse?: { parts?: Media[] } };
type Content = { role: string; parts: Part[] };

function found(part: Media): FoundImage | undefined {
  if (part.inlineData) return { mime: part.inlineData.mimeType, data: part.inlineData.data };
  if (part.fileData) return { mime: part.fileData.mimeType, uri: part.fileData.fileUri };
  return undefined;
}

/** Images that are user parts of their own (not inside a functionResponse). */
function userImages(body: unknown): FoundImage[] {
  const out: FoundImage[] = [];
  for (const content of (body as { contents: Content[] }).contents) {
    if (content.role !== 'user') continue;
    for (const part of content.parts) {
      const image = found(part);
      if (image) out.push(image);
    }
  }
  return out;
}

/** WIRE-2: tool-result images sit inside the functionResponse part. */
function toolResultImages(body: unknown): FoundImage[] {
  const out: FoundImage[] = [];
  for (const content of (body as { contents: Content[] }).contents) {
    for (const part of content.parts) {
      for (const media of part.functionResponse?.parts ?? []) {
        const image = found(media);
        if (image) out.push(image);
      }
    }
  }
  return out;
}

defineContractSuite({
  protocol: 'gemini',
  finishes: { stop: 'STOP', length: 'MAX_TOKENS', contentFilter: 'SAFETY', other: 'OTHER' },
  errors: {
    quota: {
      status: 429,
      body: {
        error: {
          code: 429,
          message: 'You exceeded your current quota, please check your plan and billing details.',
          status: 'RESOURCE_EXHAUSTED',
        },
      },
    },
    contextOverflow: {
      status: 400,
      body: {
        error: {
          code: 400,
          message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
          status: 'INVALID_ARGUMENT',
        },
      },
    },
  },
  userImages,
  toolResultImages,
  imageUri: true,
});
