// Bundles the CLI with esbuild: one CommonJS bundle the bin compiles with V8's code cache
// (launch.cjs), and `--version`/`--help` in a file of their own (fast-path.cjs).
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
    'import.meta.url': '__crystalBundleUrl',
  },
  banner: { js: "var __crystalBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
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
// Pure ASCII, so Node reads it as a one-byte string: seven non-ASCII bytes (two regex literals) made
// V8 hold the 1.1 MB source as UTF-16 and cost 3 ms more to read at every start (issue 22 item 4).
const bundleText = readFileSync(`${outdir}/crystal.cjs`, 'latin1');
const nonAscii = bundleText.search(/[^\x00-\x7f]/);
if (nonAscii !== -1) {
  const line = bundleText.slice(0, nonAscii).split('\n').length;
  const near = Buffer.from(bundleText.slice(nonAscii - 30, nonAscii + 10), 'latin1').toString('utf8');
  throw new Error(
    `packages/cli/dist/crystal.cjs has a non-ASCII character at line ${line} (${JSON.stringify(near)}); write it as a \\u escape in the source.`,
  );
}
// The cache is named for the bundle's content, so a new build never reads an old build's cache.
const bundleHash = createHash('sha256')
  .update(readFileSync(`${outdir}/crystal.cjs`))
  .digest('hex')
  .slice(0, 16);
await build({
  entryPoints: [`${root}packages/cli/src/launch.ts`],
  outfile: `${outdir}/launch.cjs`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  define: { CRYSTAL_BUNDLE_HASH: JSON.stringify(bundleHash) },
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
