// The WebGPU benchmark page (bench/webgpu/; bench/webgpu/run.mjs builds and serves it, or
// `npx vite bench/webgpu` serves it at http://localhost:5173/): the set-up of bench/browser/
// (Web Workers, COOP/COEP headers, MNIST served under /mnist/).
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { mnistData, isolation } from '../../web/vite-mnist.js';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  // KILN_BENCH_NO_MNIST=1: a build without /mnist/ (the SGEMM-only e2e smoke test, 4 s faster).
  plugins: process.env.KILN_BENCH_NO_MNIST === '1' ? [] : [mnistData()],
  worker: { format: 'es' },
  server: { headers: isolation, fs: { allow: [resolve(here, '../..')] } },
  preview: { headers: isolation },
  build: { minify: false, outDir: resolve(here, '../out/webgpu-app'), emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 4000 },
});
