/**
 * Preference commands persist at once (reference §9.6): `/model` writes `provider`/`model`,
 * `/thinking` writes `thinkingEffort`, into `config.json`, keeping every other key and its
 * order. A config that does not parse is never rewritten (CONF-5).
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from './atomic-write.js';
import type { ProviderConfig } from './config/schema.js';
import { configPath, parseConfigText } from './config/load.js';
import { UsageError } from './errors.js';

export async function persistPreferences(home: string, values: Record<string, string>): Promise<void> {
  const file = configPath(home);
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  parseConfigText(text, file);
  const current = text.trim() === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  await writeFileAtomic(file, `${JSON.stringify({ ...current, ...values }, null, 2)}\n`);
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
