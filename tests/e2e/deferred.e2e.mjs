// End-to-end test of the split engine's deferred module in Chromium (run by scripts/test.sh after
// scripts/build.sh; `node tests/e2e/deferred.e2e.mjs`, exit status 0 when every check passed).
// scripts/split_wasm.mjs splits each single-thread engine into the module init() loads and
// <name>.deferred.wasm (bindings/js/deferred.ts). A page imports the package as a user's page
// does (import map {"kiln-dl": "/dist/index.js"}, files served from dist/) and checks:
//   1. init({threads: false}) + an MLP trained with kiln.Learner fetch one .wasm, the primary
//      (the profile workload covers it), and backendInfo().deferred is 'pending';
//   2. on the page's main thread, the first call of a function outside it (cumsum) fetches the
//      deferred module once (a synchronous request), gives the right values ([[1, 3], [3, 7]]
//      by hand) and backendInfo().deferred becomes 'loaded'; other deferred functions (sort,
//      a C++ error raised inside the deferred module: KilnError `Rank`) fetch nothing more;
//   3. the same in a module Web Worker (its synchronous request reads an ArrayBuffer);
//   4. kiln.loadDeferred() fetches it ahead (asynchronously), after which calls fetch nothing;
//   5. when the deferred file cannot be fetched (the request is aborted), the call throws
//      KilnError `Io` naming the file, and the instance still computes (add) afterwards.
// Skips (exit 0) without /usr/bin/chromium.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const chromiumPath = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium';
const log = (line) => console.log(`[e2e deferred] ${line}`);

if (!existsSync(chromiumPath)) {
  log(`skipped: no Chromium at ${chromiumPath}`);
  process.exit(0);
}
for (const f of ['index.js', 'kiln-core.mjs', 'kiln-core.wasm', 'kiln-core-relaxed.wasm', 'kiln-core.deferred.wasm']) {
  if (!existsSync(join(repo, 'dist', f))) {
    console.error(`[e2e deferred] dist/${f} is missing: run scripts/build.sh first`);
    process.exit(1);
  }
}
const { checker, launchBrowser, openWasmPage, startStaticServer } = await import('./support.mjs');

// What both the page and the worker run (the worker imports the package by path: import maps
// do not reach workers).
const CHECKS = `
export async function train(init) {
  const kiln = await init({ threads: false });
  const model = kiln.nn.sequential({ layers: [
    { type: 'linear', dInput: 4, dOutput: 8 }, { type: 'relu' }, { type: 'linear', dInput: 8, dOutput: 2 }] }, { seed: 1 });
  const n = 64, x = new Float32Array(n * 4), y = new Int32Array(n);
  for (let i = 0; i < n; i++) { for (let j = 0; j < 4; j++) x[i * 4 + j] = Math.sin(i + j); y[i] = i % 2; }
  const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: 0.01 }), loss: 'crossEntropy' });
  const history = await learner.fit(kiln.data.fromArrays(x, y, { itemShape: [4] }), { epochs: 1, batchSize: 16 });
  return { kiln, loss: history.loss.at(-1), state: kiln.backendInfo().deferred };
}
export function beyond(kiln) {
  const a = kiln.Tensor.fromData([[1, 2], [3, 4]]);
  const cumsum = a.cumsum(1).toArray();
  const state = kiln.backendInfo().deferred;
  const sorted = kiln.Tensor.fromData([3, 1, 2]).sort(0);
  const sortedValues = (sorted.values ?? sorted).toArray();
  let error = null;
  try { a.gather(5, kiln.Tensor.fromData([0], { dtype: 'int32' })); } catch (e) { error = { name: e.name, code: e.code, message: e.message }; }
  return { cumsum, state, sortedValues, error };
}
`;

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>kiln deferred e2e</title>
<script type="importmap">{"imports": {"kiln-dl": "/dist/index.js"}}</script></head><body>
<script type="module">
import { init } from 'kiln-dl';
import { train, beyond } from '/checks.mjs';
window.trainPage = async () => { const r = await train(init); window.k = r.kiln; return { loss: r.loss, state: r.state }; };
window.beyondPage = () => beyond(window.k);
window.preload = async () => {
  const kiln = await init({ threads: false });
  const before = kiln.backendInfo().deferred;
  await kiln.loadDeferred();
  const after = kiln.backendInfo().deferred;
  return { before, after, values: kiln.Tensor.fromData([[1, 2], [3, 4]]).cumsum(0).toArray() };
};
window.missing = async () => {
  const kiln = await init({ threads: false });
  let error = null;
  try { kiln.Tensor.fromData([1, 2, 3]).cumsum(0); } catch (e) { error = { name: e.name, code: e.code, message: e.message }; }
  const sum = kiln.Tensor.fromData([1, 2]).add(kiln.Tensor.fromData([3, 4])).toArray();
  return { error, sum, state: kiln.backendInfo().deferred };
};
window.inWorker = () => new Promise((resolve, reject) => {
  const w = new Worker('/worker.mjs', { type: 'module' });
  w.onmessage = (e) => { w.terminate(); resolve(e.data); };
  w.onerror = (e) => { w.terminate(); reject(new Error(e.message)); };
});
window.ready = true;
</script></body></html>`;

const WORKER = `
import { init } from '/dist/index.js';
import { train, beyond } from '/checks.mjs';
try {
  const r = await train(init);
  postMessage({ loss: r.loss, before: r.state, ...beyond(r.kiln) });
} catch (e) { postMessage({ failed: String(e && e.stack || e) }); }
`;

const server = await startStaticServer({ '/': ['text/html', PAGE], '/checks.mjs': ['text/javascript', CHECKS], '/worker.mjs': ['text/javascript', WORKER] }, ['/dist/']);
const { url } = server;

const { check, fail, finish } = checker(log);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

const browser = await launchBrowser();
try {
  const { page, wasm } = await openWasmPage(browser, url, log);

  // 1. training stays in the primary module
  const t = await page.evaluate(() => window.trainPage());
  const primary = wasm[0];
  check(wasm.length === 1 && /^kiln-core(-relaxed)?\.wasm$/.test(primary) && Number.isFinite(t.loss) && t.state === 'pending',
        `an MLP trained (loss ${t.loss?.toFixed(4)}) fetching only ${wasm.join(', ')}; deferred: ${t.state}`);
  // (one deferred module for both builds: scripts/split_wasm.mjs)
  const deferredFile = primary.replace(/(-relaxed)?\.wasm$/, '.deferred.wasm');

  // 2. beyond it, on the main thread
  wasm.length = 0;
  const b = await page.evaluate(() => window.beyondPage());
  check(same(b.cumsum, [[1, 3], [3, 7]]) && b.state === 'loaded', `cumsum [[1, 2], [3, 4]] along dim 1 = ${JSON.stringify(b.cumsum)}; deferred: ${b.state}`);
  check(same(b.sortedValues, [1, 2, 3]), `sort [3, 1, 2] = ${JSON.stringify(b.sortedValues)}`);
  check(b.error?.name === 'KilnError' && b.error.code === 'Rank' && /^gather: /.test(b.error.message),
        `an error raised in the deferred module: ${b.error?.code} "${b.error?.message}"`);
  check(same(wasm, [deferredFile]), `fetched once: ${wasm.join(', ')}`);

  // 3. in a worker
  wasm.length = 0;
  const w = await page.evaluate(() => window.inWorker());
  check(!w.failed && w.before === 'pending' && w.state === 'loaded' && same(w.cumsum, [[1, 3], [3, 7]]) && same(w.sortedValues, [1, 2, 3]) &&
        w.error?.code === 'Rank', `in a Web Worker: ${w.failed ?? `deferred ${w.before} -> ${w.state}, cumsum ${JSON.stringify(w.cumsum)}, error ${w.error?.code}`}`);
  check(wasm.filter((f) => f === deferredFile).length === 1, `the worker fetched ${wasm.join(', ')}`);

  // 4. loadDeferred()
  wasm.length = 0;
  const p = await page.evaluate(() => window.preload());
  check(p.before === 'pending' && p.after === 'loaded' && same(p.values, [[1, 2], [4, 6]]) && same(wasm, [primary, deferredFile]),
        `loadDeferred(): ${p.before} -> ${p.after}, cumsum along dim 0 ${JSON.stringify(p.values)}, fetched ${wasm.join(', ')}`);

  // 5. a deferred module that cannot be fetched
  await page.route(/\.deferred\.wasm$/, (route) => route.abort());
  const m = await page.evaluate(() => window.missing());
  check(m.error?.name === 'KilnError' && m.error.code === 'Io' && m.error.message.includes(deferredFile) && same(m.sum, [4, 6]) && m.state === 'pending',
        `unreachable deferred module: ${m.error?.code} "${m.error?.message?.slice(0, 90)}..."; then add = ${JSON.stringify(m.sum)}, deferred ${m.state}`);
} catch (e) {
  fail(e);
} finally {
  await browser.close();
  server.close();
}
finish();
