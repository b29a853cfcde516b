/**
 * The `crystal` entry. `--version` and `--help` answer from this small module alone, without
 * touching the network or Home (CLI-7); every command loads its own code with `import()`.
 */
import { answerFast } from './fast-path.js';
import { HELP } from './help.js';

async function main(argv: string[]): Promise<number> {
  if (answerFast(argv)) return 0;
  const [command, ...rest] = argv;
  if (command === 'run') {
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(HELP.run);
      return 0;
    }
    const { runCommand } = await import('./run-command.js');
    return runCommand(rest);
  }
  if (command === 'web') {
    const { webCommand } = await import('./web-command.js');
    return webCommand(rest);
  }
  if (command === 'sessions') {
    const { sessionsCommand } = await import('./sessions-command.js');
    return sessionsCommand(rest);
  }
  if (command === 'mcp') {
    const { mcpCommand } = await import('./mcp-command.js');
    return mcpCommand(rest);
  }
  if (command === 'export') {
    const { exportCommand } = await import('./sessions-command.js');
    return exportCommand(rest);
  }
  if (command === 'checkpoints' || command === 'rewind') {
    const { checkpointsCommand, rewindCommand } = await import('./checkpoints-command.js');
    return command === 'rewind' ? rewindCommand(rest) : checkpointsCommand(rest);
  }
  if (command === 'login' || command === 'logout' || command === 'models') {
    const setup = await import('./setup-commands.js');
    return (command === 'login' ? setup.loginCommand : command === 'logout' ? setup.logoutCommand : setup.modelsCommand)(rest);
  }
  if (command === 'demo') {
    const { demoCommand } = await import('./demo-command.js');
    return demoCommand(rest);
  }
  if (command !== undefined && !command.startsWith('-')) {
    process.stderr.write(`crystal: unknown command '${command}'. Run 'crystal --help' for the commands.\n`);
    return 1;
  }
  const { interactiveCommand } = await import('./interactive/index.js');
  return interactiveCommand(argv);
}

/**
 * The file of the install that `error` found missing: a chunk next to the main bundle (read by
 * the bin: ENOENT on its path; required by Node, as with CRYSTAL_COMPILE_CACHE=off or Node 22's
 * compile cache: MODULE_NOT_FOUND for `./<name>.cjs`), which a command reads when it first needs it.
 */
async function missingInstallFile(error: unknown): Promise<string | undefined> {
  const { code, path, message, requireStack } = (error ?? {}) as {
    code?: unknown;
    path?: unknown;
    message?: unknown;
    requireStack?: unknown;
  };
  // Built-ins through core (an import() of one in the bundle would be a real dynamic import).
  const { lazyBuiltin } = await import('@crystal/core');
  const { dirname, join } = lazyBuiltin<typeof import('node:path')>('node:path')();
  const { fileURLToPath } = lazyBuiltin<typeof import('node:url')>('node:url')();
  const dist = dirname(fileURLToPath(import.meta.url));
  if (code === 'ENOENT' && typeof path === 'string' && path.endsWith('.cjs') && dirname(path) === dist) return path;
  // Only a require from a bundle of the install (a plugin's own missing file is not the install's).
  const fromBundle = Array.isArray(requireStack) && typeof requireStack[0] === 'string' && dirname(requireStack[0]) === dist;
  const required =
    code === 'MODULE_NOT_FOUND' &&
    fromBundle &&
    typeof message === 'string' &&
    /^Cannot find module '\.\/([\w-]+\.cjs)'/.exec(message);
  return required ? join(dist, required[1] as string) : undefined;
}

/** A UsageError (a bad flag, a malformed config, nothing to resume) is the operator's to fix: one line, exit 1. */
async function report(error: unknown): Promise<void> {
  const { UsageError, isExpectedFsError, fsOperatorMessage } = await import('@crystal/engine/early');
  const missing = await missingInstallFile(error);
  // REL-13: an expected file-system failure (ENOSPC, EROFS, ENOENT, EACCES, …) says what failed,
  // the path and what to do; only a defect shows a stack.
  const text =
    missing !== undefined
      ? `this installation is incomplete: ${missing} is missing (the command reads it when it first needs it). Install Crystal Code again (in a checkout: npm run build).`
      : error instanceof UsageError || isExpectedFsError(error)
        ? fsOperatorMessage(error)
        : `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  process.stderr.write(`crystal: ${text}\n`);
  process.exitCode = 1;
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
}, report);
