// Bundles the CLI with esbuild: the main CommonJS bundle the bin compiles with V8's code cache
// (launch.cjs), the terminal bundle a terminal session starts from (terminal.cjs: @crystal/tui and
// the first frame's code), the chunks the main bundle reads when it first needs them (mcp-sdk.cjs,
// web-vendor.cjs, tools-vendor.cjs), and `--version`/`--help` in a file of their own (fast-path.cjs).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { buildChunk, holdings, servedFromFiles } from './bundle-chunks.mjs';
import { padBundle } from './external-text.mjs';
import { lazyZod } from './lazy-zod.mjs';

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

// Chunks (issue 22): leaf third-party code that `crystal run` never initialises, each in a CommonJS
// file of its own next to the main bundle. The bin compiles every bundle in full at each start (V8
// keeps the scope data of every function of a bundle with its top level, run or not), so code that
// a command never runs still costs it start-up time, about in proportion to its size. A chunk is
// read and compiled, with its own code cache, when the main bundle first asks for one of its modules
// (`modules`: the specifiers the main bundle imports, each behind an import() or in code that only
// its command runs). A file a chunk shares with the main bundle (zod's core, eventsource-parser) is
// not in the chunk: it is the main bundle's one instance, handed to the chunk when it is first
// loaded, so each module and its state exist once per process.
const CHUNKS = [
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
  },
  {
    // hono and its Node server, for `crystal web` alone (packages/web/src/host.ts, security.ts).
    file: 'web-vendor.cjs',
    modules: ['hono', 'hono/cookie', 'hono/streaming', '@hono/node-server'],
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
  for (const chunk of CHUNKS) {
    const built = await buildChunk(root, chunk, main, chunkOptions(chunk));
    assertAscii(`${outdir}/${chunk.file}`);
    links.set(chunk.file, built.links);
    // Each file is in one chunk at most.
    for (const file of built.files) {
      if (inChunks.has(file)) throw new Error(`${file} is in both ${inChunks.get(file)} and ${chunk.file}`);
      inChunks.set(file, chunk.file);
    }
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
// Written at the length whose text Node keeps outside V8's heap (before its hash is taken).
padBundle(`${outdir}/crystal.cjs`);
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
