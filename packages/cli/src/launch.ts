/**
 * How the bin starts every command but `--version`/`--help` (issue 22 item 4): the CLI is one
 * CommonJS bundle, `dist/crystal.cjs` (scripts/bundle.mjs), compiled with V8's code cache, so a
 * start does not parse a megabyte of JavaScript again. The bundle's modules still run only when
 * first imported (esbuild wraps each lazily imported module), so `run` evaluates no terminal or
 * Web code; the cache only skips the compile.
 *
 * A terminal session starts from a second, small bundle, `dist/terminal.cjs`
 * (packages/cli/src/terminal-entry.ts): `@crystal/tui` and the first frame's code alone, which
 * paints and takes keys, then runs the main bundle. The main bundle does not hold `@crystal/tui`:
 * its `require('./terminal.cjs')` gets the terminal bundle's exports (loaded already, or loaded
 * then, with its own cache), so there is one terminal module per process. The chunks next to it
 * are served the same way (`dist/zod.cjs`, `dist/mcp-sdk.cjs`, `dist/tools-vendor.cjs`, and our
 * own code for other commands: `dist/interactive.cjs`, `dist/web.cjs`, `dist/commands.cjs`; code
 * `crystal run` never runs, which in the main bundle would still cost every start its reading and
 * compile data; scripts/bundle.mjs): each is read and compiled when the main bundle first requires
 * it. Each bundle has its own cache file, named for its own content hash.
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
  read,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { constants as vmConstants, Script } from 'node:vm';

declare const CRYSTAL_BUNDLE_HASH: string;
/** The files next to the main bundle that its `require('./<name>')` is served (terminal.cjs, the chunks), each with its content hash. */
declare const CRYSTAL_CHUNK_HASHES: Readonly<Record<string, string>>;

/** The terminal bundle, next to the main one (packages/cli/src/terminal-entry.ts). */
export const TERMINAL_BUNDLE = 'terminal.cjs';

/** The file next to the bundle that `require(id)` names (`./terminal.cjs`, `./mcp-sdk.cjs`), if it is one. */
function servedName(id: string): string | undefined {
  const name = id.startsWith('./') ? id.slice(2) : undefined;
  return name !== undefined && Object.hasOwn(CRYSTAL_CHUNK_HASHES, name) ? name : undefined;
}

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

/** The cache file, opened, with its size; undefined when missing or unsafe. The caller closes it. */
function openCache(file: string): { fd: number; size: number } | undefined {
  if (!safeDirectory(dirname(file))) return undefined;
  // The first start of a build has none yet: asked without an exception (~0.3 ms for Node's first; issue 22).
  if (statSync(file, { throwIfNoEntry: false }) === undefined) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const stat = fstatSync(fd);
    if (stat.isFile() && onlyOurs(stat)) return { fd, size: stat.size };
  } catch {
    // Missing or unreadable: compiled from source.
  }
  if (fd !== undefined) closeSync(fd);
  return undefined;
}

/** One step of reading a bundle: `size` bytes of `fd` into the start of `buffer`. */
interface ReadStep {
  readonly fd: number;
  readonly buffer: Buffer;
  readonly size: number;
}

/** Reads `size` bytes of `fd` into the start of `buffer`; false when the file was shorter. */
function readInto({ fd, buffer, size }: ReadStep): boolean {
  let done = 0;
  while (done < size) {
    const n = readSync(fd, buffer, done, size - done, done);
    if (n === 0) return false;
    done += n;
  }
  return true;
}

/** The text of a bundle whose `size` bytes start `buffer`. */
function sourceIn(buffer: Buffer, size: number): string {
  // The bundles are pure ASCII (scripts/bundle.mjs refuses a non-ASCII byte), so latin1 reads
  // the same text without UTF-8 validation: ~1 ms less per start.
  return buffer.toString('latin1', 0, size);
}

/**
 * The bundle's text and its cached data (undefined when missing, unsafe or unreadable), read
 * through ONE buffer: the text is made from it, then the data is read over it. Each page of
 * fresh memory a start touches costs it a page fault, and two buffers of ~700 KB were ~170
 * faults more than one (~2 ms on a VM whose faults are slow; issue 22 item 4). Each read is a
 * step the caller makes, on the main thread (`readBundle`) or off it (`readBundleLater`), and
 * answers with whether the file had that many bytes.
 */
function* bundleReads(file: string, cacheFile: string): Generator<ReadStep, Read, boolean> {
  const fd = openSync(file, 'r');
  let cache: { fd: number; size: number } | undefined;
  try {
    const size = fstatSync(fd).size;
    cache = openCache(cacheFile);
    const buffer = Buffer.allocUnsafe(Math.max(size, cache?.size ?? 0));
    // A file that changed under the read is read again whole.
    const source = (yield { fd, buffer, size }) ? sourceIn(buffer, size) : readFileSync(file, 'latin1');
    let cachedData: Buffer | undefined;
    try {
      if (cache !== undefined && (yield { fd: cache.fd, buffer, size: cache.size })) cachedData = buffer.subarray(0, cache.size);
    } catch {
      cachedData = undefined;
    }
    return { source, cachedData };
  } finally {
    closeSync(fd);
    if (cache !== undefined) closeSync(cache.fd);
  }
}

/** `bundleReads` with each read made on the main thread. */
function readBundle(file: string, cacheFile: string): Read {
  const reads = bundleReads(file, cacheFile);
  let next = reads.next();
  while (!next.done) {
    let whole: boolean;
    try {
      whole = readInto(next.value);
    } catch (error) {
      next = reads.throw(error);
      continue;
    }
    next = reads.next(whole);
  }
  return next.value;
}

/** Reads `size` bytes of `fd` into the start of `buffer` on libuv's thread pool; false when the file was shorter. */
function readIntoLater({ fd, buffer, size }: ReadStep): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const from = (done: number): void => {
      if (done >= size) resolve(true);
      else
        read(fd, buffer, done, size - done, done, (error, bytes) => {
          if (error) reject(error);
          else if (bytes === 0) resolve(false);
          else from(done + bytes);
        });
    };
    from(0);
  });
}

/**
 * `bundleReads` with each read made off the main thread, which meanwhile does other work: a
 * terminal session takes keys, `run` loads node:http (`launch`). The pages of the buffer are
 * touched by the thread that reads into it.
 */
async function readBundleLater(file: string, cacheFile: string): Promise<Read> {
  const reads = bundleReads(file, cacheFile);
  let next = reads.next();
  while (!next.done) {
    let whole: boolean;
    try {
      whole = await readIntoLater(next.value);
    } catch (error) {
      next = reads.throw(error);
      continue;
    }
    next = reads.next(whole);
  }
  return next.value;
}

/**
 * The `require` of this file (dist/launch.cjs, next to the bundles), for built-ins and for what a
 * bundle requires: it resolves as one made for a bundle would. node:module's createRequire is not
 * used for it: loading node:module costs a start ~0.4 ms (with the source-map module it loads),
 * and on Node 20 nothing on the way to a request needs it (issue 22).
 */
function here(): NodeJS.Require {
  return require;
}

/**
 * Writes the data atomically (a reader sees the old file or the new one); any failure is ignored.
 * Cache files of other builds and Node versions (named with none of `keep`) are removed.
 */
function writeCache(file: string, data: Buffer, keep: readonly string[]): void {
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
      if (name.endsWith('.v8') && !keep.some((prefix) => name.startsWith(prefix))) rmSync(join(dir, name), { force: true });
    }
  } catch {
    // A full disk, a read-only home: the next start compiles from source again.
  }
}

/** The terminal bundle's exports (packages/cli/src/terminal-entry.ts) as launch uses them. */
interface TerminalBundle {
  startTerminal(argv: readonly string[], loadMain: (flush: () => Promise<void>) => Promise<void>): void;
}

/**
 * Whether stdin and stdout are both terminals, asked without making process.stdin/stdout; node:tty
 * is required only here (a terminal's stdout loads it anyway), so other commands never load it.
 */
function onTerminal(): boolean {
  const { isatty } = here()('node:tty') as typeof import('node:tty');
  return isatty(0) && isatty(1);
}

/**
 * Runs the CommonJS bundle at `bundle` for `argv` (the process's own arguments). A terminal
 * session (`crystal [flags]` on a terminal) starts from the terminal bundle next to it, which
 * paints the first frame and then runs this one.
 */
export function launch(bundle: string, argv: readonly string[]): void {
  // Which build the main bundle is (its content hash), for what the bundle keeps between starts (build.ts).
  (globalThis as Record<symbol, unknown>)[Symbol.for('crystal.build')] = CRYSTAL_BUNDLE_HASH;
  const load = loader(argv);
  const loaded = new Map<string, unknown>();
  // A bundle's `require('./terminal.cjs')` (the main bundle's `@crystal/tui`) or of a chunk: the one
  // instance of that file, read and compiled with its own cache when first required.
  const served = (name: string): unknown => {
    if (!loaded.has(name)) loaded.set(name, load.now(join(dirname(bundle), name), CRYSTAL_CHUNK_HASHES[name] as string, served));
    return loaded.get(name);
  };
  const kind = cacheKindOf(argv);
  if (kind === 'tui' && onTerminal()) {
    // After the first frame the main bundle is read off the main thread, so a key typed then is
    // echoed at once; its compile that follows is one synchronous block (a key then waits for it).
    (served(TERMINAL_BUNDLE) as TerminalBundle).startTerminal(argv, async (flush) => {
      const read = await load.read(bundle, CRYSTAL_BUNDLE_HASH);
      await flush();
      load.run(bundle, CRYSTAL_BUNDLE_HASH, served, read);
    });
  } else if (kind === 'run') {
    // Its first step is a provider's request. While the main bundle is read off the main thread,
    // the main thread loads node:http (~7 ms here, which the bundle would load anyway), so the
    // read (~2.5 ms) costs a start nothing.
    const read = load.read(bundle, CRYSTAL_BUNDLE_HASH);
    here()('node:http');
    read
      .then((done) => load.run(bundle, CRYSTAL_BUNDLE_HASH, served, done))
      // Thrown as a failed synchronous start's would be: an uncaught exception, not a rejection.
      .catch((error: unknown) =>
        process.nextTick(() => {
          throw error;
        }),
      );
  } else load.now(bundle, CRYSTAL_BUNDLE_HASH, served);
}

/** A bundle's source and code cache, read. */
interface Read {
  readonly source: string;
  readonly cachedData: Buffer | undefined;
}

/** The exports of the file next to the bundle that its `require('./<name>')` names (`servedName`). */
type Served = (name: string) => unknown;

interface Loader {
  /** Reads, compiles and runs the bundle at `file`; returns its exports. */
  now(file: string, hash: string, served: Served): unknown;
  /** Reads the bundle at `file` (and its cache) off the main thread. */
  read(file: string, hash: string): Promise<Read | undefined>;
  /** Compiles and runs what `read` read (from source when it read nothing). */
  run(file: string, hash: string, served: Served, read: Read | undefined): unknown;
}

/** How this Node loads a bundle: with its own compile cache, with ours, or from source. */
function loader(argv: readonly string[]): Loader {
  const dir = cacheDirectory();
  // Node 22.1+ has its own compile cache (node:module's enableCompileCache); Node 20 and 21 none.
  const nodeModule =
    Number(process.versions.node.split('.')[0]) >= 22
      ? (here()('node:module') as { enableCompileCache?: (dir?: string) => unknown })
      : {};
  // The bundle's own import() (a plugin file, sharp) must reach Node's loader from a vm.Script;
  // Node 20 has the constant for that from 20.12 (a function there needs a flag). Before it, and
  // on Node 22.1+ (its own cache), the bundle is required (and its require of the terminal
  // bundle or a chunk is Node's, which loads each once).
  const mainLoader = (vmConstants as unknown as { USE_MAIN_CONTEXT_DEFAULT_LOADER?: symbol } | undefined)
    ?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (typeof nodeModule.enableCompileCache === 'function' || mainLoader === undefined || dir === undefined) {
    if (dir !== undefined) nodeModule.enableCompileCache?.(process.env.CRYSTAL_COMPILE_CACHE ? dir : undefined);
    const required = (file: string): unknown => here()(file);
    return { now: required, read: async () => undefined, run: required };
  }
  // A script compiled from a cache has no dynamic-import hook on Node 20: the bundle's import()
  // of a plugin file or of sharp goes through this module's (packages/core/src/import-outside.ts).
  (globalThis as Record<symbol, unknown>)[Symbol.for('crystal.importOutside')] = (specifier: string) => import(specifier);
  const tail = `-${process.version}-${process.arch}-`;
  // Every bundle's cache files are this build's; any other is removed when one is written.
  const keep = [CRYSTAL_BUNDLE_HASH, ...Object.values(CRYSTAL_CHUNK_HASHES)].map((hash) => `${hash}${tail}`);
  const kind = cacheKindOf(argv);
  const cacheFile = (hash: string): string => join(dir, `${hash}${tail}${kind}.v8`);
  const run = (file: string, hash: string, served: Served, read: Read | undefined): unknown =>
    compileCached(file, read ?? readBundle(file, cacheFile(hash)), {
      cacheFile: cacheFile(hash),
      keep,
      mainLoader,
      served,
    });
  return {
    now: (file, hash, served) => run(file, hash, served, undefined),
    read: (file, hash) => readBundleLater(file, cacheFile(hash)),
    run,
  };
}

interface CompileOptions {
  readonly cacheFile: string;
  readonly keep: readonly string[];
  readonly mainLoader: symbol;
  /** The bundle's `require('./terminal.cjs')` and `require('./<chunk>.cjs')`. */
  readonly served: Served;
}

/** Compiles and runs the CommonJS file at `file` from `read`; returns its exports. */
function compileCached(file: string, { source, cachedData }: Read, options: CompileOptions): unknown {
  const { cacheFile, keep, served } = options;
  // The file is the wrapper function already (scripts/bundle.mjs): its text is compiled as read.
  const script = new Script(source, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: options.mainLoader as never,
  });
  if (cachedData === undefined || script.cachedDataRejected === true) {
    // At exit the functions the command compiled are in the data too. Only a command that
    // succeeded or opened a session writes it (packages/core/src/warm-start.ts): one that failed
    // or was interrupted early (a config error, Ctrl+C twice before the terminal's session
    // opened) compiled a fraction of its code, and an accepted cache is never rewritten. Nor does
    // a start that did one-off work (build.ts `configMemo`: it validated config.json, which the
    // next start of this build recalls): its cache would carry code later starts never run.
    process.once('exit', (code) => {
      const flags = globalThis as Record<symbol, unknown>;
      if (flags[Symbol.for('crystal.oneOffStart')] === true) return;
      if (code === 0 || flags[Symbol.for('crystal.warmStart')] === true) {
        writeCache(cacheFile, script.createCachedData(), keep);
      }
    });
  }
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: unknown,
    filename: string,
    dirname: string,
  ) => void;
  const module = { exports: {} as unknown };
  // The bundles are next to this file, so its require resolves what theirs would.
  const nodeRequire = here();
  // The main bundle's `require('./terminal.cjs')` (its `@crystal/tui`) or of a chunk gets the one
  // loaded instance of that file, compiled here with its own cache.
  const bundleRequire = Object.assign((id: string) => {
    const name = servedName(id);
    return name === undefined ? nodeRequire(id) : served(name);
  }, nodeRequire) as NodeJS.Require;
  wrapper.call(module.exports, module.exports, bundleRequire, module, file, dirname(file));
  return module.exports;
}
