/** Reads `config.json` from Home; a malformed file stops start-up and is never rewritten (CONF-5). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { keyLines, lineOfPath, parseJson } from './json-locate.js';
import { deepestIssue, type Issue } from '../zod-issues.js';
import { type Config, configSchemaFor } from './schema.js';
import { STARTER_PROVIDERS } from '../catalog.js';
import { unknownKeyWarnings } from './unknown-keys.js';

/**
 * The warnings ride on the config object under a symbol: a copy made with `{ ...config }` (the
 * served Ollama models, …) keeps them, and JSON never shows them.
 */
const WARNINGS = Symbol('config warnings');

/** REL-12: the warnings of a loaded configuration (unknown keys), for the surface to show once. */
export function configWarnings(config: object): readonly string[] {
  return (config as { [WARNINGS]?: readonly string[] })[WARNINGS] ?? [];
}

export function configPath(home: string): string {
  return join(home, 'config.json');
}

/**
 * Configurations validated before (issue 22): the same text of the same file, validated by the
 * same build, is not validated again. Validating costs every start ~3 ms (zod building and running
 * the schema in a cold process), and `config.json` rarely changes between two starts. A surface
 * supplies the store (the CLI keeps it beside its code cache, in a folder only this user can
 * write); only successful validations are remembered, so an invalid file is always reported.
 */
export interface ValidatedConfigMemo {
  /** What validating exactly `text` of `file` gave before, or undefined. */
  recall(file: string, text: string): { readonly config: unknown; readonly warnings: readonly string[] } | undefined;
  /** Remembers the result of a successful validation; whether it was kept for the next start. */
  remember(file: string, text: string, config: Config, warnings: readonly string[]): boolean;
}

/** Loads and validates `config.json`; a missing file is an empty configuration. */
export function loadConfig(home: string, memo?: ValidatedConfigMemo): Config {
  const file = configPath(home);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(file, undefined, undefined, `cannot be read (${(error as Error).message}); fix its permissions.`);
  }
  return parseConfigText(text, file, memo);
}

function withWarnings(config: Config, warnings: readonly string[]): Config {
  if (warnings.length > 0) Object.defineProperty(config, WARNINGS, { value: warnings, enumerable: true });
  return config;
}

export function parseConfigText(text: string, file: string, memo?: ValidatedConfigMemo): Config {
  if (text.trim() === '') return {};
  const recalled = memo?.recall(file, text);
  if (recalled) return withWarnings(recalled.config as Config, recalled.warnings);
  const parsed = parseJson(text.replace(/^\uFEFF/, ''));
  if (!parsed.ok) {
    throw new ConfigError(
      file,
      undefined,
      parsed.position.line,
      `is not valid JSON (${parsed.message}, line ${parsed.position.line} column ${parsed.position.column}); fix the file, it was left unchanged.`,
    );
  }
  if (parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
    throw new ConfigError(file, undefined, 1, 'expected a JSON object at the top level.');
  }
  const configSchema = configSchemaFor(parsed.value);
  const result = configSchema.safeParse(parsed.value);
  if (result.success) {
    checkNewProviders(result.data, text, file);
    // REL-12: unknown keys are not an error (newer files stay readable) but are never silent.
    const warnings = unknownKeyWarnings(parsed.value, configSchema, file);
    memo?.remember(file, text, result.data, warnings);
    return withWarnings(result.data, warnings);
  }
  const { issue, path } = deepestIssue(result.error.issues[0] as Issue, expectationOf);
  const line = lineOfPath(keyLines(text), path);
  throw new ConfigError(file, path.join('.') || undefined, line, `${describeIssue(issue)}; the file was left unchanged.`);
}

/** A provider that is not built in must say how to reach it (a built-in one may be partial). */
function checkNewProviders(config: Config, text: string, file: string): void {
  for (const [name, entry] of Object.entries(config.providers ?? {})) {
    if (STARTER_PROVIDERS[name]) continue;
    for (const key of ['protocol', 'baseUri', 'models'] as const) {
      if (entry[key] !== undefined) continue;
      const path = ['providers', name, key];
      const hint =
        key === 'protocol'
          ? `one of ${PROTOCOL_NAMES.map((p) => JSON.stringify(p)).join(', ')}`
          : key === 'baseUri'
            ? 'the API root, such as "http://127.0.0.1:8080/v1/"'
            : 'an object of model ids, such as { "my-model": { "contextWindow": 128000 } }';
      throw new ConfigError(
        file,
        path.join('.'),
        lineOfPath(keyLines(text), path),
        `is required for '${name}', which is not a built-in provider (${Object.keys(STARTER_PROVIDERS).join(', ')}); set it to ${hint}; the file was left unchanged.`,
      );
    }
  }
}

const PROTOCOL_NAMES = ['openai', 'responses', 'deepseek', 'anthropic', 'gemini', 'ollama'] as const;

function expectationOf(issue: Issue): string {
  if (issue.code === 'invalid_value' && issue.values) return issue.values.map((v) => JSON.stringify(v)).join(' or ');
  if (issue.code === 'invalid_type' && issue.expected) return issue.expected === 'object' ? 'an object' : `a ${issue.expected}`;
  return issue.message.replace(/^Invalid input: /, '');
}

function describeIssue(issue: Issue): string {
  if (issue.code === 'invalid_value' && Array.isArray(issue.values)) {
    return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return issue.message.replace(/^Invalid input: /, '');
}
