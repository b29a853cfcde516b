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

/** Names that hold secrets by convention; matched case-insensitively on the whole name. */
export const SECRET_NAME =
  /(^|_)API_?KEY$|(^|_)TOKEN$|SECRET|PASSWORD|PASSWD|(^|_)PRIVATE_KEY$|(^|_)ACCESS_KEY$|(^|_)AUTH$|(^|_)CREDENTIALS?$/i;

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
    if (!pass.has(name) && (name === 'CRYSTAL_HOME' || keys.has(name) || SECRET_NAME.test(name))) continue;
    out[name] = value;
  }
  return out;
}
