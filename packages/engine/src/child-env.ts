/**
 * The environment every child process gets (SEC-6): bash, exec tools and, once they exist, hooks
 * and local MCP servers. It is the host environment without the configured providers' key
 * variables (`apiKeyEnvironment`, `<PROVIDER>_API_KEY`, `CRYSTAL_API_KEY`, `{env:NAME}` key
 * references), without any name that looks like a secret (`*_API_KEY`, `*_TOKEN`, `*SECRET*`,
 * `*PASSWORD*`, `*_PRIVATE_KEY`, `*_ACCESS_KEY`), and without `CRYSTAL_HOME`. The operator passes
 * a variable on purpose with `"shellEnvironment": { "pass": ["GITHUB_TOKEN"] }` in config.json.
 * Every spawner takes its environment from here, so no child inherits a key by accident.
 */
import { catalogOf } from './catalog.js';
import type { Config } from './config/schema.js';
import { providerEnvName } from './credentials.js';

/** Ends with `suffix` as a whole `_`-separated word (the whole name, or after an underscore). */
const endsWithWord = (name: string, suffix: string): boolean =>
  name.endsWith(suffix) && (name.length === suffix.length || name.charCodeAt(name.length - suffix.length - 1) === 95);

/**
 * Names that hold secrets by convention, matched case-insensitively: `*API_KEY` / `*APIKEY`,
 * `*_TOKEN`, `*_PRIVATE_KEY`, `*_ACCESS_KEY`, `*_AUTH`, `*_CREDENTIAL(S)` (each a whole word at
 * the end, or the whole name), and any name containing SECRET, PASSWORD or PASSWD. String tests,
 * not the one regular expression this was: a case-insensitive alternation costs V8 about 0.6 ms
 * to compile at its first two uses, before every run's first request (issue 22 item 4).
 */
export function looksSecret(variable: string): boolean {
  const name = variable.toUpperCase();
  return (
    name.includes('SECRET') ||
    name.includes('PASSWORD') ||
    name.includes('PASSWD') ||
    endsWithWord(name, 'API_KEY') ||
    endsWithWord(name, 'APIKEY') ||
    endsWithWord(name, 'TOKEN') ||
    endsWithWord(name, 'PRIVATE_KEY') ||
    endsWithWord(name, 'ACCESS_KEY') ||
    endsWithWord(name, 'AUTH') ||
    endsWithWord(name, 'CREDENTIAL') ||
    endsWithWord(name, 'CREDENTIALS')
  );
}

/** Variables the operator never wants in a child unless listed in `shellEnvironment.pass`. */
export function providerKeyVariables(config: Config): string[] {
  const names = new Set<string>(['CRYSTAL_API_KEY']);
  for (const [name, provider] of Object.entries(catalogOf(config))) {
    names.add(providerEnvName(name));
    if (provider.apiKeyEnvironment) names.add(provider.apiKeyEnvironment);
    const ref = provider.apiKey ? /^\{env:([^}]+)\}$/.exec(provider.apiKey) : null;
    if (ref?.[1]) names.add(ref[1]);
  }
  return [...names];
}

export function childEnvironment(config: Config, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const pass = new Set(config.shellEnvironment?.pass ?? []);
  const keys = new Set(providerKeyVariables(config));
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (!pass.has(name) && (name === 'CRYSTAL_HOME' || keys.has(name) || looksSecret(name))) continue;
    out[name] = value;
  }
  return out;
}
