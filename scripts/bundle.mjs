// Bundles the CLI with esbuild: a small entry, and each command and provider SDK in its own
// chunk loaded by import() only when used (fast `crystal --version`).
import { execFileSync } from 'node:child_process';
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
await build({
  entryPoints: { crystal: `${root}packages/cli/src/main.ts` },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  sourcemap: 'linked',
  conditions: ['source'],
  chunkNames: 'chunks/[name]-[hash]',
  define: { CRYSTAL_VERSION: JSON.stringify(pkg.version), CRYSTAL_COMMIT: JSON.stringify(commit) },
  banner: {
    js: "import { createRequire as __crystalRequire } from 'node:module'; const require = __crystalRequire(import.meta.url);",
  },
  // Native addons stay outside the bundle and load from node_modules when first used.
  external: ['sharp'],
  // jsonc-parser's `main` is a UMD build that require()s its parts at run time; bundle its ESM build.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
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
// The packed CLI carries the browser app next to its chunks, where the bundled web host looks
// first (packages/web/src/app-files.ts), so an installed `crystal web` needs no other package.
cpSync(`${root}packages/web/dist/app`, `${outdir}/chunks/app`, { recursive: true });
