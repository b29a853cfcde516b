/**
 * The fake providers' model lists (SETUP-3): each wire's own list endpoint with its own shape,
 * so discovery is tested over HTTP. OpenAI-compatible `GET …/models`, Anthropic `GET
 * /v1/models`, Gemini `GET /v1beta/models`, Ollama `GET /api/tags` + `POST /api/show`.
 */

export interface FakeModel {
  readonly id: string;
  readonly contextWindow?: number;
  readonly maxTokens?: number;
  readonly vision?: boolean;
}

export const DEFAULT_FAKE_MODELS: readonly FakeModel[] = [
  { id: 'fake-model', contextWindow: 128000, maxTokens: 4096 },
  { id: 'fake-large', contextWindow: 1000000, maxTokens: 65536, vision: true },
];

export interface ModelsAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** The answer to a model-list request on `wire`, or undefined when the request is not one. */
export function answerModels(
  wire: string,
  method: string,
  url: string,
  body: unknown,
  models: readonly FakeModel[],
): ModelsAnswer | undefined {
  const path = url.split('?')[0] ?? url;
  if (wire === 'ollama') {
    if (method === 'GET' && path.endsWith('/api/tags')) {
      return {
        status: 200,
        body: {
          models: models.map((m) => ({
            name: m.id,
            model: m.id,
            modified_at: '2026-01-01T00:00:00Z',
            size: 1000,
            digest: 'f'.repeat(64),
            details: { format: 'gguf', family: 'fake', parameter_size: '8B', quantization_level: 'Q4_K_M' },
          })),
        },
      };
    }
    if (method === 'POST' && path.endsWith('/api/show')) {
      const name = (body as { model?: unknown; name?: unknown } | undefined)?.model ?? (body as { name?: unknown })?.name;
      const model = models.find((m) => m.id === name);
      if (!model) return { status: 404, body: { error: `model '${String(name)}' not found` } };
      return {
        status: 200,
        body: {
          modelfile: '',
          details: { family: 'fake' },
          model_info: {
            'general.architecture': 'fake',
            ...(model.contextWindow ? { 'fake.context_length': model.contextWindow } : {}),
          },
          capabilities: ['completion', 'tools', ...(model.vision ? ['vision'] : [])],
        },
      };
    }
    return undefined;
  }
  if (method !== 'GET') return undefined;
  if (wire === 'anthropic' && path.endsWith('/v1/models')) {
    return {
      status: 200,
      body: {
        data: models.map((m) => ({
          type: 'model',
          id: m.id,
          display_name: m.id,
          created_at: '2026-01-01T00:00:00Z',
          ...(m.contextWindow ? { max_input_tokens: m.contextWindow } : {}),
          ...(m.maxTokens ? { max_tokens: m.maxTokens } : {}),
        })),
        has_more: false,
        first_id: models[0]?.id ?? null,
        last_id: models.at(-1)?.id ?? null,
      },
    };
  }
  if (wire === 'gemini' && path.endsWith('/v1beta/models')) {
    return {
      status: 200,
      body: {
        models: [
          ...models.map((m) => ({
            name: `models/${m.id}`,
            displayName: m.id,
            version: '001',
            ...(m.contextWindow ? { inputTokenLimit: m.contextWindow } : {}),
            ...(m.maxTokens ? { outputTokenLimit: m.maxTokens } : {}),
            supportedGenerationMethods: ['generateContent', 'countTokens'],
          })),
          // Gemini lists embedding models too; discovery must leave them out.
          { name: 'models/fake-embedding', displayName: 'embedding', supportedGenerationMethods: ['embedContent'] },
        ],
      },
    };
  }
  if ((wire === 'openai' || wire === 'deepseek' || wire === 'responses') && path.endsWith('/models')) {
    return {
      status: 200,
      body: {
        object: 'list',
        data: models.map((m) => ({ id: m.id, object: 'model', created: 1767225600, owned_by: 'fake' })),
      },
    };
  }
  return undefined;
}
