/**
 * `crystal mcp list|add|remove|get` (MCP-6), in Claude Code's shape:
 *   crystal mcp add [-s home|project] [-t stdio|http|sse] [-e K=V]… [-H "K: V"]… [--trust] NAME COMMAND_OR_URL [ARGS…]
 * `list` and `get` start the servers (bounded wait) to show their state and tools.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  addServerEntry,
  configuredServers,
  loadConfig,
  RUN_MCP_STARTUP_MS,
  readServerEntries,
  removeServerEntry,
  resolveHome,
  type ServerScope,
  serverFileFor,
  startMcpHost,
  UsageError,
} from '@crystal/engine';

const USAGE = `Usage:
  crystal mcp list                          servers of Home and this project, with their state
  crystal mcp get NAME                      one server's entry, state and tools
  crystal mcp add [options] NAME COMMAND [ARGS...]   a stdio server (put -- before ARGS that start with -)
  crystal mcp add -t http|sse [options] NAME URL      a remote server
  crystal mcp remove [-s home|project] NAME

Options of add:
  -s, --scope home|project   Home config.json (default) or the project's .mcp.json
  -t, --transport KIND       stdio (default) | http | sse
  -e, --env KEY=VALUE        environment of a stdio server (repeatable)
  -H, --header "Name: value" request header of a remote server (repeatable)
      --trust                its calls pass without asking
      --timeout S            per-call timeout in seconds, or "unlimited" (default 120)
Common: --home DIR, -w/--workspace DIR
`;

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        scope: { type: 'string', short: 's' },
        transport: { type: 'string', short: 't' },
        env: { type: 'string', short: 'e', multiple: true },
        header: { type: 'string', short: 'H', multiple: true },
        trust: { type: 'boolean' },
        timeout: { type: 'string' },
        home: { type: 'string' },
        workspace: { type: 'string', short: 'w' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. Run 'crystal mcp --help' for the commands.`);
  }
}

export async function mcpCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv);
  const [sub, ...rest] = positionals;
  if (values.help || sub === undefined || sub === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const home = resolveHome(values.home);
  const workspace = resolve(values.workspace ?? process.cwd());
  const scope = scopeOf(values.scope);
  switch (sub) {
    case 'add':
      return add(home, workspace, scope ?? 'home', rest, values);
    case 'remove':
      return remove(home, workspace, scope, rest);
    case 'list':
      return list(home, workspace);
    case 'get':
      return get(home, workspace, rest);
    default:
      throw new UsageError(`crystal mcp: unknown subcommand '${sub}'; use list, get, add or remove.`);
  }
}

function scopeOf(value: string | undefined): ServerScope | undefined {
  if (value === undefined) return undefined;
  if (value === 'home' || value === 'user') return 'home';
  if (value === 'project') return 'project';
  throw new UsageError(`--scope ${value}: use home or project.`);
}

async function add(
  home: string,
  workspace: string,
  scope: ServerScope,
  rest: readonly string[],
  values: ReturnType<typeof parse>['values'],
): Promise<number> {
  const [name, target, ...args] = rest;
  if (!name || !target) throw new UsageError('crystal mcp add needs a NAME and a COMMAND (or a URL with -t http|sse).');
  const transport = values.transport ?? 'stdio';
  if (!['stdio', 'http', 'sse'].includes(transport)) throw new UsageError(`--transport ${transport}: use stdio, http or sse.`);
  const entry: Record<string, unknown> =
    transport === 'stdio' ? { type: 'stdio', command: target, args } : { type: transport, url: target };
  if (transport !== 'stdio' && args.length > 0)
    throw new UsageError(`A ${transport} server takes one URL; got also: ${args.join(' ')}.`);
  const env = pairs(values.env ?? [], '=', '--env', 'KEY=VALUE');
  const headers = pairs(values.header ?? [], ':', '--header', '"Name: value"');
  if (Object.keys(env).length > 0) {
    if (transport !== 'stdio') throw new UsageError('--env is for stdio servers; a remote server takes --header.');
    entry.env = env;
  }
  if (Object.keys(headers).length > 0) {
    if (transport === 'stdio') throw new UsageError('--header is for http and sse servers; a stdio server takes --env.');
    entry.headers = headers;
  }
  if (values.trust) entry.trust = true;
  if (values.timeout !== undefined) entry.timeoutSeconds = values.timeout === 'unlimited' ? 'unlimited' : Number(values.timeout);
  const file = serverFileFor(scope, home, workspace);
  await addServerEntry(file, scope, name, entry, process.env);
  process.stdout.write(`Added the MCP server ${name} to ${file}.\n`);
  return 0;
}

function pairs(items: readonly string[], separator: string, flag: string, shape: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf(separator);
    if (at <= 0) throw new UsageError(`${flag} ${item}: expected ${shape}.`);
    out[item.slice(0, at).trim()] = item.slice(at + 1).trim();
  }
  return out;
}

async function remove(home: string, workspace: string, scope: ServerScope | undefined, rest: readonly string[]): Promise<number> {
  const [name] = rest;
  if (!name) throw new UsageError('crystal mcp remove needs the NAME of a server.');
  const scopes: ServerScope[] = scope ? [scope] : ['home', 'project'];
  const holders = scopes.filter((s) => name in readServerEntries(serverFileFor(s, home, workspace)));
  if (holders.length === 0)
    throw new UsageError(`No MCP server named ${name} in ${scopes.map((s) => serverFileFor(s, home, workspace)).join(' or ')}.`);
  if (holders.length > 1) {
    throw new UsageError(
      `${name} is in both ${serverFileFor('home', home, workspace)} and ${serverFileFor('project', home, workspace)}; say which with --scope home|project.`,
    );
  }
  const file = serverFileFor(holders[0] as ServerScope, home, workspace);
  await removeServerEntry(file, holders[0] as ServerScope, name);
  process.stdout.write(`Removed the MCP server ${name} from ${file}.\n`);
  return 0;
}

async function started(home: string, workspace: string) {
  const config = loadConfig(home);
  const notes: string[] = [];
  const host = startMcpHost({ home, workspace, config, imageInput: () => true, onNote: (text) => notes.push(text) });
  await host.settle(RUN_MCP_STARTUP_MS);
  return { host, notes, untrusted: configuredServers({ home, workspace, config }).untrusted };
}

async function list(home: string, workspace: string): Promise<number> {
  const { host, untrusted } = await started(home, workspace);
  try {
    const statuses = host.manager?.status() ?? [];
    if (statuses.length === 0 && untrusted.length === 0) {
      process.stdout.write("No MCP servers. Add one with 'crystal mcp add NAME COMMAND [ARGS...]'.\n");
    }
    for (const s of statuses) {
      const detail = s.state === 'ready' ? `${s.tools.length} tools` : (s.error ?? '');
      process.stdout.write(`${s.name}  ${s.state}  ${s.transport}  ${s.source}  ${detail}\n`);
    }
    for (const s of untrusted) process.stdout.write(`${s.name}  not started (untrusted workspace)  ${s.transport}  project\n`);
    for (const note of host.notes) process.stderr.write(`${note}\n`);
    return 0;
  } finally {
    await host.close();
  }
}

async function get(home: string, workspace: string, rest: readonly string[]): Promise<number> {
  const [name] = rest;
  if (!name) throw new UsageError('crystal mcp get needs the NAME of a server.');
  const { host, untrusted } = await started(home, workspace);
  try {
    const spec = [...host.servers, ...untrusted].find((s) => s.name === name);
    if (!spec) throw new UsageError(`No MCP server named ${name}; 'crystal mcp list' shows them.`);
    const status = host.manager?.status().find((s) => s.name === name);
    const lines = [
      `${spec.name}`,
      `  file       ${spec.file}`,
      `  transport  ${spec.transport}`,
      spec.transport === 'stdio' ? `  command    ${[spec.command, ...spec.args].join(' ')}` : `  url        ${spec.url}`,
      ...(Object.keys(spec.env).length > 0 ? [`  env        ${Object.keys(spec.env).join(', ')} (values not shown)`] : []),
      ...(Object.keys(spec.headers).length > 0
        ? [`  headers    ${Object.keys(spec.headers).join(', ')} (values not shown)`]
        : []),
      `  trust      ${spec.trust ? 'yes: calls pass without asking' : 'no: calls ask'}`,
      `  timeout    ${spec.timeoutMs === null ? 'unlimited' : `${spec.timeoutMs / 1000} s per call`}`,
      `  state      ${status ? status.state : 'not started (untrusted workspace)'}${status?.error ? `: ${status.error}` : ''}`,
    ];
    const connection = host.manager?.connection(name);
    for (const tool of connection?.tools ?? [])
      lines.push(`  tool       ${tool.name}${tool.description ? `: ${tool.description}` : ''}`);
    for (const prompt of connection?.prompts ?? []) lines.push(`  prompt     ${prompt.name}`);
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await host.close();
  }
}
