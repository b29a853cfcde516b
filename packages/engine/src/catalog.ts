/** The provider catalog: built-in starters (CONF-3) overlaid by `config.json` → `providers` (CONF-2). */
import type { ModelSettings } from '@crystal/providers';
import type { Config, ProviderConfig } from './config/schema.js';
import { UsageError } from './errors.js';

export const STARTER_PROVIDERS: Readonly<Record<string, ProviderConfig>> = {
  openai: {
    protocol: 'openai',
    baseUri: 'https://api.openai.com/v1/',
    models: {
      'gpt-5.6-sol': { contextWindow: 400000, imageInput: true },
      'gpt-5.6-terra': { contextWindow: 400000, imageInput: true },
      'gpt-5.6-luna': { contextWindow: 400000, imageInput: true },
    },
  },
  anthropic: {
    protocol: 'anthropic',
    baseUri: 'https://api.anthropic.com/',
    models: { 'claude-sonnet-4-5': { contextWindow: 200000, maxTokens: 32000, thinking: true, imageInput: true } },
  },
  deepseek: {
    protocol: 'deepseek',
    baseUri: 'https://api.deepseek.com/',
    models: {
      'deepseek-flash': { contextWindow: 1000000, thinking: true, thinkingEfforts: ['low', 'high', 'maximum'] },
      'deepseek-v4-pro': { contextWindow: 1000000, thinking: true, thinkingEfforts: ['low', 'high', 'maximum'] },
    },
  },
  gemini: {
    protocol: 'gemini',
    baseUri: 'https://generativelanguage.googleapis.com/',
    models: {
      'gemini-3.8-flash': { contextWindow: 1000000, thinking: true, imageInput: true },
      'gemini-3.1-pro-preview': { contextWindow: 1000000, thinking: true, imageInput: true },
    },
  },
  ollama: {
    protocol: 'ollama',
    baseUri: 'http://127.0.0.1:11434/',
    requiresApiKey: false,
    models: { 'qwen3:8b': { contextWindow: 4096 } },
  },
};

export const DEFAULT_PROVIDER = 'deepseek';
export const DEFAULT_MODEL = 'deepseek-flash';

/**
 * The catalog: starters, then each `providers` entry. An entry for a built-in provider
 * overlays it (its `models` add to the starter's), so `{"deepseek": {"apiKey": "..."}}` works
 * (SETUP-4); load.ts has checked that any other entry is complete.
 */
export function catalogOf(config: Config): Record<string, ProviderConfig> {
  const catalog: Record<string, ProviderConfig> = { ...STARTER_PROVIDERS };
  for (const [name, entry] of Object.entries(config.providers ?? {})) {
    const base = STARTER_PROVIDERS[name];
    const defined = Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined));
    const models = SERVED_ENTRIES.has(entry) ? entry.models : { ...base?.models, ...(entry.models ?? {}) };
    catalog[name] = (base ? { ...base, ...defined, models } : defined) as ProviderConfig;
  }
  return catalog;
}

/** Entries whose models are what the server lists right now: they replace the starter's guesses. */
export const SERVED_ENTRIES = new WeakSet<object>();

export interface Selection {
  readonly providerName: string;
  readonly provider: ProviderConfig;
  readonly model: ModelSettings;
}

/** The provider the flags (CLI-6) and config choose, before the catalog is asked. */
export function chosenProvider(
  config: Pick<Config, 'provider'>,
  flags: { provider?: string | undefined; model?: string | undefined },
): string {
  return flags.provider ?? config.provider ?? DEFAULT_PROVIDER;
}

/** The model id named by the flags or by config for that provider; undefined leaves it to the catalog. */
export function chosenModel(
  config: Pick<Config, 'provider' | 'model'>,
  flags: { provider?: string | undefined; model?: string | undefined },
): string | undefined {
  const sameProvider = flags.provider === undefined || flags.provider === config.provider;
  return flags.model ?? (sameProvider ? config.model : undefined);
}

/** Picks provider and model: flags (CLI-6) over config; a model outside the catalog is refused (CONF-6). */
export function selectModel(
  config: Config,
  flags: { provider?: string | undefined; model?: string | undefined } = {},
): Selection {
  const catalog = catalogOf(config);
  const providerName = chosenProvider(config, flags);
  // REL-12: own entries only; "constructor" or "toString" are not providers or models.
  const provider = Object.hasOwn(catalog, providerName) ? catalog[providerName] : undefined;
  if (!provider) {
    throw new UsageError(
      `Unknown provider '${providerName}'. Known providers: ${Object.keys(catalog).join(', ')}. Add it under "providers" in config.json or pick another with --provider.`,
    );
  }
  const ids = Object.keys(provider.models);
  let modelId = chosenModel(config, flags);
  if (modelId === undefined && providerName === DEFAULT_PROVIDER && provider.models[DEFAULT_MODEL]) modelId = DEFAULT_MODEL;
  if (modelId === undefined) {
    if (ids.length !== 1) {
      throw new UsageError(
        `Provider '${providerName}' has ${ids.length} models (${ids.join(', ')}); choose one with --model or "model" in config.json.`,
      );
    }
    modelId = ids[0] as string;
  }
  const model = Object.hasOwn(provider.models, modelId) ? provider.models[modelId] : undefined;
  if (!model) {
    throw new UsageError(
      `Model '${modelId}' is not in the catalog of provider '${providerName}'. Its models: ${ids.join(', ') || 'none'}. Add it under providers.${providerName}.models in config.json.`,
    );
  }
  return { providerName, provider, model: { id: modelId, ...model } as ModelSettings };
}
