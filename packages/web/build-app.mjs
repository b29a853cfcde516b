// Builds the browser app (packages/web/app -> packages/web/dist/app) with Vite's API.
// Run by itself (`node packages/web/build-app.mjs`) or awaited from scripts/bundle.mjs.
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const configFile = fileURLToPath(new URL('./vite.config.ts', import.meta.url));

export async function buildApp() {
  await build({ configFile, logLevel: 'warn' });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildApp();
