/** API key resolution (CONF-4): environment, then the entry's `apiKey`, then `credentials.json`. */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { ProviderConfig } from './config/schema.js';
import { CredentialsError } from './errors.js';

export function providerEnvName(provider: string): string {
  return `${provider.toUpperCase().replace(/-/g, '_')}_API_KEY`;
}

export function resolveApiKey(
  home: string,
  name: string,
  provider: ProviderConfig,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const requires = provider.requiresApiKey ?? provider.protocol !== 'ollama';
  const fromEnv = (key: string | undefined): string | undefined => (key && env[key] ? env[key] : undefined);
  const envKey =
    fromEnv(provider.apiKeyEnvironment) ?? fromEnv(providerEnvName(name)) ?? (requires ? fromEnv('CRYSTAL_API_KEY') : undefined);
  if (envKey) return envKey;
  if (provider.apiKey) return expandKey(home, name, provider.apiKey, env);
  const stored = readCredentials(home)[name]?.apiKey;
  if (stored) return stored;
  if (!requires) return undefined;
  const names = [provider.apiKeyEnvironment, providerEnvName(name), 'CRYSTAL_API_KEY'].filter(Boolean).join(' or ');
  throw new CredentialsError(
    `No API key for provider '${name}'. Set ${names}, or add "apiKey" to providers.${name} in config.json, or store it in ${join(home, 'credentials.json')}.`,
  );
}

function expandKey(home: string, name: string, value: string, env: NodeJS.ProcessEnv): string {
  const envRef = /^\{env:([^}]+)\}$/.exec(value);
  if (envRef) {
    const found = env[envRef[1] as string];
    if (!found) throw new CredentialsError(`providers.${name}.apiKey names environment variable ${envRef[1]}, which is not set.`);
    return found;
  }
  const fileRef = /^\{file:([^}]+)\}$/.exec(value);
  if (fileRef) {
    let path = fileRef[1] as string;
    if (path.startsWith('~/')) path = join(homedir(), path.slice(2));
    else if (!isAbsolute(path)) path = join(home, path);
    try {
      return readFileSync(path, 'utf8').trim();
    } catch (error) {
      throw new CredentialsError(
        `providers.${name}.apiKey names file ${path}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
      );
    }
  }
  return value;
}

function readCredentials(home: string): Record<string, { apiKey?: string }> {
  const file = join(home, 'credentials.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, { apiKey?: string }>) : {};
  } catch {
    throw new CredentialsError(`${file} is not valid JSON; fix it or delete it and set the key in the environment.`);
  }
}
