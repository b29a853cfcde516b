import { defineContractSuite, type FoundImage } from './contract/suite.js';

type Part = { type: string; image_url?: string };
type Item = { type?: string; role?: string; content?: string | Part[]; output?: string | Part[] };

function imageOf(part: Part): FoundImage[] {
  if (part.type !== 'input_image' || typeof part.image_url !== 'string') return [];
  const match = /^data:([^;]+);base64,(.*)$/.exec(part.image_url);
  return [match ? { mime: match[1], data: match[2] } : { uri: part.image_url }];
}

function inputOf(body: unknown): Item[] {
  return (body as { input: Item[] }).input;
}

/** Images in `input_image` parts of user message items. */
function userImages(body: unknown): FoundImage[] {
  return inputOf(body)
    .filter((item) => item.role === 'user' && Array.isArray(item.content))
    .flatMap((item) => (item.content as Part[]).flatMap(imageOf));
}

/** Images in the content array of `function_call_output` items. */
function toolResultImages(body: unknown): FoundImage[] {
  return inputOf(body)
    .filter((item) => item.type === 'function_call_output' && Array.isArray(item.output))
    .flatMap((item) => (item.output as Part[]).flatMap(imageOf));
}

/** OpenAI's error envelope, as the Responses endpoint returns it. */
const responsesErrors = {
  quota: {
    status: 429,
    body: {
      error: {
        message: 'You exceeded your current quota, please check your plan and billing details.',
        type: 'insufficient_quota',
        code: 'insufficient_quota',
        param: null,
      },
    },
  },
  contextOverflow: {
    status: 400,
    body: {
      error: {
        message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
        param: 'input',
      },
    },
  },
  invalidPrompt: {
    status: 400,
    body: {
      error: {
        message:
          'Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt.',
        type: 'invalid_request_error',
        code: 'invalid_prompt',
        param: null,
      },
    },
  },
};

defineContractSuite({
  protocol: 'responses',
  // `completed` is the response status; the others are `incomplete_details.reason` values
  // (`other` stands for any reason this adapter does not know).
  finishes: { stop: 'completed', length: 'max_output_tokens', contentFilter: 'content_filter', other: 'turn_limit' },
  errors: responsesErrors,
  userImages,
  toolResultImages,
  imageUri: true,
});
