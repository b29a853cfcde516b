/**
 * Preference commands persist at once (reference §9.6): `/model` writes `provider`/`model`,
 * `/thinking` writes `thinkingEffort`, into `config.json`, changing only those keys and
 * keeping the file's own formatting (SETUP-3). A config that does not parse is never
 * rewritten (CONF-5).
 */
import type { ProviderConfig } from './config/schema.js';
import { editJsonFile, type JsonEdit } from './config/json-edit.js';
import { configPath, parseConfigText } from './config/load.js';
import { UsageError } from './errors.js';

export async function persistPreferences(home: string, values: Record<string, unknown>): Promise<void> {
  await editConfig(
    home,
    Object.entries(values).map(([key, value]) => ({ path: [key], value })),
  );
}

/** Every write of `config.json` goes through here: only the named keys change (SETUP-3). */
export async function editConfig(home: string, edits: readonly JsonEdit[]): Promise<void> {
  const file = configPath(home);
  await editJsonFile(file, edits, (text) => parseConfigText(text.replace(/^\uFEFF/, ''), file));
}

/**
 * `/model <model>` searches the current provider first, then a unique match anywhere in the
 * catalog; `/model <provider> <model>` takes everything after the first space as the model id;
 * a provider with exactly one model also works (reference §3). Unknown models are refused (CONF-6).
 */
export function resolveModelArgument(
  argument: string,
  catalog: Readonly<Record<string, ProviderConfig>>,
  currentProvider: string,
): { provider: string; model: string } {
  const space = argument.indexOf(' ');
  if (space > 0) {
    const provider = argument.slice(0, space);
    const model = argument.slice(space + 1).trim();
    if (catalog[provider]?.models[model]) return { provider, model };
    throw new UsageError(`Model '${model}' is not in the catalog of provider '${provider}'. /model lists the models.`);
  }
  if (catalog[currentProvider]?.models[argument]) return { provider: currentProvider, model: argument };
  const matches = Object.entries(catalog).filter(([, p]) => p.models[argument]);
  if (matches.length === 1) return { provider: (matches[0] as [string, ProviderConfig])[0], model: argument };
  if (matches.length > 1) {
    throw new UsageError(
      `Model '${argument}' exists under ${matches.map(([n]) => n).join(', ')}; use /model <provider> ${argument}.`,
    );
  }
  const provider = catalog[argument];
  const ids = provider ? Object.keys(provider.models) : [];
  if (provider && ids.length === 1) return { provider: argument, model: ids[0] as string };
  throw new UsageError(`Unknown model '${argument}'. /model lists the models in the catalog.`);
}
