// Built by `npm run build` into dist/console, which the service serves at /console (src/http/console-static.ts).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // Preact's automatic JSX runtime, through Vite's own transformer: no framework plugin needed.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // The strict Content-Security-Policy allows no inline script; the polyfill is for browsers we do not target.
    modulePreload: { polyfill: false },
    // Keep assets as files: img-src allows data: but fonts and scripts must come from 'self'.
    assetsInlineLimit: 0,
    target: 'es2022',
  },
});
