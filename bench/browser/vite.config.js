// The browser benchmark's page (bench/browser/epoch.mjs builds and serves it): the same
// set-up as the playground (a Web Worker, COOP/COEP headers, MNIST served under /mnist/).
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { mnistData, isolation } from '../../web/vite-mnist.js';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  plugins: [mnistData()],
  worker: { format: 'es' },
  server: { headers: isolation, fs: { allow: [resolve(here, '../..')] } },
  preview: { headers: isolation },
  // Not minified: TF.js's threaded WASM backend starts its pthreads from the source text of
  // its Emscripten factory (Function.toString), which minification breaks.
  build: { minify: false, outDir: resolve(here, '../out/browser-app'), emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 4000 },
});
