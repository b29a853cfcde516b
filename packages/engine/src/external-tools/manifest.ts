/**
 * The `tools.json` manifest of an external tool set (TOOLS-4, §5.3), validated with zod so every
 * problem names its key path and what is expected. `runner` is `exec` (a command per tool) or
 * `plugin` (an in-process JavaScript module: the TypeScript counterpart of the reference's
 * dotnet runner).
 */
import { MAX_TIMER_SECONDS } from '@crystal/core';
import * as z from 'zod/mini';
import { lazySchema } from '../lazy-schema.js';
import { firstProblem } from '../zod-issues.js';

export type Catalog = 'plan' | 'work';
export type DeclaredApproval = 'inherit' | 'always';
export type ToolSource = 'home' | 'project';

export const SET_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
export const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

const TOOL_NAME_EXPECTED = 'expected a tool name: 1-64 letters, digits, _ or -, starting with a letter';

/** The manifest schemas, built at the first manifest read (issue 22 item 4: not when the engine loads). */
const schemas = lazySchema(buildSchemas);

function buildSchemas() {
  const toolName = z.string().check(z.regex(TOOL_NAME, TOOL_NAME_EXPECTED));
  const catalogs = z.array(z.enum(['plan', 'work'])).check(z.minLength(1, 'expected a non-empty list of "plan" and/or "work"'));
  const approval = z.enum(['inherit', 'always']);
  const command = z.array(z.string().check(z.minLength(1, 'expected a non-empty string')));
  const TIMEOUT_EXPECTED = 'expected a positive whole number of seconds or "unlimited"';
  const timeoutSeconds = z.union([
    z
      .int(TIMEOUT_EXPECTED)
      .check(
        z.positive(TIMEOUT_EXPECTED),
        z.maximum(MAX_TIMER_SECONDS, `expected at most ${MAX_TIMER_SECONDS} seconds (the runtime timer maximum)`),
      ),
    z.literal('unlimited', TIMEOUT_EXPECTED),
  ]);
  const jsonSchema = z.record(z.string(), z.unknown());
  const argvMap = z.record(z.string(), z.string().check(z.minLength(1, 'expected a flag such as "--name"')));
  const pathArguments = z.array(z.string().check(z.minLength(1)));
  const output = z.enum(['text', 'content']);

  const execToolSchema = z.object({
    name: toolName,
    description: z.string().check(z.minLength(1, 'expected a description')),
    schema: jsonSchema,
    command: z.optional(command),
    argv: z.optional(argvMap),
    pathArguments: z.optional(pathArguments),
    output: z.optional(output),
    approval: z.optional(approval),
    catalogs: z.optional(catalogs),
  });

  const setFields = {
    enabled: z.optional(z.boolean()),
    approval: z.optional(approval),
    timeoutSeconds: z.optional(timeoutSeconds),
    catalogs: z.optional(catalogs),
  };

  const execSetSchema = z.object({
    runner: z.literal('exec'),
    ...setFields,
    command: z.optional(command),
    stdin: z.optional(z.boolean()),
    tools: z.optional(z.array(execToolSchema).check(z.minLength(1, 'expected at least one tool'))),
    // The shorthand form: one tool named after the directory.
    description: z.optional(z.string().check(z.minLength(1, 'expected a description'))),
    schema: z.optional(jsonSchema),
    argv: z.optional(argvMap),
    pathArguments: z.optional(pathArguments),
    output: z.optional(output),
  });

  const pluginSetSchema = z.object({
    runner: z.literal('plugin'),
    ...setFields,
    module: z.string().check(z.minLength(1, 'expected a module path such as "./tool.mjs"')),
    tools: z.optional(
      z.record(
        toolName,
        z.object({ catalogs: z.optional(catalogs), pathArguments: z.optional(pathArguments), approval: z.optional(approval) }),
      ),
    ),
  });
  return { execToolSchema, execSetSchema, pluginSetSchema };
}

type ExecSet = z.output<ReturnType<typeof buildSchemas>['execSetSchema']>;
type ExecTool = z.output<ReturnType<typeof buildSchemas>['execToolSchema']>;

/** One exec tool, with set defaults applied. */
export interface ExecToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  /** Set prefix plus tool suffix. */
  readonly command: readonly string[];
  readonly stdin: boolean;
  /** Property → flag, in manifest order. */
  readonly argv: readonly (readonly [string, string])[];
  readonly pathArguments: readonly string[];
  readonly output: 'text' | 'content';
  readonly approval: DeclaredApproval;
  readonly catalogs: readonly Catalog[];
}

export interface PluginOverride {
  readonly catalogs?: readonly Catalog[];
  readonly pathArguments?: readonly string[];
  readonly approval?: DeclaredApproval;
}

export type SetManifest =
  | {
      readonly runner: 'exec';
      readonly timeoutSeconds: number | null;
      readonly tools: readonly ExecToolSpec[];
    }
  | {
      readonly runner: 'plugin';
      readonly timeoutSeconds: number | null;
      readonly module: string;
      readonly approval: DeclaredApproval;
      readonly catalogs: readonly Catalog[];
      readonly overrides: Readonly<Record<string, PluginOverride>>;
    };

/** A manifest problem: the key path (empty for the whole file) and what is expected. */
export class ManifestProblem extends Error {
  constructor(
    readonly keyPath: readonly (string | number)[],
    readonly expectation: string,
  ) {
    super(`${keyPath.length ? `${keyPath.join('.')}: ` : ''}${expectation}`);
  }
}

const BOTH: readonly Catalog[] = ['plan', 'work'];
const DEFAULT_TIMEOUT = 120;
const SHORTHAND_KEYS = ['description', 'schema', 'argv', 'pathArguments', 'output'] as const;

/** Whether the manifest turns its set off (`enabled: false`), checked before anything else. */
export function isDisabled(value: unknown): boolean {
  return value !== null && typeof value === 'object' && (value as { enabled?: unknown }).enabled === false;
}

/** Validates a parsed manifest; throws `ManifestProblem`. `setName` names the shorthand tool. */
export function parseManifest(value: unknown, setName: string): SetManifest {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ManifestProblem([], 'expected a JSON object with "runner": "exec" or "plugin"');
  }
  const runner = (value as { runner?: unknown }).runner;
  if (runner === 'exec') return parseExec(check(schemas().execSetSchema, value), setName);
  if (runner === 'plugin') {
    const set = check(schemas().pluginSetSchema, value);
    return {
      runner: 'plugin',
      timeoutSeconds: timeoutOf(set.timeoutSeconds),
      module: set.module,
      approval: set.approval ?? 'inherit',
      catalogs: set.catalogs ?? BOTH,
      overrides: set.tools ?? {},
    };
  }
  throw new ManifestProblem(['runner'], 'expected "exec" or "plugin"');
}

function parseExec(set: ExecSet, setName: string): SetManifest {
  const shorthand = SHORTHAND_KEYS.filter((key) => set[key] !== undefined);
  if (set.tools && shorthand.length > 0) {
    throw new ManifestProblem(
      [shorthand[0] as string],
      'the shorthand form (description and schema at the top level) and a "tools" array cannot be mixed; move it into a tool',
    );
  }
  const tools: ExecTool[] = set.tools ?? [shorthandTool(set, setName)];
  const seen = new Set<string>();
  const specs = tools.map((tool, index): ExecToolSpec => {
    const where = set.tools ? ['tools', index] : [];
    if (seen.has(tool.name))
      throw new ManifestProblem([...where, 'name'], `the tool name ${tool.name} is used twice in this set`);
    seen.add(tool.name);
    const argv = [...(set.command ?? []), ...(tool.command ?? [])];
    if (argv.length === 0) {
      throw new ManifestProblem(
        [...where, 'command'],
        'expected a command: an argv array such as ["node", "tool.mjs"] on the set or the tool',
      );
    }
    return {
      name: tool.name,
      description: tool.description,
      parameters: tool.schema,
      command: argv,
      stdin: set.stdin ?? true,
      argv: Object.entries(tool.argv ?? {}),
      pathArguments: tool.pathArguments ?? [],
      output: tool.output ?? 'text',
      approval: tool.approval ?? set.approval ?? 'inherit',
      catalogs: tool.catalogs ?? set.catalogs ?? BOTH,
    };
  });
  return { runner: 'exec', timeoutSeconds: timeoutOf(set.timeoutSeconds), tools: specs };
}

function shorthandTool(set: ExecSet, setName: string): ExecTool {
  if (!TOOL_NAME.test(setName)) {
    throw new ManifestProblem(
      [],
      `the shorthand form names its tool after the directory, and ${setName} is not a tool name (${TOOL_NAME_EXPECTED}); use a "tools" array`,
    );
  }
  if (set.description === undefined) throw new ManifestProblem(['description'], 'expected a description (or a "tools" array)');
  if (set.schema === undefined) throw new ManifestProblem(['schema'], 'expected a JSON schema object for the arguments');
  return {
    name: setName,
    description: set.description,
    schema: set.schema,
    ...(set.argv ? { argv: set.argv } : {}),
    ...(set.pathArguments ? { pathArguments: set.pathArguments } : {}),
    ...(set.output ? { output: set.output } : {}),
  };
}

function timeoutOf(value: number | 'unlimited' | undefined): number | null {
  if (value === 'unlimited') return null;
  return value ?? DEFAULT_TIMEOUT;
}

function check<T extends z.ZodMiniType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data as z.output<T>;
  const { path, expectation } = firstProblem(result.error.issues);
  throw new ManifestProblem(path, expectation);
}
