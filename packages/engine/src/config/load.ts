/** Reads `config.json` from Home; a malformed file stops start-up and is never rewritten (CONF-5). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { keyLines, lineOfPath, parseJson } from './json-locate.js';
import { type Config, configSchema } from './schema.js';

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
  if (result.success) return result.data;
  const { issue, path } = deepestIssue(result.error.issues[0] as Issue, []);
  const line = lineOfPath(keyLines(text), path);
  throw new ConfigError(file, path.join('.') || undefined, line, `${describeIssue(issue)}; the file was left unchanged.`);
}

interface Issue {
  readonly code?: string;
  readonly message: string;
  readonly path: readonly PropertyKey[];
  readonly values?: readonly unknown[];
  readonly expected?: string;
  readonly errors?: readonly (readonly Issue[])[];
}

/**
 * For a union that failed as a whole, follows the branch that got furthest (the longest path),
 * so `"maximumModelCalls": 1.5` reports that key, not the union; when every branch failed at
 * the union itself, the message lists what each branch expects.
 */
function deepestIssue(issue: Issue, prefix: (string | number)[]): { issue: Issue; path: (string | number)[] } {
  const path = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  if (issue.code !== 'invalid_union' || !issue.errors?.length) return { issue, path };
  let best: Issue | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first && (!best || first.path.length > best.path.length)) best = first;
  }
  if (best && best.path.length > 0) return deepestIssue(best, path);
  const expectations = issue.errors.map((branch) => (branch[0] ? expectationOf(branch[0]) : 'a valid value'));
  return { issue: { ...issue, code: 'custom', message: `expected ${expectations.join(' or ')}` }, path };
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
