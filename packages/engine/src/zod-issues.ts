/**
 * Turns a zod issue into a key path and a plain-English expectation ("expected an object",
 * "expected \"text\" or \"content\""), following the branch of a failed union that got furthest.
 * Messages set in a schema are kept as they are. Config loading and external-tool manifests
 * and outputs share it.
 */

export interface Issue {
  readonly code?: string;
  readonly message: string;
  readonly path: readonly PropertyKey[];
  readonly values?: readonly unknown[];
  readonly expected?: string;
  readonly errors?: readonly (readonly Issue[])[];
}

export function firstProblem(issues: readonly Issue[]): { path: (string | number)[]; expectation: string } {
  const first = issues[0];
  if (!first) return { path: [], expectation: 'invalid value' };
  const { issue, path } = deepestIssue(first, (branch) => describe(branch).replace(/^expected /, ''));
  return { path, expectation: describe(issue) };
}

/**
 * For a union that failed as a whole, follows the branch that got furthest (the longest path),
 * so `"maximumModelCalls": 1.5` reports that key, not the union; when every branch failed at
 * the union itself, the message lists what each branch expects, as `expectation` words it.
 */
export function deepestIssue(
  issue: Issue,
  expectation: (branch: Issue) => string,
  prefix: (string | number)[] = [],
): { issue: Issue; path: (string | number)[] } {
  const path = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  if (issue.code !== 'invalid_union' || !issue.errors?.length) return { issue, path };
  let best: Issue | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first && (!best || first.path.length > best.path.length)) best = first;
  }
  if (best && best.path.length > 0) return deepestIssue(best, expectation, path);
  const expectations = issue.errors.map((branch) => (branch[0] ? expectation(branch[0]) : 'a valid value'));
  return { issue: { ...issue, code: 'custom', message: `expected ${[...new Set(expectations)].join(' or ')}` }, path };
}

function describe(issue: Issue): string {
  // A message of our own (set in the schema) already says what is expected.
  if (!/^(Invalid|Too (small|big))/.test(issue.message)) return issue.message;
  if (issue.code === 'invalid_value' && Array.isArray(issue.values)) {
    return `expected ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`;
  }
  if (issue.code === 'invalid_type' && issue.expected) return `expected ${TYPE_NAMES[issue.expected] ?? `a ${issue.expected}`}`;
  return issue.message.replace(/^Invalid input: /, '');
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  object: 'an object',
  record: 'an object',
  array: 'an array',
  int: 'an integer',
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
};
