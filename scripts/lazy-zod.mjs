// zod, initialised in the CLI bundle when the engine first builds a schema, not when the engine's
// modules load (issue 22 item 4). The engine builds every schema on first use (lazy-schema.ts), and
// a start whose configuration is remembered (config/memo.ts) validates nothing before its first
// request; but esbuild runs a module's static imports with it, so zod's ~90 classes and their
// prototypes were still made at every start (~1 ms and ~300 KB of young objects, measured).
//
// For the engine's files (and theirs only), `zod/mini` and zod's English locale resolve to a
// module of forwarding functions, one per zod function the engine calls (`z.object(`, found in
// its sources), which requires the real functions on the first call: a module of their named
// re-exports, so esbuild still leaves out what the engine does not use (a namespace of zod/mini
// would keep every locale). The sources are unchanged, and so are the tests and the ES modules
// tsc writes: they import zod as written.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCALE = 'zod/v4/locales/en.js';

/** The engine's TypeScript files that import zod's runtime (a type-only import does not count). */
function zodImporters(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...zodImporters(path));
    else if (entry.name.endsWith('.ts') && /^import (?!type )[^;]*from 'zod\//m.test(readFileSync(path, 'utf8')))
      files.push(path);
  }
  return files;
}

/** The zod functions the engine calls, by name: every `z.<name>(` in the files that import zod. */
export function engineZodCalls(root) {
  const names = new Set();
  for (const file of zodImporters(join(root, 'packages/engine/src'))) {
    // Comments do not count (a doc comment may name `z.config`); `://` in a string is not one.
    const text = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    if (!/^import \* as z from 'zod\/mini';$/m.test(text) && !text.includes(`from '${LOCALE}'`)) {
      throw new Error(
        `${file} imports zod other than as \`import * as z from 'zod/mini'\`; scripts/lazy-zod.mjs forwards only that`,
      );
    }
    // A zod function is forwarded only where it is called; one read as a value (`z.string` passed
    // on, destructured) would be undefined in the bundle. Lower-case names not called are types (`z.output<`).
    const loose = /\bz\.([a-z_$][\w$]*)(?!\s*[(<\w$])/.exec(text);
    if (loose) throw new Error(`${file} uses z.${loose[1]} without calling it; scripts/lazy-zod.mjs forwards calls only`);
    for (const match of text.matchAll(/\bz\.([A-Za-z_$][\w$]*)\s*\(/g)) names.add(match[1]);
  }
  return [...names].sort();
}

/**
 * The module the forwarders require on their first call: zod's functions the engine calls and its
 * English locale. It is the zod chunk's (dist/zod.cjs, scripts/bundle.mjs), so the main bundle
 * holds none of zod, and a start that validates nothing does not read it.
 */
export const REAL = 'lazy-zod:real';

/** The esbuild plugin that makes `REAL` (the zod chunk's build). */
export function lazyZodReal(root) {
  const names = engineZodCalls(root);
  return {
    name: 'lazy-zod-real',
    setup(b) {
      b.onResolve({ filter: /^lazy-zod:real$/ }, () => ({ path: 'real', namespace: 'lazy-zod-real' }));
      b.onLoad({ filter: /.*/, namespace: 'lazy-zod-real' }, () => ({
        contents: `export { ${names.join(', ')} } from 'zod/mini';\nexport { default as en } from '${LOCALE}';\n`,
        loader: 'js',
        resolveDir: root,
      }));
    },
  };
}

/** The esbuild plugin of the forwarders (the main bundle's build). */
export function lazyZod(root) {
  const names = engineZodCalls(root);
  const engine = join(root, 'packages/engine/src/');
  return {
    name: 'lazy-zod',
    setup(b) {
      b.onResolve({ filter: /^zod\/(mini|v4\/locales\/en\.js)$/ }, (args) =>
        args.importer.startsWith(engine) ? { path: args.path, namespace: 'lazy-zod' } : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: 'lazy-zod' }, ({ path }) => {
        const lines = ['let real;', `const load = () => (real ??= require(${JSON.stringify(REAL)}));`];
        if (path === LOCALE) lines.push('export default function en() { return load().en(); }');
        else {
          // `enum` is a reserved word: each forwarder is a local, exported under zod's name.
          lines.push(...names.map((name, i) => `const f${i} = (...args) => load().${name}(...args);`));
          lines.push(`export { ${names.map((name, i) => `f${i} as ${name}`).join(', ')} };`);
        }
        return { contents: lines.join('\n'), loader: 'js', resolveDir: root };
      });
    },
  };
}
