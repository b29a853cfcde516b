/** API key resolution (CONF-4): environment, then the entry's `apiKey`, then `credentials.json`. */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { ProviderConfig } from './config/schema.js';
import { writeFileAtomic } from './atomic-write.js';
import { CredentialsError, UsageError } from './errors.js';

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
  throw new MissingApiKeyError(
    name,
    `No API key for provider '${name}'. Set ${names}, or add "apiKey" to providers.${name} in config.json, or store it in ${credentialsPath(home)}.\n${connectHint(name, env)}`,
  );
}

/** A provider needs a key and none was found; the message says how to connect one (SETUP-4). */
export class MissingApiKeyError extends CredentialsError {
  constructor(
    readonly provider: string,
    message: string,
  ) {
    super(message);
  }
}

/** The few lines a first run shows instead of a bare "no key" (SETUP-4). */
export function connectHint(provider: string, env: NodeJS.ProcessEnv = {}): string {
  const pad = (command: string): string => `  ${command.padEnd(26)}`;
  // A key for another built-in provider is already in the environment: say how to use it.
  const other = ['openai', 'anthropic', 'gemini', 'deepseek'].find((p) => p !== provider && env[providerEnvName(p)]);
  return [
    'To connect a provider:',
    `${pad(`crystal login ${provider}`)}asks for the key (no echo) and stores it in credentials.json`,
    other
      ? `${pad(`crystal --provider ${other}`)}${providerEnvName(other)} is set; or "provider": "${other}" in config.json`
      : `${pad('crystal login openai')}or anthropic, gemini, deepseek; then --provider NAME or "provider" in config.json`,
    `${pad('ollama serve')}a local model needs no key: crystal models ollama, then --provider ollama`,
    `${pad('crystal demo')}the offline demo against a scripted fake provider, no key at all`,
  ].join('\n');
}

export function credentialsPath(home: string): string {
  return join(home, 'credentials.json');
}

/**
 * Stores `apiKey` for `provider` in `credentials.json` (SETUP-2): owner-only (0600), written
 * with the atomic writer, other providers' entries kept. The file holds plain text.
 */
export async function storeApiKey(home: string, provider: string, apiKey: string): Promise<string> {
  const file = credentialsPath(home);
  const current = readCredentials(home);
  const previous = current[provider];
  const next = { ...current, [provider]: { ...(previous && typeof previous === 'object' ? previous : {}), apiKey } };
  await writeOrExplain(file, `${JSON.stringify(next, null, 2)}\n`);
  return file;
}

/** A write that fails (a read-only or full disk, Home that is a file) is one clear line, not a stack. */
export async function writeOrExplain(file: string, data: string): Promise<void> {
  try {
    await writeFileAtomic(file, data, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    const fix =
      code === 'ENOSPC' || code === 'EDQUOT'
        ? 'free some disk space'
        : code === 'ENOTDIR' || code === 'EEXIST'
          ? 'a part of that path is a file, not a folder'
          : 'check the folder exists and is writable';
    throw new UsageError(`Cannot write ${file} (${code}): ${fix}. Nothing was changed.`);
  }
}

/** Removes `provider`'s key from `credentials.json`; returns false when none was stored. */
export async function removeApiKey(home: string, provider: string): Promise<boolean> {
  const current = readCredentials(home);
  if (!current[provider]) return false;
  const { [provider]: _removed, ...rest } = current;
  await writeOrExplain(credentialsPath(home), `${JSON.stringify(rest, null, 2)}\n`);
  return true;
}

/** The providers with a key in `credentials.json`. */
export function storedProviders(home: string): string[] {
  return Object.entries(readCredentials(home))
    .filter(([, v]) => typeof v?.apiKey === 'string' && v.apiKey !== '')
    .map(([k]) => k);
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
  const file = credentialsPath(home);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, { apiKey?: string }>) : {};
  } catch {
    throw new CredentialsError(`${file} is not valid JSON; fix it or delete it and set the key in the environment.`);
  }
}
