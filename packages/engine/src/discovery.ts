/**
 * Model discovery on the engine face (SETUP-3): what a catalog provider serves, marked
 * against the catalog, and the one edit that adds a served model to `config.json`. The CLI's
 * `crystal models` and the terminal's `/model` picker both read this; neither paints here.
 */
import { ProviderError } from '@crystal/core';
import { type Endpoint, listServedModels, type ListModelsOptions, type Protocol, type ServedModel } from '@crystal/providers';
import { catalogOf, SERVED_ENTRIES, STARTER_PROVIDERS, selectModel } from './catalog.js';
import type { Config, ModelConfig, ProviderConfig } from './config/schema.js';
import { resolveApiKey, storeApiKey } from './credentials.js';
import { UsageError } from './errors.js';
import { editConfig } from './preferences.js';
import { clientOptionsOf } from './transport-options.js';

export interface DiscoveredModel extends ServedModel {
  /** Whether `providers.<name>.models` already has this id. */
  readonly inCatalog: boolean;
}

export interface ModelDiscovery {
  readonly provider: string;
  readonly protocol: Protocol;
  readonly baseUri: string;
  /** What the provider serves, in its own order. */
  readonly served: readonly DiscoveredModel[];
  /** Catalog models the provider did not list (a typo, a retired model, or a list that omits aliases). */
  readonly notServed: readonly string[];
}

export interface ModelDiscoveryOptions extends ListModelsOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Use this key instead of resolving one (the key `crystal login` is about to store). */
  readonly apiKey?: string;
}

export function providerEntry(config: Config, name: string): ProviderConfig {
  const catalog = catalogOf(config);
  const provider = catalog[name];
  if (!provider) {
    throw new UsageError(
      `Unknown provider '${name}'. Known providers: ${Object.keys(catalog).join(', ')}. Add it under "providers" in config.json.`,
    );
  }
  return provider;
}

export function endpointOf(name: string, provider: ProviderConfig, apiKey: string | undefined): Endpoint {
  return { name, protocol: provider.protocol, baseUri: provider.baseUri, ...(apiKey ? { apiKey } : {}) };
}

/** Lists what provider `name` serves (one HTTP request; Ollama one more per model for its context length). */
export async function discoverModels(
  home: string,
  config: Config,
  name: string,
  options: ModelDiscoveryOptions = {},
): Promise<ModelDiscovery> {
  const provider = providerEntry(config, name);
  const apiKey = options.apiKey ?? resolveApiKey(home, name, provider, options.env ?? process.env);
  const served = await listServedModels(endpointOf(name, provider, apiKey), {
    transport: clientOptionsOf(home, config, options.env ?? process.env).transport,
    ...options,
  });
  const ids = new Set(served.map((m) => m.id));
  return {
    provider: name,
    protocol: provider.protocol,
    baseUri: provider.baseUri,
    served: served.map((m) => ({ ...m, inCatalog: provider.models[m.id] !== undefined })),
    notServed: Object.keys(provider.models).filter((id) => !ids.has(id)),
  };
}

/**
 * Fails early, before any question is asked, when the selected provider has no key (SETUP-4):
 * a first run says how to connect a provider instead of asking about trust first.
 */
export function assertConnectable(
  home: string,
  config: Config,
  flags: { readonly provider?: string | undefined; readonly model?: string | undefined } = {},
  env: NodeJS.ProcessEnv = process.env,
): void {
  const selection = selectModel(config, flags);
  resolveApiKey(home, selection.providerName, selection.provider, env);
}

export interface StoredKey {
  readonly file: string;
  /** How the key was checked, for the operator (one sentence, may be empty). */
  readonly note: string;
}

/**
 * `crystal login` and `/login` (SETUP-2): checks `key` with one request to the provider's model
 * list (unless `check` is false), then stores it in credentials.json (0600, atomic). A refused
 * key, or a provider that cannot be reached, stores nothing and says why.
 */
export async function checkAndStoreKey(
  home: string,
  config: Config,
  name: string,
  key: string,
  options: { readonly check?: boolean; readonly timeoutMs?: number } = {},
): Promise<StoredKey> {
  const provider = providerEntry(config, name);
  const trimmed = key.trim();
  if (trimmed === '') throw new UsageError(`No key given for ${name}; nothing was stored.`);
  if (/\s/.test(trimmed))
    throw new UsageError(`The key for ${name} contains white space; paste only the key. Nothing was stored.`);
  let note = '';
  if (options.check !== false) {
    try {
      const served = await listServedModels(endpointOf(name, provider, trimmed), {
        timeoutMs: options.timeoutMs ?? 15_000,
        transport: clientOptionsOf(home, config, process.env).transport,
      });
      note = `${name} accepted it and serves ${served.length} model${served.length === 1 ? '' : 's'}.`;
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      if (error.kind === 'auth' || error.kind === 'permission') {
        throw new UsageError(`${name} refused the key (${error.message}). Nothing was stored.`);
      }
      if (error.kind !== 'not_found') {
        throw new UsageError(
          `Could not check the key with ${name} (${error.message}). Nothing was stored; fix the connection, or store it unchecked with crystal login --no-check.`,
        );
      }
      note = `Not checked: ${name} has no model list at ${provider.baseUri}.`;
    }
  }
  const file = await storeApiKey(home, name, trimmed);
  return { file, note };
}

/** A context window when the provider does not tell one: small enough to be safe on most servers. */
export const UNKNOWN_CONTEXT_WINDOW = 32768;

/**
 * The catalog entry for a served model: the limits the provider reported, else a conservative
 * context window; `maxTokens` only when reported (the provider's own default otherwise).
 */
export function catalogEntryFor(model: ServedModel): ModelConfig {
  return {
    contextWindow: model.contextWindow ?? UNKNOWN_CONTEXT_WINDOW,
    ...(model.maxTokens ? { maxTokens: model.maxTokens } : {}),
    ...(model.thinking ? { thinking: true } : {}),
    ...(model.imageInput ? { imageInput: true } : {}),
  };
}

/**
 * Adds `model` under `providers.<provider>.models` in config.json, changing only that key
 * (the file's formatting, order and comments-free layout stay as the user wrote them).
 */
export async function addModelToConfig(home: string, provider: string, id: string, entry: ModelConfig): Promise<void> {
  await editConfig(home, [{ path: ['providers', provider, 'models', id], value: entry }]);
}

/**
 * Local Ollama works without configuration (SETUP-3): when the selected provider speaks the
 * Ollama wire and no catalog model was picked (or the picked one is not in the catalog), the
 * models the server serves, with their real context windows, join the in-memory catalog;
 * config.json is not written. A server that does not answer leaves the config as it is, and
 * the chat request reports the connection error. A picked catalog model costs no request.
 */
export async function withServedOllamaModels(
  home: string,
  config: Config,
  flags: { readonly provider?: string | undefined; readonly model?: string | undefined } = {},
  options: ModelDiscoveryOptions = {},
): Promise<Config> {
  const name = flags.provider ?? config.provider;
  if (name === undefined) return config;
  const provider = catalogOf(config)[name];
  if (provider?.protocol !== 'ollama') return config;
  const picked = flags.model ?? (flags.provider === undefined || flags.provider === config.provider ? config.model : undefined);
  if (picked !== undefined && provider.models[picked] && !starterOnly(config, name, picked)) return config;
  let served: ServedModel[];
  try {
    const apiKey = resolveApiKey(home, name, provider, options.env ?? process.env);
    served = await listServedModels(endpointOf(name, provider, apiKey), {
      timeoutMs: 3000,
      transport: clientOptionsOf(home, config, options.env ?? process.env).transport,
      ...options,
    });
  } catch {
    return config;
  }
  if (served.length === 0) return config;
  const own = config.providers?.[name]?.models ?? {};
  const models: Record<string, ModelConfig> = {};
  for (const model of served) models[model.id] = catalogEntryFor(model);
  const entry = { ...(config.providers?.[name] ?? {}), models: { ...models, ...own } };
  SERVED_ENTRIES.add(entry);
  return { ...config, providers: { ...(config.providers ?? {}), [name]: entry } };
}

/** A model only the starter catalog names (a guess such as qwen3:8b at 4096 tokens): worth asking the server. */
function starterOnly(config: Config, name: string, model: string): boolean {
  return config.providers?.[name]?.models?.[model] === undefined && STARTER_PROVIDERS[name]?.models[model] !== undefined;
}
