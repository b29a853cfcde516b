// Bundles the CLI with esbuild: the main CommonJS bundle the bin compiles with V8's code cache
// (launch.cjs), the terminal bundle a terminal session starts from (terminal.cjs: @crystal/tui and
// the first frame's code), the chunks the main bundle reads when it first needs them (zod.cjs,
// mcp-sdk.cjs, tools-vendor.cjs, interactive.cjs, web.cjs, commands.cjs), and `--version`/`--help`
// in a file of their own (fast-path.cjs).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { buildChunk, holdings, reexportsOnly, servedFromFiles } from './bundle-chunks.mjs';
import { lazyZod, lazyZodReal, REAL } from './lazy-zod.mjs';

const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
let commit = '';
try {
  commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
    .toString()
    .trim();
} catch {
  commit = '';
}
const outdir = `${root}packages/cli/dist`;
rmSync(outdir, { recursive: true, force: true });
/** The bundle's content hash: its cache files are named for it, so a new build never reads an old build's cache. */
const hashOf = (file) => createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16);

/**
 * Pure ASCII, so Node reads it as a one-byte string: seven non-ASCII bytes (two regex literals) made
 * V8 hold the 1.1 MB source as UTF-16 and cost 3 ms more to read at every start (issue 22 item 4).
 */
function assertAscii(file) {
  const text = readFileSync(file, 'latin1');
  const nonAscii = text.search(/[^\x00-\x7f]/);
  if (nonAscii === -1) return;
  const line = text.slice(0, nonAscii).split('\n').length;
  const near = Buffer.from(text.slice(nonAscii - 30, nonAscii + 10), 'latin1').toString('utf8');
  throw new Error(
    `${file.slice(root.length)} has a non-ASCII character at line ${line} (${JSON.stringify(near)}); write it as a \\u escape in the source.`,
  );
}

// `import.meta.url` in a bundle is the bundle's file URL, made when first asked for: node:url's
// pathToFileURL costs a start about a millisecond, and most starts never ask (issue 22).
const BUNDLE_URL = "var __crystalBundle = { get url() { return require('node:url').pathToFileURL(__filename).href; } };";
// Each bundle is written already wrapped as the function Node wraps a CommonJS file in, so the bin
// compiles the file's text as it was read (packages/cli/src/launch.ts): wrapping it there made a
// second copy of a megabyte of source and cost V8 a flatten, ~1 ms of every start (issue 22 item 4).
// Required by Node instead (Node 22's compile cache, CRYSTAL_COMPILE_CACHE=off), the same text
// calls that function with the module's own arguments.
const WRAPPED = {
  banner:
    '(function (f, a) { return a === void 0 ? f : f.apply(this, a); }).call(this, function (exports, require, module, __filename, __dirname) {' +
    BUNDLE_URL,
  footer: '}, typeof arguments === "undefined" ? void 0 : arguments);',
};

// node:module in the bundles is loaded when createRequire is first called, not when a module
// that imports it initialises (issue 22): loading it costs a start ~0.4 ms with the source-map
// module it loads, and on Node 20.16+ the code on the way to a request loads its built-ins with
// process.getBuiltinModule (packages/core/src/lazy-builtin.ts). An import of anything else from
// node:module fails the build ("No matching export"): add it here then.
const lazyNodeModule = {
  name: 'lazy-node-module',
  setup(b) {
    b.onResolve({ filter: /^(node:)?module$/ }, (args) =>
      args.namespace === 'lazy-node-module'
        ? { path: 'node:module', external: true }
        : { path: 'node:module', namespace: 'lazy-node-module' },
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-node-module' }, () => ({
      contents: "export function createRequire(from) { return require('node:module').createRequire(from); }",
      loader: 'js',
    }));
  },
};

// The terminal bundle (packages/cli/src/terminal-entry.ts; issue 22): @crystal/tui and the first
// frame's code path, which a terminal session compiles (with its own code cache) and paints from
// before the main bundle is read. `marked` and `string-width` stay in it behind their import().
await build({
  entryPoints: [`${root}packages/cli/src/terminal-entry.ts`],
  outfile: `${outdir}/terminal.cjs`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  sourcemap: 'linked',
  conditions: ['source'],
  // As in the main bundle: a module's own URL is the bundle's (core's lazy built-ins resolve from it).
  define: { 'import.meta.url': '__crystalBundle.url' },
  banner: { js: WRAPPED.banner },
  footer: { js: WRAPPED.footer },
  plugins: [lazyNodeModule],
  logLevel: 'warning',
});
assertAscii(`${outdir}/terminal.cjs`);

// Chunks (issue 22): code that a plain `crystal run` never initialises (third-party libraries, and
// our own code for the other commands), each in a CommonJS file of its own next to the main bundle.
// The bin compiles every bundle in full at each start (V8 keeps the scope data of every function of
// a bundle with its top level, run or not), so code that a command never runs still costs it
// start-up time, about in proportion to its size. A chunk is read and compiled, with its own code
// cache, when the main bundle first asks for one of its modules (`modules`: the specifiers the main
// bundle imports, each behind an import() or in code that only its command runs, or our own files
// by their path from the root, which only an import() may reach). A file a chunk shares with the
// main bundle (the engine's, eventsource-parser) is not in the chunk: it is the main bundle's one
// instance, handed to the chunk when it is first loaded, so each module and its state exist once
// per process. `ownCopies`: the files of which the chunk holds its own copy (zod, in the SDK's).
const CHUNKS = [
  {
    // zod, for the engine's schemas (scripts/lazy-zod.mjs): what the forwarders require on their
    // first call, when config.json is validated or a tool's arguments are. A start whose config is
    // remembered and that calls no tool never reads it.
    file: 'zod.cjs',
    modules: [REAL],
    plugins: [lazyZodReal(root.slice(0, -1))],
  },
  {
    // The MCP SDK and what it alone uses (ajv, fast-uri, eventsource, cross-spawn, zod's classic API,
    // ...): packages/mcp/src/connection.ts imports these with import() when a server connects.
    file: 'mcp-sdk.cjs',
    modules: [
      '@modelcontextprotocol/sdk/client/index.js',
      '@modelcontextprotocol/sdk/client/stdio.js',
      '@modelcontextprotocol/sdk/client/streamableHttp.js',
      '@modelcontextprotocol/sdk/client/sse.js',
    ],
    // The SDK's own zod (its classic API, and the core and JSON Schema code only it uses), not the
    // zod chunk's: the engine and the SDK never hand each other a schema, and each sets its own
    // locale. Sharing one copy kept ~46 KB of zod that only the SDK uses in whichever file held
    // it, the main bundle before the zod chunk, where every start paid for it (issue 22).
    ownCopies: /^node_modules\/zod\//,
  },
  {
    // The terminal session's code after its first frame (packages/cli/src/interactive/open.ts and
    // what it alone uses); its early part (interactive/index.ts) stays in the main bundle.
    file: 'interactive.cjs',
    modules: ['packages/cli/src/interactive/open.ts'],
  },
  {
    // `crystal web`: its command, the Web host (packages/web) and hono with its Node server.
    file: 'web.cjs',
    modules: ['packages/cli/src/web-command.ts'],
  },
  {
    // Our own code for the commands other than `run`, the terminal session, `sessions` and
    // `export` (small; main.ts imports each with import()): `mcp`, `checkpoints`, `rewind`, the
    // setup commands, and `demo` with the fake provider it serves (packages/testkit).
    file: 'commands.cjs',
    modules: [
      'packages/cli/src/mcp-command.ts',
      'packages/cli/src/checkpoints-command.ts',
      'packages/cli/src/setup-commands.ts',
      'packages/cli/src/demo-command.ts',
    ],
  },
  {
    // What some built-in tools import when first used (engine/src/tools/builtin: the diff a write
    // or an edit shows, glob filters); a turn without those tools never does. `ignore` (.gitignore
    // rules) stays in the main bundle: the checkpoint of every tool batch walks the workspace with it.
    file: 'tools-vendor.cjs',
    modules: ['diff', 'picomatch'],
  },
];

// What the main bundle's require() of a file next to it is served: the terminal bundle's `tui`
// export for @crystal/tui, and a chunk's module for each of its specifiers.
const served = [
  { file: 'terminal.cjs', modules: { '@crystal/tui': '.tui' } },
  ...CHUNKS.map(({ file, modules }) => ({
    file,
    modules: Object.fromEntries(modules.map((m) => [m, `.load(${JSON.stringify(m)})`])),
  })),
];

// One CommonJS file, compiled with V8's code cache by the bin (packages/cli/src/launch.ts; issue 22
// item 4). Modules imported with import() still run only when first imported: esbuild wraps each
// lazily imported module, so `run` evaluates no terminal or Web code. It holds neither @crystal/tui
// nor the chunks' modules: each is `require('./<file>')`, served by the bin from the one loaded
// instance of that file (scripts/bundle-chunks.mjs).
const mainOptions = {
  entryPoints: [`${root}packages/cli/src/main.ts`],
  outfile: `${outdir}/crystal.cjs`,
  absWorkingDir: root.slice(0, -1),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  sourcemap: 'linked',
  conditions: ['source'],
  define: {
    CRYSTAL_VERSION: JSON.stringify(pkg.version),
    CRYSTAL_COMMIT: JSON.stringify(commit),
    // The Web host finds its app next to the bundle (packages/web/src/app-files.ts).
    'import.meta.url': '__crystalBundle.url',
  },
  banner: { js: WRAPPED.banner },
  footer: { js: WRAPPED.footer },
  // Native addons stay outside the bundle and load from node_modules when first used.
  external: ['sharp'],
  // jsonc-parser's `main` is a UMD build that require()s its parts at run time; bundle its ESM build,
  // and of it only the parser: the one use is `parseTree` (engine/src/config/json-edit.ts), and the
  // ESM main also loads the formatter, which builds 300 KB of indentation strings when it loads (a
  // third of a young-generation GC at every start; issue 22 item 4). Importing anything else from
  // 'jsonc-parser' fails the build with "No matching export": point this at main.js again then.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/impl/parser.js' },
  metafile: true,
  logLevel: 'warning',
};
// The chunks are built against the files the main bundle holds (a build not written), then the main
// bundle with what they take over from it. Handing an export over keeps it alive in the main bundle,
// with what it uses: should that be a file a chunk holds, the chunks are built again against it.
const chunkOptions = (chunk) => ({
  // A chunk's @crystal/tui is the terminal bundle's, as the main bundle's is.
  plugins: [servedFromFiles(root, served.slice(0, 1)), ...(chunk.plugins ?? [])],
  outfile: `${outdir}/${chunk.file}`,
  absWorkingDir: root.slice(0, -1),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  sourcemap: 'linked',
  conditions: ['source'],
  define: { 'import.meta.url': '__crystalBundle.url' },
  banner: { js: WRAPPED.banner },
  footer: { js: WRAPPED.footer },
  logLevel: 'warning',
});
// zod initialises at the engine's first schema, not at start (scripts/lazy-zod.mjs); the engine's
// sources are read for its zod calls once, for every build of the main bundle below.
const zodForwarders = lazyZod(root.slice(0, -1));
let main = holdings(
  (
    await build({
      ...mainOptions,
      write: false,
      minify: false,
      sourcemap: false,
      plugins: [zodForwarders, lazyNodeModule, servedFromFiles(root, served)],
    })
  ).metafile,
);
for (;;) {
  const links = new Map();
  const inChunks = new Map();
  const inTwo = new Set();
  for (const chunk of CHUNKS) {
    const built = await buildChunk(root, chunk, main, chunkOptions(chunk));
    assertAscii(`${outdir}/${chunk.file}`);
    links.set(chunk.file, built.links);
    // Each file is in one chunk at most, but for a package's index: a stateless copy in each.
    for (const file of built.files) {
      if (reexportsOnly(`${root}${file}`)) continue;
      const other = CHUNKS.find((c) => c.file === inChunks.get(file));
      if (other !== undefined && !chunk.ownCopies?.test(file) && !other.ownCopies?.test(file)) inTwo.add(file);
      inChunks.set(file, chunk.file);
    }
  }
  // A file two chunks use goes into the main bundle (once per process), which hands it to both.
  if (inTwo.size > 0) {
    if ([...inTwo].every((file) => main.files.has(file))) throw new Error(`${[...inTwo].join(', ')}: in two chunks`);
    main = { files: new Set([...main.files, ...inTwo]), formats: main.formats };
    continue;
  }
  const { metafile } = await build({
    ...mainOptions,
    plugins: [zodForwarders, lazyNodeModule, servedFromFiles(root, served, links)],
  });
  assertAscii(`${outdir}/crystal.cjs`);
  const now = holdings(metafile);
  const twice = [...now.files].filter((file) => inChunks.has(file));
  if (twice.length === 0) break;
  if (twice.every((file) => main.files.has(file))) throw new Error(`${twice.join(', ')}: in the main bundle and a chunk`);
  main = { files: new Set([...main.files, ...now.files]), formats: now.formats };
}
await build({
  entryPoints: [`${root}packages/cli/src/launch.ts`],
  outfile: `${outdir}/launch.cjs`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  define: {
    CRYSTAL_BUNDLE_HASH: JSON.stringify(hashOf(`${outdir}/crystal.cjs`)),
    // The files next to the main bundle that its require() is served from, each with its own cache.
    CRYSTAL_CHUNK_HASHES: JSON.stringify(
      Object.fromEntries(['terminal.cjs', ...CHUNKS.map((c) => c.file)].map((file) => [file, hashOf(`${outdir}/${file}`)])),
    ),
  },
  logLevel: 'warning',
});
// `--version`/`--help` in CommonJS for the bin, which requires it before any ES module loads (issue 22 item 4).
await build({
  entryPoints: [`${root}packages/cli/src/fast-path.ts`],
  outfile: `${outdir}/fast-path.cjs`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  conditions: ['source'],
  define: { CRYSTAL_VERSION: JSON.stringify(pkg.version), CRYSTAL_COMMIT: JSON.stringify(commit) },
  logLevel: 'warning',
});
await (await import('../packages/web/build-app.mjs')).buildApp();
// The packed CLI carries the browser app next to its bundle, where the bundled web host looks
// first (packages/web/src/app-files.ts), so an installed `crystal web` needs no other package.
cpSync(`${root}packages/web/dist/app`, `${outdir}/app`, { recursive: true });
