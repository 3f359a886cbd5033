// End-to-end test of init()'s build selection in a browser (run by scripts/test.sh after
// scripts/build.sh; `node tests/e2e/threads.e2e.mjs`, exit status 0 when every check passed):
//   1. installs the package as npm would (package.json + dist/, its "files") into a scratch
//      Vite project: a page importing kiln-dl on the main thread and in a module Worker;
//   2. `vite build` (programmatic API), then two `vite preview` servers of the output: one
//      with COOP/COEP headers (cross-origin isolated), one without; also the `vite` dev
//      server and a plain static server of the unbundled package (an import map and a
//      <script type="module">), both with COOP/COEP;
//   3. headless Chromium (playwright-core, /usr/bin/chromium) loads each page and checks:
//      isolated page, main thread and worker: backendInfo().build === 'simd-threads' with
//      2+ threads, a 64x784 · 784x128 product (the MNIST layer) within the f32 bound of a
//      double sum computed here, and bit-identical to the single-threaded build's result
//      (init({threads: false}) in the same page) and to itself with 1 thread; four Adam steps
//      of the MNIST CNN (the kernels the pool splits) bit-identical likewise; 10,000 caught
//      errors leave the stack pointer and malloc'd bytes exactly as they were;
//      plain page: 'simd' (or 'simd-relaxed'), and init({threads: true}) rejects with KilnError `Config`;
//      dev server and unbundled page (main thread): 'simd-threads' and the product right;
//      init()'s default there (main thread and worker): 'simd-threads-relaxed' (kiln-mt-relaxed.wasm)
//      bit-identical on N and 1 threads and to the single-threaded relaxed build, and
//      within the f32 bound of SIMD128's results.
// Prints one line per check and the main thread's product times with 1 and all threads
// (informational; no timing assertion). Skips (exit 0) without /usr/bin/chromium.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const chromiumPath = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium';
const log = (line) => console.log(`[e2e threads] ${line}`);

if (!existsSync(chromiumPath)) {
  log(`skipped: no Chromium at ${chromiumPath}`);
  process.exit(0);
}
for (const f of ['index.js', 'kiln.mjs', 'kiln-mt.mjs', 'kiln-mt.wasm', 'kiln-mt-relaxed.wasm', 'kiln-mt.worker.js']) {
  if (!existsSync(join(repo, 'dist', f))) {
    console.error(`[e2e threads] dist/${f} is missing: run scripts/build.sh first`);
    process.exit(1);
  }
}

const { build, preview, createServer: createViteServer } = await import('vite');
// Whether this CPU's relaxed_madd fuses (x86-64 with FMA3 does): the page runs the same check.
const { MADD_MODULE, maddSemantics } = await import('../js/support/relaxed_checks.mjs');
const { chromium } = await import('playwright-core');

// ---- the scratch app ----
const M = 64, K = 784, N = 128;
const app = mkdtempSync(join(tmpdir(), 'kiln-threads-e2e-'));
const pkgDir = join(app, 'node_modules', 'kiln-dl');
mkdirSync(pkgDir, { recursive: true });
cpSync(join(repo, 'package.json'), join(pkgDir, 'package.json'));
cpSync(join(repo, 'dist'), join(pkgDir, 'dist'), { recursive: true });
// The package's run-time dependencies (imported lazily by kiln.data's CSV and SQLite
// datasets), as `npm install kiln-dl` would install them next to it.
const pkgJson = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
for (const dep of Object.keys(pkgJson.dependencies ?? {})) {
  const to = join(app, 'node_modules', dep);
  mkdirSync(dirname(to), { recursive: true });
  symlinkSync(join(repo, 'node_modules', dep), to, 'dir');
}
writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'threads-e2e', private: true, type: 'module' }));
writeFileSync(join(app, 'index.html'), `<!doctype html><html><head><meta charset="utf-8">
<link rel="icon" href="data:,"><title>kiln threads e2e</title></head>
<body><script type="module" src="/main.js"></script></body></html>`);
// The product both pages compute: deterministic operands (exact in f32), the result as a
// plain array, the build's info, and the time of `reps` products per thread count.
const shared = `
import { init, KilnError } from 'kiln-dl';
export function operands() {
  const a = new Float32Array(${M * K}), b = new Float32Array(${K * N});
  for (let i = 0; i < a.length; i++) a[i] = ((i * 7919) % 1009) / 512 - 1;
  for (let i = 0; i < b.length; i++) b[i] = ((i * 104729) % 997) / 512 - 1;
  return { a, b };
}
export function product(kiln) {
  const { a, b } = operands();
  return kiln.tidy(() => Array.from(kiln.Tensor.fromData(a, { shape: [${M}, ${K}] })
    .matmul(kiln.Tensor.fromData(b, { shape: [${K}, ${N}] })).dataSync()));
}
function timeProducts(kiln, reps) {
  const x = kiln.Tensor.random([256, 256], { uniform: [-1, 1] }, { seed: 1 });
  const start = performance.now();
  for (let r = 0; r < reps; r++) kiln.tidy(() => x.matmul(x).dataSync());
  const ms = performance.now() - start;
  x.dispose();
  return ms / reps;
}
// A product whose operands outgrow the initial 32 MiB heap: the memory grows while the pool's
// workers share it. Returns the heap sizes and 16 sampled entries with their double sums.
// n = 2048: a, b and c take 16 MiB each (48 MiB), so the heap must grow whatever else it holds
// (at 1536 they took 27 MiB, and the growth depended on what earlier checks had left).
function grownProduct(kiln) {
  const n = 2048, a = new Float32Array(n * n), b = new Float32Array(n * n);
  for (let i = 0; i < a.length; i++) { a[i] = ((i * 7919) % 1009) / 512 - 1; b[i] = ((i * 104729) % 997) / 512 - 1; }
  const heapBefore = kiln.memory().heapBytes;
  const c = kiln.tidy(() => kiln.Tensor.fromData(a, { shape: [n, n] }).matmul(kiln.Tensor.fromData(b, { shape: [n, n] })).dataSync());
  const samples = [];
  for (let s = 0; s < 16; s++) {
    const i = (s * 397) % n, j = (s * 1213 + 7) % n;
    let sum = 0, abs = 0;
    for (let p = 0; p < n; p++) { const t = a[i * n + p] * b[p * n + j]; sum += t; abs += Math.abs(t); }
    samples.push({ got: c[i * n + j], sum, abs });
  }
  return { heapBefore, heapAfter: kiln.memory().heapBytes, samples, n };
}
// 5,000 caught shape errors of a product the pool would run and 5,000 Config errors of a
// JSON config: the calling thread's stack pointer and the malloc'd bytes must be exactly
// where they were (the error boundary, bindings/js/boundary.ts; the stack pointer is per
// thread, the boundary restores the calling thread's).
function errorLoop(kiln) {
  const raw = kiln._internals.raw;
  const a = kiln.Tensor.ones([${M}, ${K}]), b = kiln.Tensor.ones([${N}, ${K}]);
  const codes = new Set();
  const messages = new Set();
  const note = (e) => {
    codes.add(e instanceof KilnError ? e.code : 'not a KilnError: ' + e);
    messages.add(String(e && e.message));
  };
  const once = () => {
    try { a.matmul(b); } catch (e) { note(e); }
    try { kiln.optim.sgd({ lr: -1 }); } catch (e) { note(e); }
  };
  for (let i = 0; i < 3; i++) once();
  const before = { sp: raw.stackSave(), malloc: raw.memoryStats().mallocBytes };
  for (let i = 0; i < 5000; i++) once();
  const after = { sp: raw.stackSave(), malloc: raw.memoryStats().mallocBytes };
  a.dispose();
  b.dispose();
  return { before, after, codes: [...codes].sort(), messages: [...messages].slice(0, 4) };
}
// Four Adam steps of the MNIST anchor CNN at batch 64 on deterministic data (conv, ReLU and
// its mask, max pool and its backward, linear, cross-entropy, the fused Adam update: the
// kernels the pool splits), then its predictions: the losses and probabilities as arrays.
function cnnSteps(kiln) {
  const layers = [
    { type: 'reshape', shape: [1, 28, 28] },
    { type: 'conv2d', channels: [1, 8], kernelSize: [3, 3], stride: [1, 1], padding: 'valid' },
    { type: 'relu' }, { type: 'maxPool2d', kernelSize: [2, 2] },
    { type: 'conv2d', channels: [8, 16], kernelSize: [3, 3], stride: [1, 1], padding: 'valid' },
    { type: 'relu' }, { type: 'maxPool2d', kernelSize: [2, 2] },
    { type: 'flatten' }, { type: 'linear', dInput: 400, dOutput: 10, bias: true },
  ];
  const model = kiln.nn.sequential({ layers }, { seed: 0 });
  const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: 1e-2 }), loss: 'crossEntropy', seed: 0 });
  const x = new Float32Array(64 * 784), y = new Int32Array(64);
  for (let i = 0; i < x.length; i++) x[i] = ((i * 7919) % 1009) / 504 - 1;
  for (let i = 0; i < y.length; i++) y[i] = (i * 7) % 10;
  const losses = [];
  for (let s = 0; s < 4; s++) losses.push(learner.trainBatch(x, y, 64).loss);
  const probs = Array.from(learner.predict(x, { batchSize: 64 }));
  model.dispose?.();
  return { losses, probs };
}
export async function run(opts) {
  // The threaded build is the full engine's; SIMD128 (relaxedSimd: false), so that its bits can
  // be compared with the single-threaded SIMD128 build's (the relaxed builds: runRelaxed).
  const kiln = await init({ engine: 'full', relaxedSimd: false, ...opts });
  const info = kiln.backendInfo();
  const out = { info, values: product(kiln), crossOriginIsolated: globalThis.crossOriginIsolated === true };
  out.errors = errorLoop(kiln);
  out.afterErrors = product(kiln);
  if (opts && opts.grow) out.grown = grownProduct(kiln);
  out.cnn = cnnSteps(kiln);
  if (info.maxThreads > 1) {
    kiln.setNumThreads(1);
    out.oneThread = product(kiln);
    out.cnnOneThread = cnnSteps(kiln);
    timeProducts(kiln, 5); // V8 tiers the kernels up after a few calls
    out.msOneThread = timeProducts(kiln, 20);
    kiln.setNumThreads(info.maxThreads);
    out.msAllThreads = timeProducts(kiln, 20);
    out.threadsAfter = kiln.backendInfo().threads;
  }
  // SIMD128 (relaxedSimd: false): the relaxed-SIMD build's FMA rounds differently.
  const single = await init({ engine: 'full', threads: false, relaxedSimd: false });
  out.singleInfo = single.backendInfo();
  out.singleValues = product(single);
  out.singleCnn = cnnSteps(single);
  try {
    await init({ engine: 'full', threads: true, relaxedSimd: false });
    out.forcedThreads = 'loaded';
  } catch (e) {
    out.forcedThreads = e instanceof KilnError ? e.code + ': ' + e.message : 'not a KilnError: ' + e;
  }
  return out;
}
// init()'s default in an isolated page where relaxed SIMD validates: the threaded relaxed build
// (kiln-mt-relaxed.wasm), against itself on 1 thread, the single-threaded relaxed build and
// the threaded SIMD128 build.
const MADD_MODULE = new Uint8Array(${JSON.stringify(Array.from(MADD_MODULE))});
${maddSemantics.toString()}
export async function runRelaxed() {
  const kiln = await init({ engine: 'full' });
  const out = { info: kiln.backendInfo(), values: product(kiln), cnn: cnnSteps(kiln), madd: maddSemantics() };
  kiln.setNumThreads(1);
  out.oneThread = product(kiln);
  out.cnnOneThread = cnnSteps(kiln);
  const single = await init({ engine: 'full', threads: false });
  out.singleInfo = single.backendInfo();
  out.singleValues = product(single);
  out.singleCnn = cnnSteps(single);
  const simd = await init({ engine: 'full', threads: true, relaxedSimd: false });
  out.simdInfo = simd.backendInfo();
  out.simdValues = product(simd);
  out.simdCnn = cnnSteps(simd);
  return out;
}
`;
writeFileSync(join(app, 'shared.js'), shared);
writeFileSync(join(app, 'main.js'), `
import { run, runRelaxed } from './shared.js';
window.runMain = (opts) => run(opts);
window.runRelaxedMain = () => runRelaxed();
window.runRelaxedWorker = () => window.runWorker({ relaxed: true });
window.runWorker = (opts) => new Promise((resolve, reject) => {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  worker.onmessage = (e) => { worker.terminate(); e.data.error ? reject(new Error(e.data.error)) : resolve(e.data); };
  worker.onerror = (e) => { worker.terminate(); reject(new Error('worker error: ' + e.message)); };
  worker.postMessage(opts ?? {});
});
window.ready = true;
`);
// The package without a bundler: an import map resolves 'kiln-dl' to the installed files.
writeFileSync(join(app, 'static.html'), `<!doctype html><html><head><meta charset="utf-8">
<link rel="icon" href="data:,"><title>kiln threads e2e (no bundler)</title>
<script type="importmap">{"imports": {"kiln-dl": "/node_modules/kiln-dl/dist/index.js"}}</script>
</head><body><script type="module" src="/main.js"></script></body></html>`);
writeFileSync(join(app, 'worker.js'), `
import { run, runRelaxed } from './shared.js';
self.onmessage = async (e) => {
  try { self.postMessage(await (e.data.relaxed ? runRelaxed() : run(e.data))); } catch (err) { self.postMessage({ error: String(err && err.stack || err) }); }
};
`);

// ---- checks ----
let failures = 0;
function check(ok, what) {
  log(`${ok ? 'ok' : 'FAIL'}: ${what}`);
  if (!ok) failures++;
}

/** The double-precision product and the f32 error bound per element (gemm_test.cpp). */
function reference() {
  const a = new Float32Array(M * K), b = new Float32Array(K * N);
  for (let i = 0; i < a.length; i++) a[i] = ((i * 7919) % 1009) / 512 - 1;
  for (let i = 0; i < b.length; i++) b[i] = ((i * 104729) % 997) / 512 - 1;
  const u = 2 ** -24, gamma = (K + 3) * u / (1 - (K + 3) * u);
  const sum = new Float64Array(M * N), bound = new Float64Array(M * N);
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0, abs = 0;
      for (let p = 0; p < K; p++) {
        const t = a[i * K + p] * b[p * N + j];
        s += t;
        abs += Math.abs(t);
      }
      sum[i * N + j] = s;
      bound[i * N + j] = gamma * abs;
    }
  }
  return { sum, bound };
}
const ref = reference();
const withinBound = (values) => values.length === M * N &&
  values.every((v, i) => Math.abs(v - ref.sum[i]) <= ref.bound[i]);
const sameBits = (x, y) => x.length === y.length &&
  Buffer.from(new Float32Array(x).buffer).equals(Buffer.from(new Float32Array(y).buffer));

function checkIsolated(where, r) {
  check(r.crossOriginIsolated === true, `${where}: crossOriginIsolated`);
  check(r.info.build === 'simd-threads' && r.info.simd === true && r.info.threads >= 2 &&
        r.info.threads === r.info.maxThreads,
        `${where}: backendInfo() ${JSON.stringify(r.info)}`);
  check(withinBound(r.values), `${where}: ${M}x${K} · ${K}x${N} within the f32 bound of a double sum`);
  check(sameBits(r.values, r.oneThread), `${where}: bit-identical with 1 and ${r.info.threads} threads`);
  check(r.singleInfo.build === 'simd' && r.singleInfo.threads === 1,
        `${where}: init({threads: false}) loads 'simd' next to it`);
  check(sameBits(r.values, r.singleValues), `${where}: bit-identical to the single-threaded build`);
  const cnnSame = (a, b) => sameBits(a.losses, b.losses) && sameBits(a.probs, b.probs) && a.probs.length === 640 &&
    a.losses.every(Number.isFinite) && a.losses[3] < a.losses[0];
  check(cnnSame(r.cnn, r.cnnOneThread) && cnnSame(r.cnn, r.singleCnn),
        `${where}: 4 Adam steps of the MNIST CNN (batch 64: split conv, ReLU, pool, Adam kernels) ` +
        `bit-identical on ${r.info.threads} threads, on 1 and in the single-threaded build ` +
        `(losses ${r.cnn.losses.map((v) => v.toFixed(4)).join(', ')})`);
  check(r.forcedThreads === 'loaded', `${where}: init({threads: true}) loads`);
  check(JSON.stringify(r.errors.codes) === '["Config","Shape"]' &&
        r.errors.after.sp === r.errors.before.sp && r.errors.after.malloc === r.errors.before.malloc,
        `${where}: 10,000 caught errors leave the stack pointer and malloc'd bytes as they were ${JSON.stringify(r.errors)}`);
  check(sameBits(r.values, r.afterErrors), `${where}: the product is bit-identical after the errors`);
  check(r.threadsAfter === r.info.maxThreads, `${where}: setNumThreads(${r.info.maxThreads}) read back`);
  log(`${where}: 256x256 matmul ${r.msOneThread.toFixed(2)} ms on 1 thread, ` +
      `${r.msAllThreads.toFixed(2)} ms on ${r.info.maxThreads} (20 reps, informational)`);
}

/** init()'s default in an isolated page: the threaded relaxed-SIMD build (runRelaxed). */
function checkRelaxed(where, r) {
  check(r.info.build === 'simd-threads-relaxed' && r.info.threads >= 2 && /^relaxed SIMD \+ threads/.test(r.info.buildReason),
        `${where}: init() loads the threaded relaxed build: ${r.info.build}, ${r.info.threads} threads, "${r.info.buildReason.slice(0, 40)}..."`);
  check(r.simdInfo.build === 'simd-threads', `${where}: init({threads: true, relaxedSimd: false}) loads 'simd-threads'`);
  check(withinBound(r.values), `${where}: its ${M}x${K} · ${K}x${N} product within the f32 bound of a double sum`);
  // The same FMA kernels as the single-threaded relaxed build, split the same way for any thread count.
  check(r.singleInfo.build === 'simd-relaxed' && sameBits(r.values, r.oneThread) && sameBits(r.values, r.singleValues),
        `${where}: product bit-identical on ${r.info.threads} threads, on 1 and in the single-threaded relaxed build`);
  const same = (a, b) => sameBits(a.losses, b.losses) && sameBits(a.probs, b.probs);
  check(same(r.cnn, r.cnnOneThread) && same(r.cnn, r.singleCnn) && r.cnn.losses[3] < r.cnn.losses[0],
        `${where}: 4 Adam steps of the MNIST CNN bit-identical on ${r.info.threads} threads, on 1 and in the single-threaded relaxed build`);
  // Against SIMD128: the product's terms are exact in f32 (multiples of 2^-18), so a fused
  // multiply-add gives the same bits there; the CNN's products are not, and an FMA rounds
  // once, so its bits differ (x86-64 with FMA3 fuses) while its losses and probabilities
  // agree to float32 noise.
  const close = (a, b, tol) => a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) <= tol * Math.max(1, Math.abs(b[i])));
  check(withinBound(r.simdValues) && sameBits(r.values, r.simdValues),
        `${where}: the SIMD128 threaded product (exact terms) has the same bits`);
  // (Where relaxed_madd does not fuse, a multiply and an add, the bits may well be SIMD128's.)
  check(r.madd?.value === 11, `${where}: f32x4.relaxed_madd(2, 3, 5) = ${r.madd?.value} (a·b + c), fused: ${r.madd?.fused}`);
  if (r.madd?.fused) {
    check(!sameBits(r.cnn.probs, r.simdCnn.probs),
          `${where}: the CNN's probabilities differ from SIMD128's in their bits (the fused FMA is used)`);
  }
  check(close(r.cnn.losses, r.simdCnn.losses, 1e-4) && close(r.cnn.probs, r.simdCnn.probs, 1e-3),
        `${where}: CNN losses within 1e-4 and probabilities within 1e-3 of SIMD128's (${r.cnn.losses.map((v) => v.toFixed(5)).join(', ')})`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const servers = [];
let browser;
let context;
try {
  const t0 = performance.now();
  await build({
    root: app, configFile: false, logLevel: 'warn',
    worker: { format: 'es' },
    build: { outDir: join(app, 'dist'), emptyOutDir: true },
  });
  log(`vite build: ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const isolationHeaders = {
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Embedder-Policy': 'require-corp',
  };
  const startPreview = async (headers) => {
    const port = await freePort();
    const server = await preview({
      root: app, configFile: false, logLevel: 'warn',
      build: { outDir: join(app, 'dist') },
      preview: { host: '127.0.0.1', port, strictPort: true, headers },
    });
    servers.push(server);
    return `http://127.0.0.1:${port}/`;
  };
  const isolatedUrl = await startPreview(isolationHeaders);
  const plainUrl = await startPreview({});

  const devPort = await freePort();
  const dev = await createViteServer({
    root: app, configFile: false, logLevel: 'warn', worker: { format: 'es' },
    server: { host: '127.0.0.1', port: devPort, strictPort: true, headers: isolationHeaders, hmr: false },
  });
  await dev.listen();
  servers.push(dev);
  const devUrl = `http://127.0.0.1:${devPort}/`;

  const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
  const staticServer = createHttpServer(async (req, res) => {
    const pathname = new URL(req.url, 'http://x').pathname;
    const path = pathname === '/' ? '/static.html' : pathname;
    try {
      const body = await readFile(join(app, path));
      res.writeHead(200, { 'Content-Type': types[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream', ...isolationHeaders });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  const staticPort = await freePort();
  await new Promise((resolve) => staticServer.listen(staticPort, '127.0.0.1', resolve));
  servers.push({ close: () => new Promise((resolve) => staticServer.close(resolve)) });
  const staticUrl = `http://127.0.0.1:${staticPort}/`;

  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  context = await browser.newContext();
  const openPage = async (url) => {
    const page = await context.newPage();
    page.on('pageerror', (e) => log(`page error: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') log(`console error: ${m.text()}`); });
    await page.goto(url);
    await page.waitForFunction(() => window.ready === true);
    return page;
  };

  /** page.evaluate of a window function, failing after 120 s instead of hanging. */
  const call = (page, fn, arg) => Promise.race([
    page.evaluate(([name, a]) => window[name](a), [fn, arg]),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`${fn} timed out after 120 s`)), 120_000)),
  ]);

  const isolated = await openPage(isolatedUrl);
  checkIsolated('isolated page, main thread', await call(isolated, 'runMain'));
  checkIsolated('isolated page, worker', await call(isolated, 'runWorker'));
  checkRelaxed('isolated page, main thread', await call(isolated, 'runRelaxedMain'));
  checkRelaxed('isolated page, worker', await call(isolated, 'runRelaxedWorker'));
  for (const [where, fn] of [['main thread', 'runMain'], ['worker', 'runWorker']]) {
    const g = (await call(isolated, fn, { grow: true })).grown;
    const u = 2 ** -24, gamma = (g.n + 3) * u / (1 - (g.n + 3) * u);
    check(g.heapAfter > g.heapBefore && g.samples.every((x) => Math.abs(x.got - x.sum) <= gamma * x.abs),
          `isolated page, ${where}: ${g.n}² product after the shared memory grew ` +
          `(${(g.heapBefore / 2 ** 20).toFixed(0)} -> ${(g.heapAfter / 2 ** 20).toFixed(0)} MiB), 16 entries within the bound`);
  }
  const three = await call(isolated, 'runMain', { numThreads: 3 });
  check(three.info.threads === 3 && withinBound(three.values) && sameBits(three.values, three.singleValues),
        `isolated page: init({numThreads: 3}) -> ${three.info.threads} threads, same bits`);

  const plain = await openPage(plainUrl);
  const p = await call(plain, 'runMain');
  // 'simd-relaxed' where Chromium validates relaxed SIMD (tests/e2e/relaxed.e2e.mjs).
  check(p.crossOriginIsolated === false && ['simd', 'simd-relaxed'].includes(p.info.build) && p.info.threads === 1,
        `plain page: backendInfo() ${JSON.stringify(p.info)}`);
  check(withinBound(p.values), 'plain page: the product within the bound');
  check(/^Config: init: threads: true, but the threaded build cannot run: the page is not cross-origin isolated/.test(p.forcedThreads),
        `plain page: init({threads: true}) rejects: ${p.forcedThreads.slice(0, 90)}...`);
  const pw = await call(plain, 'runWorker');
  check(['simd', 'simd-relaxed'].includes(pw.info.build), `plain page's worker: '${pw.info.build}'`);

  for (const [where, url] of [['vite dev server', devUrl], ['unbundled page (import map)', staticUrl]]) {
    const page = await openPage(url);
    const r = await call(page, 'runMain');
    check(r.info.build === 'simd-threads' && r.info.threads >= 2 && withinBound(r.values) &&
          sameBits(r.values, r.singleValues) && sameBits(r.values, r.oneThread),
          `${where}: ${r.info.build} with ${r.info.threads} threads, the product right and as single-threaded`);
  }
} catch (e) {
  log(`FAIL: ${e.stack ?? e}`);
  failures++;
} finally {
  await context?.close();
  await browser?.close();
  for (const s of servers) await s.close();
  if (process.env.KILN_E2E_KEEP) log(`kept the scratch app in ${app}`);
  else rmSync(app, { recursive: true, force: true });
}
log(failures ? `${failures} check(s) FAILED` : 'all checks passed');
process.exit(failures ? 1 : 0);
