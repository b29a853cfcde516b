/**
 * `crystal web [--port N] [--host ADDR] [--open]` (CLI-3): opens one session like `crystal`
 * (the same Home and session files, so `--resume ID` works both ways) and serves it to the
 * browser on loopback, printing the URL with this launch's secret token (WEBX-3).
 */
import { spawn } from 'node:child_process';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { loadConfig, resolveHome, SessionController, UsageError } from '@crystal/engine';
import { configMemo } from './build.js';
import { ensureTrusted } from './trust-prompt.js';
import { startWebHost } from '@crystal/web';
import { parseRunOptions, type RunOptions } from './run-options.js';

export const WEB_HELP = `Usage: crystal web [options]

Starts the Web surface: a host on this machine serving the conversation to your browser.
It prints the URL to open; the URL carries a secret token made for this launch.

Options:
      --port N               port to listen on (default: a free port)
      --host ADDR            address to bind (default: 127.0.0.1, this machine only)
      --open                 open the URL in the default browser
      --resume ID            continue a saved session (the terminal's sessions too)
      --continue             continue the newest session of this workspace
  Session flags as for 'crystal run': --provider, --model, --workspace, --home, --approval,
  --plan | --work, --thinking, --model-calls, --tool-calls, --duration, --bash-timeout.

Stop it with Ctrl+C, or /quit in the page.
`;

export interface WebOptions {
  readonly port: number;
  readonly host: string;
  readonly open: boolean;
  readonly session: RunOptions;
}

export async function webCommand(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(WEB_HELP);
    return 0;
  }
  return serve(parseWebOptions(argv));
}

/** Takes the web flags out, then checks the session flags with the `crystal run` parser. */
export function parseWebOptions(argv: readonly string[]): WebOptions {
  let port = 0;
  let host = '127.0.0.1';
  let open = false;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = (): string => {
      const next = inline ?? argv[++i];
      if (next === undefined || next === '') throw new UsageError(`${flag} needs a value.`);
      return next;
    };
    if (flag === '--port') port = parsePort(value());
    else if (flag === '--host') host = parseHost(value());
    else if (flag === '--open') open = true;
    else rest.push(arg);
  }
  const session = parseRunOptions(rest);
  if (session.prompt !== undefined) {
    throw new UsageError(`crystal web takes no prompt ('${session.prompt}'); type it in the page. Run 'crystal web --help'.`);
  }
  if (rest.some((a) => a.startsWith('--format') || a.startsWith('--image') || a === '--show-thinking')) {
    throw new UsageError("--format, --image and --show-thinking belong to 'crystal run'; the page shows everything.");
  }
  return { port, host, open, session };
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new UsageError(`--port must be a port number from 0 to 65535, not '${value}'.`);
  return n;
}

function parseHost(value: string): string {
  const bare = value.replace(/^\[(.*)\]$/, '$1');
  if (bare !== 'localhost' && isIP(bare) === 0) {
    throw new UsageError(`--host must be an IP address such as 127.0.0.1 (or localhost), not '${value}'.`);
  }
  return bare === 'localhost' ? '127.0.0.1' : bare;
}

function isLoopback(host: string): boolean {
  return host === '::1' || host.startsWith('127.');
}

async function serve(options: WebOptions): Promise<number> {
  const s = options.session;
  const home = resolveHome(s.home);
  const workspace = resolve(s.workspace ?? process.cwd());
  const config = loadConfig(home, configMemo(home));
  await ensureTrusted(home, workspace, config);
  const controller = await SessionController.open({
    home,
    workspace,
    config,
    provider: s.provider,
    model: s.model,
    thinking: s.thinking,
    limits: s.limits,
    approval: s.approval,
    approvalModel: s.approvalModel,
    plan: s.plan,
    bashTimeoutSeconds: s.bashTimeoutSeconds,
    skills: s.skills,
    resume: s.resume,
    continueLatest: s.continue,
    surface: 'web',
  });
  let host: Awaited<ReturnType<typeof startWebHost>>;
  try {
    host = await startWebHost({ controller, host: options.host, port: options.port });
  } catch (error) {
    await controller.close();
    throw error;
  }
  if (!isLoopback(options.host)) {
    process.stderr.write(
      `crystal: warning: listening on ${options.host}, reachable from other machines; the token is the only guard.\n`,
    );
  }
  process.stdout.write(`Crystal Code Web: ${host.url}\nSession ${controller.session.id} in ${workspace}. Stop with Ctrl+C.\n`);
  if (options.open) openBrowser(host.url);

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = async (): Promise<void> => {
      if (stopping) return;
      stopping = true;
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await host.close().catch(() => undefined);
      await controller.close().catch((error: unknown) => {
        process.stderr.write(`crystal: could not save the session: ${(error as Error).message}\n`);
      });
      const id = controller.session.id;
      // REL-3: "saved" only when it was; otherwise exit 1 (the reason was printed above).
      if (controller.session.saveError) return resolveExit(1);
      if (controller.session.history().length > 0) {
        process.stdout.write(`Session ${id} saved. Resume it with 'crystal --resume ${id}' or 'crystal web --resume ${id}'.\n`);
      }
      resolveExit(0);
    };
    const onSignal = (): void => void stop();
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    controller.on((event) => {
      if (event.type === 'quit') void stop();
    });
  });
}

/** Best effort: the URL is printed either way. */
function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(command, args as string[], { detached: true, stdio: 'ignore' });
    child.on('error', () => process.stderr.write(`crystal: could not open a browser (${command}); open the URL yourself.\n`));
    child.unref();
  } catch {
    process.stderr.write(`crystal: could not open a browser; open the URL yourself.\n`);
  }
}
