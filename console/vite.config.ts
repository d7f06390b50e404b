import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web console (issue 36): Preact, built by Vite into dist/console, which the API serves at
 * /console. No assets from the internet; the CSP the API sends allows only its own origin.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Hashed file names: the API serves assets/ as immutable.
    assetsDir: 'assets',
    sourcemap: true,
  },
  // `npx vite -c console/vite.config.ts` serves the console with hot reload; the API (npm start) answers its calls.
  server: { proxy: { '/v3': 'http://127.0.0.1:8080', '/oauth': 'http://127.0.0.1:8080' } },
});
