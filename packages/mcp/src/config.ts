/**
 * MCP server entries (MCP-2): `mcpServers` in Home `config.json` and the project's `.mcp.json`,
 * in Claude Code's format, so an existing file works unchanged:
 *
 *   { "mcpServers": { "fs": { "command": "npx", "args": ["-y", "pkg"], "env": { "K": "${K}" } },
 *                     "api": { "type": "http", "url": "https://…/mcp", "headers": { … } },
 *                     "old": { "type": "sse", "url": "https://…/sse" } } }
 *
 * `type` is `stdio` (the default with `command`), `http` (the default with `url`; also
 * `streamable-http`/`streamableHttp`) or `sse` (the legacy HTTP+SSE transport). `${VAR}` and
 * `${VAR:-default}` expand in `command`, `args`, `env`, `url` and `headers`, as Claude Code does.
 * Our own keys: `"trust": true` (calls pass without asking), `"timeoutSeconds"` (per call, default
 * 120, or `"unlimited"`), `"cwd"`, and `"disabled": true` / `"enabled": false` to keep an entry
 * without starting it. Unknown keys are ignored. Parsing never throws: a bad entry is left out
 * with one note naming the file, the key and the fix.
 */

export type McpTransportKind = 'stdio' | 'http' | 'sse';
export type McpServerSource = 'home' | 'project';

export interface McpServerSpec {
  /** The key under `mcpServers`. */
  readonly name: string;
  readonly source: McpServerSource;
  /** The file the entry came from. */
  readonly file: string;
  readonly transport: McpTransportKind;
  /** stdio: the program, its arguments, extra environment and working directory. */
  readonly command?: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** http and sse: the endpoint and extra request headers. */
  readonly url?: string;
  readonly headers: Readonly<Record<string, string>>;
  /** `"trust": true`: calls pass without asking in every approval mode. */
  readonly trust: boolean;
  /** Per-call timeout in milliseconds, or null for none. */
  readonly timeoutMs: number | null;
}

export const DEFAULT_CALL_TIMEOUT_SECONDS = 120;
/** The most a timer can wait (2^31 - 1 ms). */
const TIMER_MAX_SECONDS = 2147483;
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export interface ParsedServers {
  readonly servers: readonly McpServerSpec[];
  readonly notes: readonly string[];
}

/**
 * Reads the `mcpServers` value of one file. `value` is the parsed `mcpServers` object (or
 * undefined when the file has none); `env` is where `${VAR}` looks.
 */
export function parseMcpServers(
  value: unknown,
  file: string,
  source: McpServerSource,
  env: Readonly<Record<string, string | undefined>>,
): ParsedServers {
  if (value === undefined || value === null) return { servers: [], notes: [] };
  if (!isRecord(value)) {
    return {
      servers: [],
      notes: [`${file}: mcpServers must be an object of named server entries; no MCP server was read from it.`],
    };
  }
  const servers: McpServerSpec[] = [];
  const notes: string[] = [];
  for (const [name, entry] of Object.entries(value)) {
    try {
      const spec = parseEntry(name, entry, file, source, env);
      if (spec) servers.push(spec);
    } catch (error) {
      if (!(error instanceof EntryProblem)) throw error;
      notes.push(
        `${file}: mcpServers.${name}${error.key ? `.${error.key}` : ''}: ${error.message}; the MCP server ${name} was skipped.`,
      );
    }
  }
  return { servers, notes };
}

class EntryProblem extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

function parseEntry(
  name: string,
  entry: unknown,
  file: string,
  source: McpServerSource,
  env: Readonly<Record<string, string | undefined>>,
): McpServerSpec | undefined {
  if (!SERVER_NAME.test(name)) {
    throw new EntryProblem('', 'a server name has 1-64 characters: a letter or digit first, then letters, digits, _ . or -');
  }
  if (!isRecord(entry)) throw new EntryProblem('', 'expected an object such as {"command": "npx", "args": [...]}');
  if (entry.disabled === true || entry.enabled === false) return undefined;
  const type = optionalString(entry, 'type');
  const command = optionalString(entry, 'command');
  const url = optionalString(entry, 'url');
  let transport: McpTransportKind;
  if (type === undefined) {
    if (command !== undefined) transport = 'stdio';
    else if (url !== undefined) transport = 'http';
    else throw new EntryProblem('', 'expected "command" (a local stdio server) or "url" (a remote server)');
  } else if (type === 'stdio') transport = 'stdio';
  else if (type === 'http' || type === 'streamable-http' || type === 'streamableHttp') transport = 'http';
  else if (type === 'sse') transport = 'sse';
  else throw new EntryProblem('type', `${JSON.stringify(type)} is not a transport; use "stdio", "http" or "sse"`);
  const expand = (text: string, key: string): string => expandVariables(text, env, key);
  const headers = stringMap(entry, 'headers', expand);
  const common = {
    name,
    source,
    file,
    transport,
    trust: optionalBoolean(entry, 'trust') ?? false,
    timeoutMs: timeoutOf(entry),
    env: stringMap(entry, 'env', expand),
    headers,
  };
  if (transport === 'stdio') {
    if (command === undefined || command.trim() === '') {
      throw new EntryProblem('command', 'a stdio server needs "command", the program to start');
    }
    const args = stringArray(entry, 'args').map((arg, index) => expand(arg, `args.${index}`));
    const cwd = optionalString(entry, 'cwd');
    return { ...common, command: expand(command, 'command'), args, ...(cwd !== undefined ? { cwd: expand(cwd, 'cwd') } : {}) };
  }
  if (url === undefined) throw new EntryProblem('url', `a ${transport} server needs "url", the server's endpoint`);
  const expanded = expand(url, 'url');
  let parsed: URL;
  try {
    parsed = new URL(expanded);
  } catch {
    throw new EntryProblem('url', `${JSON.stringify(expanded)} is not an absolute URL such as "https://example.com/mcp"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new EntryProblem('url', `${JSON.stringify(expanded)} must be an http: or https: URL`);
  }
  return { ...common, args: [], url: parsed.href };
}

function timeoutOf(entry: Record<string, unknown>): number | null {
  const value = entry.timeoutSeconds;
  if (value === undefined) return DEFAULT_CALL_TIMEOUT_SECONDS * 1000;
  if (value === 'unlimited' || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > TIMER_MAX_SECONDS) {
    throw new EntryProblem('timeoutSeconds', `expected a number of seconds from 0 to ${TIMER_MAX_SECONDS}, or "unlimited"`);
  }
  return Math.round(value * 1000);
}

/** `${VAR}` and `${VAR:-default}`; an unset variable without a default is an error naming it. */
export function expandVariables(text: string, env: Readonly<Record<string, string | undefined>>, key = ''): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, variable: string, fallback?: string) => {
    const value = env[variable];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new EntryProblem(key, `the environment variable ${variable} is not set; set it or write \${${variable}:-default}`);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function optionalString(entry: Record<string, unknown>, key: string): string | undefined {
  const value = entry[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new EntryProblem(key, `expected a string, got ${describe(value)}`);
  return value;
}

function optionalBoolean(entry: Record<string, unknown>, key: string): boolean | undefined {
  const value = entry[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new EntryProblem(key, `expected true or false, got ${describe(value)}`);
  return value;
}

function stringArray(entry: Record<string, unknown>, key: string): string[] {
  const value = entry[key];
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new EntryProblem(key, `expected an array of strings, got ${describe(value)}`);
  return value.map((item, index) => {
    if (typeof item !== 'string') throw new EntryProblem(`${key}.${index}`, `expected a string, got ${describe(item)}`);
    return item;
  });
}

function stringMap(
  entry: Record<string, unknown>,
  key: string,
  expand: (text: string, key: string) => string,
): Record<string, string> {
  const value = entry[key];
  if (value === undefined) return {};
  if (!isRecord(value)) throw new EntryProblem(key, `expected an object of strings, got ${describe(value)}`);
  const out: Record<string, string> = {};
  for (const [name, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw new EntryProblem(`${key}.${name}`, `expected a string, got ${describe(item)}`);
    out[name] = expand(item, `${key}.${name}`);
  }
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

/**
 * Home entries first, then project entries; a project entry replaces a Home entry of the same
 * name (the project is more specific, as in Claude Code).
 */
export function mergeServers(home: readonly McpServerSpec[], project: readonly McpServerSpec[]): McpServerSpec[] {
  const byName = new Map<string, McpServerSpec>();
  for (const spec of [...home, ...project]) byName.set(spec.name, spec);
  return [...byName.values()];
}
