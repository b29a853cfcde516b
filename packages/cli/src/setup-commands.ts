/**
 * The first-hour commands (SETUP-2, SETUP-3): `crystal login [provider]`, `crystal logout
 * [provider]`, `crystal models [provider] [--json]` and `crystal models add PROVIDER MODEL`.
 * Keys are read without echo on a terminal, or from standard input when piped; never as flags.
 */
import { parseArgs } from 'node:util';
import { ProviderError } from '@crystal/core';
import {
  addModelToConfig,
  type Config,
  catalogEntryFor,
  checkAndStoreKey,
  credentialsPath,
  DEFAULT_PROVIDER,
  discoverModels,
  loadConfig,
  type ModelDiscovery,
  providerEntry,
  providerEnvName,
  removeApiKey,
  resolveHome,
  UsageError,
} from '@crystal/engine';
import { readSecret } from './secret-input.js';

const KEY_FLAGS = /^--?(api-?key|key|token|secret|password)(=|$)/i;

function parse(
  command: string,
  argv: readonly string[],
  options: NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  const keyFlag = argv.find((a) => KEY_FLAGS.test(a));
  if (keyFlag) {
    throw new UsageError(
      `Keys are never accepted as flags (${keyFlag.split('=')[0]}): they would land in shell history and process lists. Run 'crystal login' and type the key, or pipe it: crystal login PROVIDER < keyfile.`,
    );
  }
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: { home: { type: 'string' }, ...options },
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. Run 'crystal ${command} --help' for the options.`);
  }
}

function providerName(config: Config, positional: string | undefined): string {
  return positional ?? config.provider ?? DEFAULT_PROVIDER;
}

export const SETUP_HELP = {
  login: `Usage: crystal login [PROVIDER] [--home DIR] [--no-check]

Stores an API key for PROVIDER (default: the configured provider) in credentials.json in
Home, readable by you only. On a terminal the key is asked for without echo; otherwise it is
read from standard input (crystal login openai < key.txt). The key is checked first with one
request to the provider's model list; --no-check stores it without asking the provider.
Keys are never accepted as flags.
`,
  logout: `Usage: crystal logout [PROVIDER] [--home DIR]

Removes PROVIDER's key (default: the configured provider) from credentials.json.
`,
  models: `Usage: crystal models [PROVIDER] [--json] [--home DIR]
       crystal models add PROVIDER MODEL [--context N] [--max-tokens N] [--home DIR]

Lists the models PROVIDER serves (default: the configured provider), marking those in the
catalog (*). 'add' puts a served model into config.json under providers.PROVIDER.models with
the limits the provider reports (or --context/--max-tokens), changing only that key.
`,
};

export async function loginCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse('login', argv, {
    'no-check': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(SETUP_HELP.login);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError('crystal login takes one provider name; the key is asked for, never passed.');
  const home = resolveHome(values.home as string | undefined);
  const config = loadConfig(home);
  const name = providerName(config, positionals[0]);
  providerEntry(config, name);
  const key = await readSecret(`API key for ${name} (input hidden): `);
  const stored = await checkAndStoreKey(home, config, name, key, { check: values['no-check'] !== true });
  const note = stored.note === '' ? '' : ` ${stored.note}`;
  const more = stored.note.includes('accepted') ? ` 'crystal models ${name}' lists them.` : '';
  process.stdout.write(`Stored the key for ${name} in ${stored.file} (owner-only).${note}${more}\n`);
  if (process.env[providerEnvName(name)]) {
    process.stdout.write(`Note: ${providerEnvName(name)} is set in this shell and wins over the stored key.\n`);
  }
  return 0;
}

export async function logoutCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse('logout', argv, { help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    process.stdout.write(SETUP_HELP.logout);
    return 0;
  }
  const home = resolveHome(values.home as string | undefined);
  const config = loadConfig(home);
  const name = providerName(config, positionals[0]);
  const removed = await removeApiKey(home, name);
  process.stdout.write(
    removed
      ? `Removed the key for ${name} from ${credentialsPath(home)}.\n`
      : `No stored key for ${name} in ${credentialsPath(home)}; nothing to remove.\n`,
  );
  return 0;
}

export async function modelsCommand(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'add') return modelsAdd(argv.slice(1));
  const { values, positionals } = parse('models', argv, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    process.stdout.write(SETUP_HELP.models);
    return 0;
  }
  const home = resolveHome(values.home as string | undefined);
  const config = loadConfig(home);
  const name = providerName(config, positionals[0]);
  const found = await discover(home, config, name);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(`${printModels(found)}`);
  return 0;
}

async function discover(home: string, config: Config, name: string): Promise<ModelDiscovery> {
  try {
    return await discoverModels(home, config, name);
  } catch (error) {
    if (error instanceof ProviderError) {
      const hint =
        error.kind === 'auth' || error.kind === 'permission'
          ? ` Store a working key with: crystal login ${name}`
          : error.kind === 'network' || error.kind === 'timeout'
            ? name === 'ollama'
              ? ' Is Ollama running? Start it with: ollama serve'
              : ` Check providers.${name}.baseUri in config.json.`
            : '';
      throw new UsageError(`Could not list the models of ${name}: ${error.message}${hint}`);
    }
    throw error;
  }
}

function printModels(found: ModelDiscovery): string {
  const lines = [`Models served by ${found.provider} (${found.baseUri}), * = in the catalog:`];
  if (found.served.length === 0) lines.push('  (none)');
  const width = Math.max(...found.served.map((m) => m.id.length), 10);
  for (const m of found.served) {
    const context = m.contextWindow ? `${m.contextWindow} tokens` : 'context not reported';
    const extra = [m.imageInput ? 'images' : '', m.thinking ? 'thinking' : ''].filter(Boolean).join(', ');
    lines.push(`${m.inCatalog ? '*' : ' '} ${m.id.padEnd(width)}  ${context}${extra ? `  ${extra}` : ''}`);
  }
  if (found.notServed.length > 0) lines.push(`In the catalog but not listed by the provider: ${found.notServed.join(', ')}`);
  const first = found.served.find((m) => !m.inCatalog);
  if (first) lines.push(`Add one to config.json with: crystal models add ${found.provider} ${first.id}`);
  return `${lines.join('\n')}\n`;
}

async function modelsAdd(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse('models', argv, {
    context: { type: 'string' },
    'max-tokens': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(SETUP_HELP.models);
    return 0;
  }
  const [name, id, ...rest] = positionals;
  if (name === undefined || id === undefined || rest.length > 0) {
    throw new UsageError('Usage: crystal models add PROVIDER MODEL [--context N] [--max-tokens N]');
  }
  const home = resolveHome(values.home as string | undefined);
  const config = loadConfig(home);
  const found = await discover(home, config, name);
  const served = found.served.find((m) => m.id === id);
  if (!served) {
    const some = found.served
      .slice(0, 8)
      .map((m) => m.id)
      .join(', ');
    throw new UsageError(
      `${name} does not serve '${id}'. It serves: ${some || 'nothing'}${found.served.length > 8 ? ', ...' : ''}. 'crystal models ${name}' lists them all.`,
    );
  }
  if (served.inCatalog && values.context === undefined && values['max-tokens'] === undefined) {
    process.stdout.write(`'${id}' is already in the catalog of ${name}; nothing to add.\n`);
    return 0;
  }
  const entry = {
    ...catalogEntryFor(served),
    ...(values.context !== undefined ? { contextWindow: count('--context', values.context as string) } : {}),
    ...(values['max-tokens'] !== undefined ? { maxTokens: count('--max-tokens', values['max-tokens'] as string) } : {}),
  };
  await addModelToConfig(home, name, id, entry);
  const limits = `contextWindow ${entry.contextWindow}${entry.maxTokens ? `, maxTokens ${entry.maxTokens}` : ''}${served.contextWindow || values.context ? '' : ' (not reported by the provider; set --context to change it)'}`;
  process.stdout.write(
    `Added providers.${name}.models.${id} to config.json (${limits}).\nUse it with: crystal --provider ${name} --model ${id}, or /model ${name} ${id}\n`,
  );
  return 0;
}

function count(flag: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${flag} must be a positive integer, not '${value}'.`);
  return n;
}
