// The esbuild side of the files next to the main bundle that its require() is served from
// (scripts/bundle.mjs, packages/cli/src/launch.ts; issue 22): the terminal bundle, and the chunks,
// leaf third-party code split out of the main bundle and read when the main bundle first asks for it.
//
// A chunk must not hold a second copy of a module the main bundle holds (zod's core, which both the
// engine and the MCP SDK use): its module state would exist twice. Such a file is the main
// bundle's; the chunk takes it over when it is first loaded (`link`). Across that seam esbuild
// cannot see which exports are used, and a module handed over whole would keep every export of it
// in the main bundle (zod's core re-exports all its locales). So each shared file is handed over
// export by export: in the chunk, each export the file has is a pure call, `get(file, name)`,
// which esbuild drops when nothing uses it; the names whose call is still in the written chunk
// are the ones the main bundle hands over, and only those are kept alive in it.
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { build } from 'esbuild';

/**
 * A chunk's module is a package's specifier (`hono`) or one of our own files, named by its path
 * from the repository's root (`packages/cli/src/web-command.ts`), which the main bundle imports
 * with import() by a relative specifier (`./web-command.js`).
 */
const isOwnFile = (module) => module.startsWith('packages/');

/** A pattern matching exactly these module specifiers. */
const exactly = (specifiers) => new RegExp(`^(${specifiers.map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`);

/**
 * The files whose code a build's output holds, relative to the repository (the builds'
 * `absWorkingDir`); a file esbuild read but left out is not there, nor is a virtual module.
 */
export function inputsOf(metafile) {
  const files = new Set();
  for (const output of Object.values(metafile.outputs)) {
    for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) {
      if (bytesInOutput > 0 && !file.includes(':')) files.add(file);
    }
  }
  return files;
}

/**
 * The main bundle's side (a plugin). `served`: per file next to it, the specifiers it serves, each
 * `require('./<file>')` plus an accessor, in a module esbuild runs when it is first imported;
 * the bin serves that require from the one loaded instance of the file (launch.ts), and Node's
 * own require does when Node loads the bundle. `links`: per chunk, the main bundle's files it
 * takes over (file -> the export names it uses, or null for a CommonJS module, handed over whole);
 * they are handed over when the chunk is first required, before any of its modules runs.
 */
export function servedFromFiles(root, served, links = new Map()) {
  return {
    name: 'served-from-files',
    setup(b) {
      const ownFiles = new Map();
      for (const { file, modules } of served) {
        const specifiers = Object.keys(modules).filter((m) => !isOwnFile(m));
        for (const m of Object.keys(modules)) if (isOwnFile(m)) ownFiles.set(m, { file, accessor: modules[m] });
        if (specifiers.length === 0) continue;
        b.onResolve({ filter: exactly(specifiers) }, (args) => ({
          path: args.path,
          namespace: 'served',
          pluginData: { file, accessor: modules[args.path] },
        }));
      }
      // Our own file in a chunk: only an import() reaches it, so the commands that do not run it
      // never read the chunk. A static import of it would read the chunk at every start of the
      // importer's command; the build refuses it.
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        if (args.namespace !== 'file' || ownFiles.size === 0) return undefined;
        const file = relative(root, resolve(args.resolveDir, args.path)).replace(/\.js$/, '.ts');
        const hit = ownFiles.get(file);
        if (hit === undefined) return undefined;
        if (args.kind !== 'dynamic-import') {
          return {
            errors: [
              {
                text: `${file} is in ${hit.file}, so it is imported with import() only (${relative(root, args.importer)} imports it with ${args.kind})`,
              },
            ],
          };
        }
        return { path: file, namespace: 'served', pluginData: hit };
      });
      b.onLoad({ filter: /.*/, namespace: 'served' }, ({ pluginData: { file, accessor } }) => ({
        contents: `module.exports = require(${JSON.stringify(`served-file:${file}`)})${accessor};`,
        loader: 'js',
      }));
      b.onResolve({ filter: /^served-file:/ }, (args) => ({
        path: args.path.slice('served-file:'.length),
        namespace: 'served-file',
      }));
      b.onLoad({ filter: /.*/, namespace: 'served-file' }, ({ path }) => {
        const link = links.get(path);
        if (link === undefined) return { contents: `module.exports = require(${JSON.stringify(`./${path}`)});`, loader: 'js' };
        const imports = [];
        const table = [];
        for (const [index, [file, names]] of [...link].sort(([a], [b]) => a.localeCompare(b)).entries()) {
          const from = JSON.stringify(`${root}${file}`);
          if (names === null) {
            table.push(`get ${JSON.stringify(file)}() { return require(${from}); }`);
            continue;
          }
          const sorted = [...names].sort();
          // Imported even when the chunk uses no export of it: the chunk's import still runs the
          // module. Nothing of it is in the table then: the chunk asks for none of its names.
          if (sorted.length === 0) {
            imports.push(`import {} from ${from};`);
            continue;
          }
          imports.push(`import { ${sorted.map((name, i) => `${name} as s${index}_${i}`).join(', ')} } from ${from};`);
          // Values, not getters: a file whose exports may be reassigned is never handed over (buildChunk).
          table.push(`${JSON.stringify(file)}: { ${sorted.map((name, i) => `${name}: s${index}_${i}`).join(', ')} }`);
        }
        return {
          contents: [
            ...imports,
            `var chunk = require(${JSON.stringify(`./${path}`)});`,
            `chunk.link({ ${table.join(',\n')} });`,
            'export function load(id) { return chunk.load(id); }',
          ].join('\n'),
          loader: 'js',
          resolveDir: root,
        };
      });
      b.onResolve({ filter: /^\.\/[\w-]+\.cjs$/, namespace: 'served-file' }, (args) => ({ path: args.path, external: true }));
    },
  };
}

/**
 * An ES module's export names, `export *` followed (a build of it alone, not written). Its values
 * are handed over once, when the chunk first loads, so a module of it whose exports may be
 * reassigned later (`export let`) is refused.
 */
async function exportsOf(root, file, options) {
  const { metafile } = await build({
    ...options,
    entryPoints: [`${root}${file}`],
    bundle: true,
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const names = Object.values(metafile.outputs).flatMap((output) => output.exports ?? []);
  // Only a module whose exports are among the file's counts: the build follows every import (the
  // engine's index reaches zod's v3 helpers, whose `export var util` nothing hands over).
  for (const input of Object.keys(metafile.inputs)) {
    for (const [, name] of readFileSync(`${root}${input}`, 'utf8').matchAll(/^export\s+(?:let|var)\s+([\w$]+)/gm)) {
      if (names.includes(name)) {
        throw new Error(`${file} (${input}: ${name}) has an export that may be reassigned; it cannot be handed to a chunk`);
      }
    }
  }
  return names;
}

/** The chunk's entry: the main bundle links it once, then loads each specifier when first imported. */
function entryOf(chunk) {
  return [
    "var link = require('chunk-link');",
    'exports.link = link.link;',
    'exports.load = function (id) {',
    '  switch (id) {',
    ...chunk.modules.map((m) => `    case ${JSON.stringify(m)}: return require(${JSON.stringify(`chunk-module:${m}`)});`),
    `    default: throw new Error(${JSON.stringify(`${chunk.file} has no `)} + id);`,
    '  }',
    '};',
  ].join('\n');
}

// The chunk's side of the seam: what the main bundle handed over, asked for once by each module
// that imports it. A name the main bundle did not hand over is a build defect, not an undefined.
const LINK = [
  'var table;',
  'export function link(shared) { table = shared; }',
  'export function get(file, name) {',
  "  if (table === undefined) throw new Error('a chunk ran before the main bundle linked it');",
  '  if (name === undefined) return table[file];',
  "  if (!(name in table[file])) throw new Error('the main bundle did not hand ' + file + ' ' + name + ' over');",
  '  return table[file][name];',
  '}',
].join('\n');

/**
 * Whether a file only re-exports other modules (a package's index): it has no state, so the chunk
 * holds a copy of it and takes over each module it names, and what only the chunk uses of them
 * goes into the chunk, not kept alive in the main bundle through the index's names.
 */
export function reexportsOnly(path) {
  if (!reexporting.has(path)) reexporting.set(path, readsAsReexports(path));
  return reexporting.get(path);
}

/** `reexportsOnly` per path: each build of the loop asks again for the same files. */
const reexporting = new Map();

function readsAsReexports(path) {
  if (!/\.[cm]?[jt]s$/.test(path)) return false;
  const text = readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const statements = text
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
  return (
    statements.length > 0 && statements.every((s) => /^export\s+(\*|\{[^}]*\}|type\s+\{[^}]*\})\s+from\s+['"][^'"]+['"]$/.test(s))
  );
}

/** What a build of the main bundle holds: its files (`inputsOf`) and each one's module format. */
export function holdings(metafile) {
  const formats = new Map(Object.entries(metafile.inputs).map(([file, { format }]) => [file, format]));
  return { files: inputsOf(metafile), formats };
}

/**
 * Builds the chunk `{ file, modules }` into `options.outfile` with `options` (format, banner,
 * target as the main bundle's). A file of the main bundle (`main`, from `holdings`) that the chunk
 * imports is taken over from it. Returns the files the chunk holds and, for `servedFromFiles`,
 * what it takes over.
 */
export async function buildChunk(root, chunk, main, options) {
  const skip = Symbol('resolving');
  const taken = new Map();
  const { metafile } = await build({
    ...options,
    stdin: { contents: entryOf(chunk), resolveDir: root, sourcefile: `${chunk.file}-entry.js`, loader: 'js' },
    metafile: true,
    plugins: [
      ...(options.plugins ?? []),
      {
        name: 'chunk-links',
        setup(b) {
          b.onResolve({ filter: /^chunk-link$/ }, () => ({ path: 'link', namespace: 'chunk-link' }));
          b.onLoad({ filter: /.*/, namespace: 'chunk-link' }, () => ({ contents: LINK, loader: 'js' }));
          // The entry's require() of a specifier finds the file the main bundle's import() would
          // (the `import` condition: the SDK's ES modules, not its CommonJS copy).
          b.onResolve({ filter: /^chunk-module:/ }, (args) => {
            const module = args.path.slice('chunk-module:'.length);
            return b.resolve(isOwnFile(module) ? `./${module}` : module, {
              kind: 'dynamic-import',
              resolveDir: root,
              pluginData: skip,
            });
          });
          b.onResolve({ filter: /.*/ }, async (args) => {
            if (args.pluginData === skip || args.namespace === 'chunk-link' || args.namespace === 'shared') return undefined;
            const { path, external, errors } = await b.resolve(args.path, {
              kind: args.kind,
              importer: args.importer,
              resolveDir: args.resolveDir,
              pluginData: skip,
            });
            if (external || errors.length > 0 || !path.startsWith(root)) return undefined;
            const file = path.slice(root.length);
            if (!main.files.has(file) || reexportsOnly(`${root}${file}`)) return undefined;
            return { path: file, namespace: 'shared' };
          });
          b.onLoad({ filter: /.*/, namespace: 'shared' }, async ({ path: file }) => {
            const { platform, conditions, absWorkingDir } = options;
            const names =
              main.formats.get(file) === 'cjs' ? null : await exportsOf(root, file, { platform, conditions, absWorkingDir });
            taken.set(file, names);
            const key = JSON.stringify(file);
            if (names === null)
              return { contents: `module.exports = require('chunk-link').get(${key});`, loader: 'js', resolveDir: root };
            return {
              contents: [
                "import { get } from 'chunk-link';",
                ...names.map((name, i) => `const e${i} = /* @__PURE__ */ get(${key}, ${JSON.stringify(name)});`),
                `export { ${names.map((name, i) => `e${i} as ${name}`).join(', ')} };`,
              ].join('\n'),
              loader: 'js',
              resolveDir: root,
            };
          });
        },
      },
    ],
  });
  // The exports the written chunk still asks for: esbuild dropped the calls of the others.
  const text = readFileSync(options.outfile, 'latin1');
  const links = new Map();
  for (const [file, names] of taken) {
    const used =
      names === null ? null : names.filter((name) => text.includes(`(${JSON.stringify(file)},${JSON.stringify(name)})`));
    links.set(file, used);
  }
  const files = inputsOf(metafile);
  files.delete(`${chunk.file}-entry.js`);
  return { files, links };
}
