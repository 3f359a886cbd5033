// Starts the benchmark worker with the page's query and shows (and exposes) its result.
import BenchWorker from './worker.js?worker';

const q = new URLSearchParams(location.search);
const params = {
  engine: q.get('engine') ?? 'kiln',
  model: q.get('model') ?? 'mlp',
  threads: Number(q.get('threads') ?? 1),
  mode: q.get('mode') ?? 'trainBatch',
  items: Number(q.get('items') ?? 60000),
  batch: Number(q.get('batch') ?? 64),
  warmup: Number(q.get('warmup') ?? 30),
  // Kiln's build: relaxed=1 -> relaxedSimd: true (kiln-relaxed.wasm, or kiln-mt-relaxed.wasm with
  // threads: FMA), relaxed=0 -> SIMD128 (kiln.wasm / kiln-mt.wasm); absent -> init()'s default choice.
  relaxed: q.get('relaxed') ?? undefined,
  // mt=1: Kiln's threaded build (kiln-mt-relaxed.wasm, or kiln-mt.wasm with relaxed=0) even on 1 thread.
  mt: q.get('mt') ?? undefined,
};
const out = document.getElementById('out');
const worker = new BenchWorker();
worker.onmessage = (ev) => {
  const m = ev.data;
  if (m.type === 'mark') {
    console.log(`bench:${m.what}`);
    return;
  }
  if (m.type === 'log') {
    out.textContent += `\n${m.text}`;
    return;
  }
  window.__benchResult = m;
  out.textContent = JSON.stringify(m, null, 2);
};
worker.onerror = (e) => {
  window.__benchResult = { ok: false, error: e.message ?? 'worker error' };
  out.textContent = `worker error: ${e.message}`;
};
worker.postMessage({ ...params, crossOriginIsolated: self.crossOriginIsolated, mnistBase: new URL('./mnist/', document.baseURI).href });
