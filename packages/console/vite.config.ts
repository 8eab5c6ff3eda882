// The console is a static single-page app served by the gateway at / (services/gateway/src/http/console-static.ts).
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, assetsInlineLimit: 0, chunkSizeWarningLimit: 400 },
  // dev server (npm run dev in this folder): the API of a local fleet on the same origin
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
