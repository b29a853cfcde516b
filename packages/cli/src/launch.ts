/**
 * How the bin starts every command but `--version`/`--help` (issue 22 item 4): the CLI is one
 * CommonJS bundle, `dist/crystal.cjs` (scripts/bundle.mjs), compiled with V8's code cache, so a
 * start does not parse a megabyte of JavaScript again. The bundle's modules still run only when
 * first imported (esbuild wraps each lazily imported module), so `run` evaluates no terminal or
 * Web code; the cache only skips the compile.
 *
 * - Node 22.1+ has a compile cache of its own (`module.enableCompileCache`): the bundle is
 *   required with it on, and nothing below runs.
 * - Node 20 has none for modules, so the bundle is compiled here with `vm.Script` and
 *   `cachedData`, and the data V8 produced is written at exit when there was none or V8 refused
 *   it (another Node, another build). One cache file per kind of command (run, the terminal,
 *   web, the rest), since each compiles different functions.
 *
 * A code cache is code: V8 checks it against the source's length, not its content, so a file
 * someone else could write would run their code. It is therefore read only from a folder owned
 * by this user that no one else can write (`~/.cache/crystal/compile`, made 0700), from a file
 * owned by this user, named for this build's content hash and this Node. Anything else is
 * compiled from source and left alone. `CRYSTAL_COMPILE_CACHE=off` turns it off;
 * `CRYSTAL_COMPILE_CACHE=/some/dir` puts it elsewhere (same checks).
 */
import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import Module, { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { constants as vmConstants, Script } from 'node:vm';

declare const CRYSTAL_BUNDLE_HASH: string;

/** The cache file's kind: commands compile different functions, so each kind keeps its own. */
export function cacheKindOf(argv: readonly string[]): string {
  const [command] = argv;
  if (command === 'run' || command === 'web') return command;
  if (command === undefined || command.startsWith('-')) return 'tui';
  return 'other';
}

/** The cache folder, or undefined when turned off. */
export function cacheDirectory(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const setting = env.CRYSTAL_COMPILE_CACHE;
  if (setting !== undefined && setting !== '') {
    return ['off', '0', 'false', 'no'].includes(setting.toLowerCase()) ? undefined : setting;
  }
  if (process.platform === 'win32' && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, 'crystal', 'cache', 'compile');
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'crystal', 'compile');
}

/** Only this user can have written it: owned by us, writable by no one else. */
function onlyOurs(stat: Stats): boolean {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return true;
  return stat.uid === process.getuid() && (stat.mode & 0o022) === 0;
}

function safeDirectory(dir: string): boolean {
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() && onlyOurs(stat);
  } catch {
    return false;
  }
}

/** The cached data, or undefined (missing, unsafe, unreadable). */
function readCache(file: string): Buffer | undefined {
  if (!safeDirectory(dirname(file))) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const stat = fstatSync(fd);
    if (!stat.isFile() || !onlyOurs(stat)) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Writes the data atomically (a reader sees the old file or the new one); any failure is ignored. */
function writeCache(file: string, data: Buffer, prefix: string): void {
  try {
    const dir = dirname(file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!safeDirectory(dir)) return;
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, data, { mode: 0o600, flag: 'wx' });
    try {
      renameSync(temp, file);
    } catch {
      rmSync(temp, { force: true });
      return;
    }
    // Files of other builds or other Node versions are never read again.
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(prefix) && name.endsWith('.v8')) rmSync(join(dir, name), { force: true });
    }
  } catch {
    // A full disk, a read-only home: the next start compiles from source again.
  }
}

/** Runs the CommonJS bundle at `bundle` for `argv` (the process's own arguments). */
export function launch(bundle: string, argv: readonly string[]): void {
  const dir = cacheDirectory();
  const nodeModule = Module as unknown as { enableCompileCache?: (dir?: string) => unknown };
  // The bundle's own import() (a plugin file, sharp) must reach Node's loader from a vm.Script;
  // Node 20 has the constant for that from 20.12 (a function there needs a flag). Before it, and
  // on Node 22.1+ (its own cache), the bundle is required.
  const mainLoader = (vmConstants as unknown as { USE_MAIN_CONTEXT_DEFAULT_LOADER?: symbol } | undefined)
    ?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (typeof nodeModule.enableCompileCache === 'function' || mainLoader === undefined || dir === undefined) {
    if (dir !== undefined) nodeModule.enableCompileCache?.(process.env.CRYSTAL_COMPILE_CACHE ? dir : undefined);
    createRequire(bundle)(bundle);
    return;
  }
  // A script compiled from a cache has no dynamic-import hook on Node 20: the bundle's import()
  // of a plugin file or of sharp goes through this module's (packages/core/src/import-outside.ts).
  (globalThis as Record<symbol, unknown>)[Symbol.for('crystal.importOutside')] = (specifier: string) => import(specifier);
  const prefix = `${CRYSTAL_BUNDLE_HASH}-${process.version}-${process.arch}-`;
  const file = dir === undefined ? undefined : join(dir, `${prefix}${cacheKindOf(argv)}.v8`);
  const cachedData = file === undefined ? undefined : readCache(file);
  // The bundle is pure ASCII (scripts/bundle.mjs refuses a non-ASCII byte), so latin1 reads the same
  // text without UTF-8 validation: ~1 ms less per start (issue 22 item 4).
  const source = readFileSync(bundle, 'latin1');
  const script = new Script(Module.wrap(source), {
    filename: bundle,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: mainLoader as never,
  });
  if (file !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
    // At exit the functions the command compiled are in the data too. Only a command that
    // succeeded or opened a session writes it (packages/core/src/warm-start.ts): one that failed
    // or was interrupted early (a config error, Ctrl+C twice before the terminal's session
    // opened) compiled a fraction of its code, and an accepted cache is never rewritten.
    process.once('exit', (code) => {
      const warm = (globalThis as Record<symbol, unknown>)[Symbol.for('crystal.warmStart')] === true;
      if (code === 0 || warm) writeCache(file, script.createCachedData(), prefix);
    });
  }
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: unknown,
    filename: string,
    dirname: string,
  ) => void;
  const module = { exports: {} };
  wrapper.call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
}
