/** The browser app: plain TypeScript and CSS from app/, built into dist/app/ (served by src/host.ts). */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('./app'),
  base: '/',
  logLevel: 'warn',
  publicDir: false,
  build: {
    outDir: here('./dist/app'),
    emptyOutDir: true,
    target: 'es2022',
    // The host's Content-Security-Policy allows no inline script, style or data: URL.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
    sourcemap: false,
    reportCompressedSize: false,
  },
});
