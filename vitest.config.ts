import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string): string => fileURLToPath(new URL(`./packages/${path}`, import.meta.url));
const pkg = (name: string): string => src(`${name}/src/index.ts`);

export default defineConfig({
  resolve: {
    alias: [
      // The engine's subpath entries (a test may import CLI source that uses them) before the package itself.
      { find: '@crystal/engine/early', replacement: src('engine/src/early.ts') },
      { find: '@crystal/engine/stages', replacement: src('engine/src/stages.ts') },
      ...['core', 'sandbox', 'providers', 'mcp', 'engine', 'tui', 'web', 'testkit'].map((name) => ({
        find: `@crystal/${name}`,
        replacement: pkg(name),
      })),
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
