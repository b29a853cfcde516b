/** The `config.json` schema (CONF-2), validated with zod so every error names its key path. */
import { z } from 'zod';

const positiveInt = z.number().int().positive();
const effort = z
  .enum(['default', 'off', 'none', 'minimal', 'low', 'medium', 'high', 'maximum', 'max'])
  .transform((value) => (value === 'none' ? 'off' : value === 'max' ? 'maximum' : value));

export const modelSchema = z.object({
  contextWindow: positiveInt,
  maxTokens: positiveInt.optional(),
  temperature: z.number().min(0).max(2).optional(),
  thinking: z.boolean().optional(),
  thinkingEfforts: z.array(effort).optional(),
  imageInput: z.boolean().optional(),
  audioInput: z.boolean().optional(),
  videoInput: z.boolean().optional(),
  serviceTier: z.string().optional(),
  speed: z.string().optional(),
});

export const providerSchema = z.object({
  protocol: z.enum(['responses', 'openai', 'deepseek', 'anthropic', 'gemini', 'ollama']),
  baseUri: z.url({ message: 'expected an absolute URL such as "https://api.openai.com/v1/"' }),
  apiKey: z.string().optional(),
  apiKeyEnvironment: z.string().optional(),
  requiresApiKey: z.boolean().optional(),
  models: z.record(z.string(), modelSchema),
});

const nullableLimit = positiveInt.nullable().optional();

export const executionBudgetSchema = z.union([
  z.literal('unlimited'),
  z.object({
    maximumModelCalls: nullableLimit,
    maximumToolCalls: z.number().int().min(0).nullable().optional(),
    maximumDurationSeconds: positiveInt
      .max(2147483, 'expected at most 2147483 seconds (the runtime timer maximum)')
      .nullable()
      .optional(),
  }),
]);

export const configSchema = z.object({
  provider: z.string().optional(),
  model: z.string().optional(),
  thinkingEffort: effort.optional(),
  approval: z.enum(['default', 'edit', 'full']).optional(),
  providers: z
    .record(z.string().regex(/^[A-Za-z0-9_-]+$/, 'provider names use letters, digits, - and _'), providerSchema)
    .optional(),
  retry: z
    .object({
      maxRetries: z.number().int().min(0).optional(),
      baseDelaySeconds: z.number().positive().optional(),
      backoffFactor: z.number().min(1).optional(),
      jitter: z.number().min(0).max(1).optional(),
      maxDelaySeconds: z.number().positive().optional(),
    })
    .optional(),
  executionBudget: executionBudgetSchema.optional(),
  bashTimeoutSeconds: z.union([positiveInt.max(2147483), z.null(), z.literal('unlimited')]).optional(),
  imageModel: z.object({ provider: z.string(), model: z.string(), thinkingEffort: effort.optional() }).optional(),
  images: z
    .object({
      maxImageBytes: positiveInt.optional(),
      maxPixels: positiveInt.optional(),
      maxImagesPerMessage: positiveInt.optional(),
      maxBatchBytes: positiveInt.optional(),
    })
    .optional(),
  compactionThreshold: z.number().gt(0).max(1).optional(),
});

export type Config = z.output<typeof configSchema>;
export type ProviderConfig = z.output<typeof providerSchema>;
export type ModelConfig = z.output<typeof modelSchema>;
