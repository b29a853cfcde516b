/** Reads `config.json` from Home; a malformed file stops start-up and is never rewritten (CONF-5). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { keyLines, lineOfPath, parseJson } from './json-locate.js';
import { deepestIssue, type Issue } from '../zod-issues.js';
import { type Config, configSchema } from './schema.js';
import { unknownKeyWarnings } from './unknown-keys.js';

const configWarningsOf = new WeakMap<object, readonly string[]>();

/** REL-12: the warnings of a loaded configuration (unknown keys), for the surface to show once. */
export function configWarnings(config: object): readonly string[] {
  return configWarningsOf.get(config) ?? [];
}

export function configPath(home: string): string {
  return join(home, 'config.json');
}

/** Loads and validates `config.json`; a missing file is an empty configuration. */
export function loadConfig(home: string): Config {
  const file = configPath(home);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(file, undefined, undefined, `cannot be read (${(error as Error).message}); fix its permissions.`);
  }
  return parseConfigText(text, file);
}

export function parseConfigText(text: string, file: string): Config {
  if (text.trim() === '') return {};
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
  const result = configSchema.safeParse(parsed.value);
  if (result.success) {
    // REL-12: unknown keys are not an error (newer files stay readable) but are never silent.
    const warnings = unknownKeyWarnings(parsed.value, configSchema, file);
    if (warnings.length > 0) configWarningsOf.set(result.data, warnings);
    return result.data;
  }
  const { issue, path } = deepestIssue(result.error.issues[0] as Issue, expectationOf);
  const line = lineOfPath(keyLines(text), path);
  throw new ConfigError(file, path.join('.') || undefined, line, `${describeIssue(issue)}; the file was left unchanged.`);
}

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
