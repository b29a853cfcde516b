// Bundles the CLI with esbuild: the main CommonJS bundle the bin compiles with V8's code cache
// (launch.cjs), the terminal bundle a terminal session starts from (terminal.cjs: @crystal/tui and
// the first frame's code), and `--version`/`--help` in a file of their own (fast-path.cjs).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

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
  logLevel: 'warning',
});
assertAscii(`${outdir}/terminal.cjs`);

// The main bundle does not hold @crystal/tui: it requires the terminal bundle next to it, which the
// bin serves from the one loaded instance (packages/cli/src/launch.ts), so each terminal class and
// its module state exist once per process.
const tuiFromTerminalBundle = {
  name: 'tui-from-terminal-bundle',
  setup(b) {
    b.onResolve({ filter: /^@crystal\/tui$/ }, () => ({ path: 'tui', namespace: 'terminal-bundle' }));
    b.onLoad({ filter: /.*/, namespace: 'terminal-bundle' }, () => ({
      contents: "module.exports = require('./terminal.cjs').tui;",
      loader: 'js',
    }));
    b.onResolve({ filter: /^\.\/terminal\.cjs$/, namespace: 'terminal-bundle' }, () => ({
      path: './terminal.cjs',
      external: true,
    }));
  },
};

// One CommonJS file, compiled with V8's code cache by the bin (packages/cli/src/launch.ts; issue 22
// item 4). Modules imported with import() still run only when first imported: esbuild wraps each
// lazily imported module, so `run` evaluates no terminal or Web code.
await build({
  entryPoints: [`${root}packages/cli/src/main.ts`],
  outfile: `${outdir}/crystal.cjs`,
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
  plugins: [tuiFromTerminalBundle],
  // Native addons stay outside the bundle and load from node_modules when first used.
  external: ['sharp'],
  // jsonc-parser's `main` is a UMD build that require()s its parts at run time; bundle its ESM build,
  // and of it only the parser: the one use is `parseTree` (engine/src/config/json-edit.ts), and the
  // ESM main also loads the formatter, which builds 300 KB of indentation strings when it loads (a
  // third of a young-generation GC at every start; issue 22 item 4). Importing anything else from
  // 'jsonc-parser' fails the build with "No matching export": point this at main.js again then.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/impl/parser.js' },
  logLevel: 'warning',
});
assertAscii(`${outdir}/crystal.cjs`);
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
    CRYSTAL_TERMINAL_HASH: JSON.stringify(hashOf(`${outdir}/terminal.cjs`)),
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
