/**
 * The built browser app (`packages/web/dist/app/`, written by `build-app.mjs`), loaded into
 * memory once at start-up. Requests are answered from this map only, so no path from a request
 * ever reaches the file system, and there is no directory listing (WEBX-3).
 *
 * The folder is found from this module (`src/` under vitest, `dist/` after `tsc`) or, when
 * esbuild has bundled this module into `packages/cli/dist/crystal.cjs` (the app is copied to
 * `packages/cli/dist/app/`), by walking up from the
 * bundle and from the started script to a folder holding `packages/web/dist/app/index.html`
 * (the repository) or `node_modules/@crystal/web/dist/app/index.html` (an installed package).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface AppFile {
  readonly body: Uint8Array;
  readonly type: string;
}

/** URL path (`/`, `/assets/main-1a2b.js`) to file. */
export type AppFiles = ReadonlyMap<string, AppFile>;

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

const MARKER = join('dist', 'app', 'index.html');

/** The app folder, or undefined when the app was not built. */
export function findAppDirectory(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  const direct = [resolve(here, '..', 'dist', 'app'), resolve(here, 'app')];
  for (const dir of direct) if (existsSync(join(dir, 'index.html'))) return dir;
  const starts = [here, process.argv[1] ? dirname(resolve(process.argv[1])) : undefined];
  for (const start of starts) {
    for (let dir = start; dir; ) {
      for (const base of [join(dir, 'packages', 'web'), join(dir, 'node_modules', '@crystal', 'web')]) {
        if (existsSync(join(base, MARKER))) return join(base, 'dist', 'app');
      }
      const parent = dirname(dir);
      dir = parent === dir ? undefined : parent;
    }
  }
  return undefined;
}

/** Reads every file of the app folder (a few small files) into memory. */
export function loadAppFiles(dir: string): AppFiles {
  const files = new Map<string, AppFile>();
  const walk = (folder: string, prefix: string): void => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      const info = statSync(path);
      if (info.isDirectory()) walk(path, `${prefix}${name}/`);
      else if (info.isFile()) {
        files.set(`${prefix}${name}`, {
          body: readFileSync(path),
          type: TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream',
        });
      }
    }
  };
  walk(dir, '/');
  const index = files.get('/index.html');
  if (!index) throw new Error(`The Web app folder ${dir} has no index.html; run 'npm run build' to build it.`);
  files.set('/', index);
  return files;
}
