// End-to-end test of the package's webgpu backend (issue 21) in headless Chromium with WebGPU
// (SwiftShader; --enable-unsafe-webgpu on a page served from 127.0.0.1). A page imports the
// package as a user's page does (import map {"kiln-dl": "/dist/index.js"}, files from dist/)
// and checks, against values computed by hand and against a cpu instance in the same page:
//   1. init({ backend: 'webgpu' }) loads kiln-webgpu.wasm; backendInfo() names the backend,
//      the engine and the adapter; a cpu instance lives beside it; 'auto' picks webgpu here;
//   2. ops (fromData, add, matmul, relu, sum, softmax) give, through await data() / array(),
//      the values by hand and the cpu instance's;
//   3. autodiff: the gradient of sum(x·x + 3x) is 2x + 3, by hand;
//   4. a Sequential MLP built with the same seed on both backends gives the same forward
//      output (the webgpu backend draws random initial weights with the cpu generator);
//   5. synchronous reads throw KilnError `State` naming the async form; a shape error is the
//      cpu backend's (same code and message); bad options are refused (training:
//      webgpu-train.e2e.mjs);
//   6. a 1 GiB tensor runs out of GPU memory (SwiftShader): KilnError `OutOfMemory`, reported
//      once, after which the instance computes again;
//   7. the op extensions (norm, var/std, amax/amin, pad, tril/triu, cumsum, linspace, einsum)
//      give PyTorch's values and gradients (tests/js/fixtures/ops_ext_torch.json, the fixture
//      tests/js/ops_ext.test.mjs runs on the cpu engine) and the cpu instance's; a full-engine
//      function (nn.functional.conv2d) runs and matches the cpu's full engine;
//   8. a lost device (device.destroy() on the device init() asked for): every later op and
//      read of that instance is KilnError `Device` naming the loss, fit() rejects with it, no
//      call hangs, and the other webgpu instance still computes;
//   9. a model trained on the GPU is saved with saveSafetensorsAsync (saveSafetensors throws
//      State naming it) and loads into a cpu model that computes the same outputs;
//  10. gradient clipping by norm on the device: kiln.optim.clipGradNormAsync gives PyTorch's
//      total norms and clipped gradients of clip_grad_norm_global (cases.jsonl) and
//      clip_grad_nonfinite_and_norm_types (round2.jsonl; errorIfNonfinite rejects NonFinite and
//      changes nothing), also on a Gradients; the synchronous clipGradNorm throws State naming it;
//  11. an index computed on the GPU that is out of range (no host copy to check when the op is
//      recorded): the next read rejects with KilnError `Index` naming the op and the value, once
//      (the read after it works); indices in range, negative ones of select included, pass.
// Skips (exit 0) without /usr/bin/chromium.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const chromiumPath = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium';
const log = (line) => console.log(`[e2e webgpu-api] ${line}`);

if (!existsSync(chromiumPath)) {
  log(`skipped: no Chromium at ${chromiumPath}`);
  process.exit(0);
}
for (const f of ['index.js', 'kiln-webgpu.mjs', 'kiln-webgpu.wasm']) {
  if (!existsSync(join(repo, 'dist', f))) {
    console.error(`[e2e webgpu-api] dist/${f} is missing: run scripts/build.sh first`);
    process.exit(1);
  }
}
const { checker, launchBrowser, openWasmPage, startStaticServer } = await import('./support.mjs');

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>kiln webgpu e2e</title>
<script type="importmap">{"imports": {"kiln-dl": "/dist/index.js"}}</script></head><body>
<script type="module">
import { init } from 'kiln-dl';
const err = (f) => { try { f(); return null; } catch (e) { return { name: e.name, code: e.code, message: e.message }; } };
const aerr = async (f) => { try { await f(); return null; } catch (e) { return { name: e.name, code: e.code, message: e.message }; } };
window.run = async () => {
  const out = {};
  const g = await init({ backend: 'webgpu' });
  const c = await init({ backend: 'cpu' });
  out.info = g.backendInfo();
  out.cpuInfo = c.backendInfo();
  const auto = await init({ backend: 'auto' });
  out.autoInfo = auto.backendInfo();
  // 2. ops
  const both = (k) => {
    const a = k.Tensor.fromData([[1, -2], [3, 4]]);
    const b = k.Tensor.fromData([[0.5, 1], [-1, 2]]);
    return { sum: a.add(b), mm: a.matmul(b), relu: a.relu(), total: a.sum(), soft: a.softmax(1) };
  };
  const gr = both(g), cr = both(c);
  out.ops = {};
  for (const key of Object.keys(gr)) out.ops[key] = { gpu: await gr[key].array(), cpu: cr[key].toArray(), gpuData: Array.from(await gr[key].data()), cpuData: Array.from(await cr[key].data()) };
  // memory(): device buffers of a [1000] f32 tensor (4000 bytes), counted while it lives
  const m0 = g.memory();
  const held = g.Tensor.zeros([1000]);
  const m1 = g.memory();
  held.dispose();
  const m2 = g.memory();
  out.gpuMemory = { before: m0.gpuBytes, held: m1.gpuBytes, after: m2.gpuBytes, buffers: [m0.gpuBuffers, m1.gpuBuffers, m2.gpuBuffers], peak: m1.gpuPeakBytes, cpu: c.memory().gpuBytes };
  // 3. autodiff
  const x = g.Tensor.fromData([1, -2, 0.5]).requireGrad();
  const y = x.mul(x).add(x.mul(3)).sum();
  const grads = y.backward();
  out.grad = Array.from(await x.grad(grads).data());
  out.loss = await y.array();
  // 4. Sequential MLP, same seed
  const spec = { layers: [{ type: 'linear', dInput: 4, dOutput: 8 }, { type: 'relu' }, { type: 'linear', dInput: 8, dOutput: 3 }] };
  const input = [[0.1, 0.2, -0.3, 0.4], [1, -1, 0.5, 0], [0, 0, 0, 0]];
  const gm = g.nn.sequential(spec, { seed: 7 }), cm = c.nn.sequential(spec, { seed: 7 });
  out.mlp = { gpu: Array.from(await gm.forward(g.Tensor.fromData(input)).data()), cpu: Array.from(cm.forward(c.Tensor.fromData(input)).dataSync()) };
  // 5. errors
  const t = g.Tensor.fromData([1, 2, 3]);
  out.syncErrors = [err(() => t.dataSync()), err(() => t.toArray()), err(() => g.Tensor.fromData([5]).item())];
  const shapeOf = (k) => err(() => k.Tensor.fromData([[1, 2, 3]]).matmul(k.Tensor.fromData([[1, 2]])));
  out.shapeErrors = { gpu: shapeOf(g), cpu: shapeOf(c) };
  out.toStringError = err(() => g.Tensor.fromData([1, 2]).add(1).toString());
  // losses of computed inputs (their host value checks need host data; skipped on the device)
  const lossesOf = async (k, read) => {
    const p = k.Tensor.fromData([0.5, -1, 2]).sigmoid();
    const bce = k.nn.functional.binaryCrossEntropy(p, k.Tensor.fromData([1, 0, 1]));
    const labels = k.Tensor.fromData([[0.2, 0.9], [0.7, 0.1]]).argmax(1).squeeze(1);
    const ce = k.nn.functional.crossEntropy(k.Tensor.fromData([[1, 2, 3], [3, 1, 0]]), labels);
    return [...(await read(bce)), ...(await read(ce))];
  };
  out.computedLosses = { gpu: await lossesOf(g, async (t) => Array.from(await t.data())), cpu: await lossesOf(c, async (t) => Array.from(t.dataSync())) };
  const gone = g.Tensor.fromData([1]);
  gone.dispose();
  out.disposedArray = await aerr(() => gone.array());
  // out of memory: a 1 GiB buffer fails on SwiftShader (GPUOutOfMemoryError, spike/FINDINGS.md),
  // reported as OutOfMemory at once or by the next read; afterwards the instance computes.
  // A model and a tensor made before it (in the same window between two reads) survive it.
  const before = g.Tensor.fromData([1, 2, 3]).mul(2);
  let oom = err(() => { window.big = g.Tensor.zeros([268435456]); });
  if (!oom) oom = await aerr(() => gm.forward(g.Tensor.fromData(input)).data());
  out.oom = oom;
  out.afterOom = Array.from(await g.Tensor.fromData([1, 2]).add(g.Tensor.fromData([3, 4])).data());
  out.survivors = { before: Array.from(await before.data()), mlp: Array.from(await gm.forward(g.Tensor.fromData(input)).data()) };
  out.bigAfter = err(() => window.big.mul(2));
  out.badOptions = [await aerr(() => init({ backend: 'webgpu', engine: 'full' })), await aerr(() => init({ backend: 'gpu' }))];
  // 7. the op extensions against the fixture, on both backends
  const fx = await (await fetch('/tests/js/fixtures/ops_ext_torch.json')).json();
  const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
  const enc = (a) => Array.from(a, (v) => (Number.isNaN(v) ? 'nan' : v === Infinity ? 'inf' : v === -Infinity ? '-inf' : v));
  const full = await init({ engine: 'full' });
  const ext = async (k, read) => {
    const tensor = (t) => k.Tensor.fromData(t.data.map(num), { shape: t.shape, dtype: t.dtype });
    const res = [];
    // One case: y = call(xs) read back, and with dy the gradients of sum(y · dy) by xs.
    const run = async (id, xs, call, dy) => {
      const r = { id };
      try {
        const y = call(xs);
        r.shape = y.shape; r.dtype = y.dtype; r.data = enc(await read(y));
        if (dy) {
          const gs = y.mul(tensor(dy)).sum().backward();
          r.grads = [];
          for (const x of xs) r.grads.push(enc(await read(x.grad(gs))));
        }
      } catch (e) { r.error = e.code + ' ' + e.message; }
      res.push(r);
    };
    for (const c of fx.cases) {
      const xs = c.inputs.map((t) => (t.dtype === 'float32' && c.grads ? tensor(t).requireGrad() : tensor(t)));
      const args = c.method === 'norm' ? [num(c.args[0]), ...c.args.slice(1)] : c.args;
      await run(c.id, xs, (v) => v[0][c.method](...args), c.grads ? c.dy : null);
    }
    for (const c of fx.einsum) {
      const xs = c.inputs.map((t) => tensor(t).requireGrad());
      const noGrad = c.out.data.length === 0 && xs.every((x) => x.shape.includes(0));
      await run('einsum ' + c.equation, xs, (v) => k.Tensor.einsum(c.equation, ...v), noGrad ? null : c.dy);
    }
    for (const c of fx.linspace) {
      const y = k.Tensor.linspace(...c.args);
      res.push({ id: 'linspace ' + JSON.stringify(c.args), shape: y.shape, data: enc(await read(y)) });
    }
    // a full-engine function: conv2d of nn.functional, forward and input gradient
    const x = k.Tensor.fromData(Array.from({ length: 2 * 3 * 5 * 5 }, (_, i) => Math.sin(i)), { shape: [2, 3, 5, 5] }).requireGrad();
    const w = k.Tensor.fromData(Array.from({ length: 4 * 3 * 3 * 3 }, (_, i) => Math.cos(i) / 3), { shape: [4, 3, 3, 3] });
    const y = k.nn.functional.conv2d(x, w, null, { stride: 2, padding: 1 });
    res.push({ id: 'nn.functional.conv2d', shape: y.shape, data: enc(await read(y)), grads: [enc(await read(x.grad(y.sum().backward())))] });
    return res;
  };
  const gpuRead = async (t) => await t.data();
  const cpuRead = async (t) => t.dataSync();
  out.ext = { gpu: await ext(g, gpuRead), cpu: await ext(full, cpuRead) };
  // 9. saving a model trained on the GPU: saveSafetensors throws State naming the async form;
  // saveSafetensorsAsync's bytes load into a cpu model, which then computes what the webgpu
  // model computes (and not what the untrained one did)
  const sspec = { layers: [{ type: 'linear', dInput: 2, dOutput: 4 }, { type: 'relu' }, { type: 'linear', dInput: 4, dOutput: 1 }] };
  const sm = g.nn.sequential(sspec, { seed: 3 });
  const sl = new g.Learner(sm, { loss: 'mse', optimizer: g.optim.adam({ lr: 0.05 }) });
  await sl.fit(g.data.fromArrays(new Float32Array([0, 0, 0, 1, 1, 0, 1, 1]), new Float32Array([0, 1, 1, 0]), { itemShape: [2], targetShape: [1] }), { epochs: 3, batchSize: 2 });
  out.saveSync = err(() => sm.saveSafetensors());
  const bytes = await sm.saveSafetensorsAsync();
  const loaded = c.nn.sequential(sspec, { seed: 11 });
  loaded.loadSafetensors(bytes);
  const probe = [[0.2, 0.7], [1, 0.5], [0, 1]];
  out.saved = {
    gpu: Array.from(await sm.forward(g.Tensor.fromData(probe)).data()),
    cpu: Array.from(loaded.forward(c.Tensor.fromData(probe)).dataSync()),
    untrained: Array.from(c.nn.sequential(sspec, { seed: 3 }).forward(c.Tensor.fromData(probe)).dataSync()),
    bytes: bytes.length,
  };
  // kiln.io's async savers go through saveSafetensorsAsync: the same bytes from IndexedDB
  await g.io.saveToIndexedDB('webgpu-e2e-model', sm);
  const stored = await g.io.loadBytesFromIndexedDB('webgpu-e2e-model');
  out.savedIdb = stored.length === bytes.length && stored.every((v, i) => v === bytes[i]);
  await g.io.deleteFromIndexedDB('webgpu-e2e-model');
  // Burn's named MessagePack: writeNamedMpk throws State naming writeNamedMpkAsync, whose bytes
  // equal the cpu engine's writeNamedMpk of the model loaded from the SafeTensors bytes
  out.mpkSync = err(() => g.io.writeNamedMpk(sm));
  const mpkGpu = await g.io.writeNamedMpkAsync(sm);
  const loadedFull = full.nn.sequential(sspec, { seed: 11 }); // writeNamedMpk is the full engine's
  loadedFull.loadSafetensors(bytes);
  const mpkCpu = full.io.writeNamedMpk(loadedFull);
  out.mpk = { equal: mpkGpu.length === mpkCpu.length && mpkGpu.every((v, i) => v === mpkCpu[i]), bytes: mpkGpu.length };
  // 10. gradient clipping by norm on the device, against PyTorch's cases
  const caseText = (await (await fetch('/tests/native/cases/cases.jsonl')).text()) + '\\n' + (await (await fetch('/tests/native/cases/round2.jsonl')).text());
  const caseRecs = caseText.split('\\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
  const caseOf = (id) => caseRecs.find((r) => r.id === id);
  const caseNum = (v) => (v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v === 'nan' ? NaN : v);
  const caseT = (t) => g.Tensor.fromData(Float32Array.from(t.data.map(caseNum)), { shape: t.shape });
  out.clip = {};
  const clipRuns = [
    ['clip_grad_norm_global', '', [['grad_a', 'a'], ['grad_b', 'b'], ['grad_c', 'c']], 6.5, {}],
    ['clip_grad_norm_global', '', [['grad_a', 'a'], ['grad_b', 'b']], 10, {}, 'total_norm_ab', 'unclipped_'],
    ['clip_grad_nonfinite_and_norm_types', 'inf_', [['grad_a', 'a'], ['grad_b_inf', 'b']], 1, {}],
    ['clip_grad_nonfinite_and_norm_types', 'nan_', [['grad_a', 'a'], ['grad_b_nan', 'b']], 1, {}],
    ['clip_grad_nonfinite_and_norm_types', 'maxnorm_', [['grad_a', 'a'], ['grad_b_12', 'b']], 1, { normType: Infinity }],
    ['clip_grad_nonfinite_and_norm_types', 'l1_', [['grad_a_l1', 'a'], ['grad_b_12', 'b']], 5, { normType: 1 }],
  ];
  for (const [id, prefix, names, maxNorm, options, totalKey, clippedPrefix] of clipRuns) {
    const rec = caseOf(id);
    const ts = names.map(([n]) => caseT(rec.inputs[n]));
    const keyOfTotal = totalKey ?? prefix + 'total_norm';
    out.clip[id + ':' + keyOfTotal] = [await g.optim.clipGradNormAsync(ts, maxNorm, options)];
    for (let i = 0; i < ts.length; i++) out.clip[id + ':' + (clippedPrefix ?? prefix + 'clipped_') + names[i][1]] = Array.from(await ts[i].data());
    ts.forEach((t) => t.dispose());
  }
  {
    const rec = caseOf('clip_grad_nonfinite_and_norm_types');
    const a = caseT(rec.inputs.grad_a);
    const b = caseT(rec.inputs.grad_b_nan);
    out.clipNonfinite = { want: rec.expected.nan_error_if_nonfinite.error, error: await aerr(() => g.optim.clipGradNormAsync([a, b], 1, { errorIfNonfinite: true })), a: Array.from(await a.data()) };
    out.clipSync = err(() => g.optim.clipGradNorm([a], 1));
    // On a Gradients: {params} picks the parameters' gradients (the global case again)
    const gc = caseOf('clip_grad_norm_global');
    const params = ['grad_a', 'grad_b', 'grad_c'].map((n) => g.Tensor.zeros(gc.inputs[n].shape).requireGrad());
    let loss = params[0].mul(caseT(gc.inputs.grad_a)).sum().add(params[1].mul(caseT(gc.inputs.grad_b)).sum()).add(params[2].mul(caseT(gc.inputs.grad_c)).sum());
    const grads = loss.backward();
    out.clipGrads = { total: await g.optim.clipGradNormAsync(grads, 6.5, { params }), a: Array.from(await grads.get(params[0]).data()), b: Array.from(await grads.get(params[1]).data()), c: Array.from(await grads.get(params[2]).data()) };
  }
  // 11. device checks of indices computed on the GPU
  {
    const dx = g.Tensor.fromData([[1, 2, 3], [4, 5, 6]]);
    const i32 = (v) => g.Tensor.fromData(v, { dtype: 'int32' });
    out.dev = {};
    out.dev.gather = await aerr(() => dx.gather(1, i32([[0, 1, 2]]).add(1)).data());
    out.dev.gatherOk = Array.from(await dx.gather(1, i32([[2, 0, 1]]).add(0)).data());
    out.dev.selectNeg = Array.from(await dx.select(1, i32([0]).sub(1)).data());
    out.dev.select = await aerr(() => dx.select(0, i32([1]).add(1)).data());
    out.dev.oneHot = await aerr(() => i32([1, 2]).add(2).oneHot(3).data());
    out.dev.scatter = await aerr(() => dx.scatter(1, i32([[0], [1]]).mul(-1), g.Tensor.fromData([[10], [20]])).data());
    const bad = dx.gather(1, i32([[5, 0, 0]]).add(0));
    out.dev.unrelated = await aerr(() => g.Tensor.fromData([7]).mul(2).data());
    out.dev.clean = Array.from(await g.Tensor.fromData([7]).mul(2).data());
    out.dev.badValues = Array.from(await bad.data());
  }
  // 8. a lost device: a third instance on a device this page keeps, then destroyed
  let device = null;
  const requestDevice = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = async function (...a) { device = await requestDevice.apply(this, a); return device; };
  const lost = await init({ backend: 'webgpu' });
  GPUAdapter.prototype.requestDevice = requestDevice;
  const timeout = (p, what) => Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(what + ' hung for 20 s')), 20000))]);
  const kept = lost.Tensor.fromData([1, 2, 3]).mul(2);
  out.lostBefore = Array.from(await kept.data());
  const model = lost.nn.sequential({ layers: [{ type: 'linear', dInput: 2, dOutput: 1 }] }, { seed: 1 });
  device.destroy();
  await timeout(device.lost, 'device.lost');
  out.lostRead = await aerr(() => timeout(kept.data(), 'data() after the loss'));
  out.lostOp = err(() => lost.Tensor.fromData([1]).add(1));
  out.lostReadNew = await aerr(() => timeout(lost.Tensor.fromData([4, 5]).data(), 'data() of a new tensor'));
  const learner = new lost.Learner(model, { loss: 'mse', optimizer: lost.optim.sgd({ lr: 0.1 }) });
  const pairs = lost.data.fromArrays(new Float32Array([0, 1, 1, 0]), new Float32Array([1, 0]), { itemShape: [2], targetShape: [1] });
  out.lostFit = await aerr(() => timeout(learner.fit(pairs, { epochs: 1, batchSize: 2 }), 'fit()'));
  out.otherAfterLoss = Array.from(await g.Tensor.fromData([1, 2]).add(g.Tensor.fromData([3, 4])).data());
  return out;
};
window.ready = true;
</script></body></html>`;

const server = await startStaticServer({ '/': ['text/html', PAGE] }, ['/dist/', '/tests/js/fixtures/', '/tests/native/cases/']);
const { check, fail, finish } = checker(log);
const close = (a, b, tol = 1e-5) => a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) <= tol * (1 + Math.abs(b[i])));
const flat = (v) => (Array.isArray(v) ? v.flat(Infinity) : [v]);

const browser = await launchBrowser({
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--enable-unsafe-webgpu'],
});
try {
  const { page, wasm } = await openWasmPage(browser, server.url, log);
  const o = await page.evaluate(() => window.run());
  // 1.
  check(o.info.engine === 'webgpu' && /webgpu/.test(o.info.backend) && typeof o.info.adapter === 'string' && o.info.adapter.length > 0,
    `webgpu instance: engine ${o.info.engine}, backend ${o.info.backend}, adapter "${o.info.adapter}", reason "${o.info.buildReason}"`);
  check(wasm.includes('kiln-webgpu.wasm'), `fetched ${wasm.join(', ')}`);
  check(o.cpuInfo.engine === 'core' && o.cpuInfo.adapter === null && /cpu/.test(o.cpuInfo.backend), `cpu instance beside it: ${o.cpuInfo.engine}, ${o.cpuInfo.backend}`);
  check(o.autoInfo.engine === 'webgpu', `backend 'auto' with an adapter: ${o.autoInfo.engine}`);
  check(o.info.build === 'webgpu' && o.cpuInfo.build !== 'webgpu', `backendInfo().build: webgpu instance "${o.info.build}", cpu instance "${o.cpuInfo.build}"`);
  const gm = o.gpuMemory;
  check(gm.held - gm.before === 4000 && gm.after === gm.before && gm.buffers[1] - gm.buffers[0] === 1 && gm.buffers[2] === gm.buffers[0] && gm.peak >= gm.held && gm.cpu === undefined,
    `memory().gpuBytes: ${gm.before} -> ${gm.held} with a [1000] f32 tensor -> ${gm.after} after dispose (buffers ${gm.buffers.join(' -> ')}, peak ${gm.peak}); cpu instance: ${gm.cpu}`);
  // 2. by hand: a = [[1, -2], [3, 4]], b = [[0.5, 1], [-1, 2]]
  const hand = {
    sum: [[1.5, -1], [2, 6]],
    mm: [[2.5, -3], [-2.5, 11]],
    relu: [[1, 0], [3, 4]],
    total: 6,
    soft: [[1 / (1 + Math.exp(-3)), Math.exp(-3) / (1 + Math.exp(-3))], [1 / (1 + Math.exp(1)), Math.exp(1) / (1 + Math.exp(1))]],
  };
  for (const [key, want] of Object.entries(hand)) {
    const r = o.ops[key];
    check(close(flat(r.gpu), flat(want)) && close(flat(r.gpu), flat(r.cpu)) && close(r.gpuData, r.cpuData),
      `${key}: webgpu ${JSON.stringify(r.gpu)}, by hand ${JSON.stringify(want)}, cpu ${JSON.stringify(r.cpu)}`);
  }
  // 3. d/dx sum(x² + 3x) = 2x + 3 at [1, -2, 0.5]; the loss 1+3 + 4-6 + 0.25+1.5 = 3.75
  check(close(o.grad, [5, -1, 4]) && Math.abs(o.loss - 3.75) < 1e-6, `grad ${JSON.stringify(o.grad)} (2x + 3 = [5, -1, 4]), loss ${o.loss} (3.75)`);
  // 4.
  check(o.mlp.gpu.length === 9 && close(o.mlp.gpu, o.mlp.cpu, 1e-5), `MLP forward, seed 7: webgpu ${o.mlp.gpu.map((v) => v.toFixed(5)).join(' ')} vs cpu ${o.mlp.cpu.map((v) => v.toFixed(5)).join(' ')}`);
  // 5.
  const [ds, ta, it] = o.syncErrors;
  check(ds?.code === 'State' && /await tensor\.data\(\)/.test(ds.message) && ta?.code === 'State' && /await tensor\.array\(\)/.test(ta.message) && it?.code === 'State' && /await tensor\.data\(\)/.test(it.message),
    `sync reads: ${ds?.message} | ${ta?.message} | ${it?.message}`);
  check(o.shapeErrors.gpu?.code === 'Shape' && o.shapeErrors.gpu.message === o.shapeErrors.cpu?.message, `shape error: "${o.shapeErrors.gpu?.message}" (cpu: "${o.shapeErrors.cpu?.message}")`);
  check(o.oom?.code === 'OutOfMemory' && JSON.stringify(o.afterOom) === '[4,6]', `1 GiB: ${o.oom?.code} "${o.oom?.message}"; then [1, 2] + [3, 4] = ${JSON.stringify(o.afterOom)}`);
  check(JSON.stringify(o.survivors.before) === '[2,4,6]' && close(o.survivors.mlp, o.mlp.cpu, 1e-5),
    `made before the out-of-memory error: [1, 2, 3]·2 = ${JSON.stringify(o.survivors.before)}, the MLP's forward ${o.survivors.mlp.map((v) => v.toFixed(5)).join(' ')}`);
  check(o.bigAfter?.code === 'OutOfMemory', `the tensor that was never allocated: ${o.bigAfter?.code} "${o.bigAfter?.message}"`);
  // bce: mean of -log σ(0.5), -log(1 - σ(-1)), -log σ(2); ce: labels [1, 0] of rows [1, 2, 3] and [3, 1, 0]
  const sig = (v) => 1 / (1 + Math.exp(-v));
  const lse = (r) => Math.log(r.reduce((a, v) => a + Math.exp(v), 0));
  const handLosses = [-(Math.log(sig(0.5)) + Math.log(1 - sig(-1)) + Math.log(sig(2))) / 3, ((lse([1, 2, 3]) - 2) + (lse([3, 1, 0]) - 3)) / 2];
  check(close(o.computedLosses.gpu, handLosses) && close(o.computedLosses.cpu, handLosses),
    `losses of computed inputs: webgpu ${JSON.stringify(o.computedLosses.gpu)}, cpu ${JSON.stringify(o.computedLosses.cpu)}, by hand ${JSON.stringify(handLosses)}`);
  check(o.toStringError?.code === 'State' && /^toString: .*await tensor\.data\(\)/.test(o.toStringError.message), `toString on webgpu: ${o.toStringError?.message}`);
  check(o.disposedArray?.code === 'Disposed', `array() of a disposed tensor: ${o.disposedArray?.name} ${o.disposedArray?.code}`);
  check(o.badOptions[0]?.code === 'Config' && o.badOptions[1]?.code === 'Type', `bad options: ${o.badOptions.map((e) => `${e?.code} ${e?.message}`).join(' | ')}`);
  // 7. PyTorch's values (tolerance of ops_ext.test.mjs; linspace's inner values may differ from
  // torch's vectorised kernel in the last bits) and the cpu engine's, case by case
  const fx = JSON.parse(readFileSync(join(repo, 'tests/js/fixtures/ops_ext_torch.json'), 'utf8'));
  const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
  const near = (got, want, abs, rel) => got.length === want.length &&
    got.every((v, i) => { const a = num(v), b = num(want[i]); return (Number.isNaN(a) && Number.isNaN(b)) || a === b || Math.abs(a - b) <= abs + rel * Math.abs(b); });
  const torch = [
    ...fx.cases.map((c) => ({ shape: c.out.shape, data: c.out.data, grads: c.grads?.map((g) => g.data) })),
    ...fx.einsum.map((c) => ({ shape: c.out.shape, data: c.out.data, grads: c.out.data.length === 0 && c.inputs.every((t) => t.shape.includes(0)) ? undefined : c.grads.map((g) => g.data) })),
    ...fx.linspace.map((c) => ({ shape: c.out.shape, data: c.out.data, linspace: true })),
  ];
  let extOk = 0;
  const extBad = [];
  o.ext.gpu.forEach((r, i) => {
    const cpu = o.ext.cpu[i];
    const want = torch[i];
    const tol = want?.linspace ? [1e-6, 2e-7] : [1e-5, 1e-5];
    const ok = !r.error && !cpu.error && near(r.data, cpu.data, 1e-5, 1e-5) && JSON.stringify(r.shape) === JSON.stringify(cpu.shape) &&
      (r.grads ?? []).every((g, j) => near(g, cpu.grads[j], 1e-5, 1e-5)) &&
      (!want || (JSON.stringify(r.shape) === JSON.stringify(want.shape) && near(r.data, want.data, ...tol) &&
        (want.grads ?? []).every((g, j) => near(r.grads[j], g, ...tol))));
    if (ok) extOk += 1; else extBad.push(`${r.id}: ${r.error ?? ''} webgpu ${JSON.stringify(r.data).slice(0, 120)} cpu ${JSON.stringify(cpu.data).slice(0, 120)} ${cpu.error ?? ''}`);
  });
  check(o.ext.gpu.length === torch.length + 1 && extBad.length === 0,
    `the op extensions on webgpu: ${extOk} of ${o.ext.gpu.length} match PyTorch's values and gradients and the cpu's (${fx.cases.length} cases, ${fx.einsum.length} einsum, ${fx.linspace.length} linspace, nn.functional.conv2d)${extBad.length ? `; failing: ${extBad.join(' | ')}` : ''}`);
  // 9.
  check(o.saveSync?.code === 'State' && /saveSafetensorsAsync/.test(o.saveSync.message), `saveSafetensors on webgpu: ${o.saveSync?.code} "${o.saveSync?.message}"`);
  check(o.mpkSync?.code === 'State' && /writeNamedMpkAsync/.test(o.mpkSync.message) && o.mpk.equal,
    `named MessagePack on webgpu: writeNamedMpk ${o.mpkSync?.code} "${o.mpkSync?.message}"; writeNamedMpkAsync's ${o.mpk.bytes} bytes equal the cpu's: ${o.mpk.equal}`);
  check(o.savedIdb === true, `kiln.io.saveToIndexedDB of the webgpu model stores saveSafetensorsAsync's bytes: ${o.savedIdb}`);
  check(close(o.saved.gpu, o.saved.cpu, 1e-6) && !close(o.saved.gpu, o.saved.untrained, 1e-3),
    `saveSafetensorsAsync after 3 epochs on the GPU (${o.saved.bytes} bytes), loaded into a cpu model: ${o.saved.cpu.map((v) => v.toFixed(5)).join(' ')} vs webgpu ${o.saved.gpu.map((v) => v.toFixed(5)).join(' ')} (untrained ${o.saved.untrained.map((v) => v.toFixed(5)).join(' ')})`);
  // 10.
  const caseFiles = ['cases.jsonl', 'round2.jsonl'].flatMap((f) => readFileSync(join(repo, 'tests/native/cases', f), 'utf8').split('\n')).filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
  const caseNum = (v) => (v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v === 'nan' ? NaN : v);
  const withinCase = (got, rec, key) => {
    const want = rec.expected[key].data.map(caseNum);
    return got.length === want.length && want.every((w, i) => (Number.isNaN(w) ? Number.isNaN(got[i]) : !Number.isFinite(w) ? got[i] === w
      : Math.abs(got[i] - w) <= rec.tolerance.abs + rec.tolerance.rel * Math.abs(w)));
  };
  const clipBad = Object.entries(o.clip).filter(([k, v]) => {
    const [id, key] = k.split(':');
    return !withinCase(v, caseFiles.find((r) => r.id === id), key);
  }).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  check(Object.keys(o.clip).length === 19 && clipBad.length === 0,
    `clipGradNormAsync on webgpu: ${Object.keys(o.clip).length - clipBad.length} of ${Object.keys(o.clip).length} keys of clip_grad_norm_global and clip_grad_nonfinite_and_norm_types within PyTorch's tolerance${clipBad.length ? `; failing: ${clipBad.join(' | ')}` : ''}`);
  check(o.clipNonfinite.want === true && o.clipNonfinite.error?.code === 'NonFinite' && /gradients are unchanged/.test(o.clipNonfinite.error.message) && JSON.stringify(o.clipNonfinite.a) === '[3,4]',
    `errorIfNonfinite (nan_error_if_nonfinite): ${o.clipNonfinite.error?.code} "${o.clipNonfinite.error?.message}", grad_a after ${JSON.stringify(o.clipNonfinite.a)}`);
  check(o.clipSync?.code === 'State' && /clipGradNormAsync/.test(o.clipSync.message), `clipGradNorm on webgpu: ${o.clipSync?.code} "${o.clipSync?.message}"`);
  const gcase = caseFiles.find((r) => r.id === 'clip_grad_norm_global');
  check(withinCase([o.clipGrads.total], gcase, 'total_norm') && withinCase(o.clipGrads.a, gcase, 'clipped_a') && withinCase(o.clipGrads.b, gcase, 'clipped_b') && withinCase(o.clipGrads.c, gcase, 'clipped_c'),
    `clipGradNormAsync on a Gradients {params}: total ${o.clipGrads.total}, clipped ${JSON.stringify([o.clipGrads.a, o.clipGrads.b, o.clipGrads.c])}`);
  // 11.
  const idxErr = (e, op, got, want) => e?.name === 'KilnError' && e.code === 'Index' && e.message.startsWith(`${op}: an index computed on the GPU is out of range: got ${got}, expected ${want}`);
  check(idxErr(o.dev.gather, 'gather', 3, 'in [0, 3)') && idxErr(o.dev.select, 'select', 2, 'in [-2, 2)') && /^oneHot: .* got [34], expected in \[0, 3\)/.test(o.dev.oneHot?.message) && o.dev.oneHot?.code === 'Index'
    && idxErr(o.dev.scatter, 'scatter', -1, 'in [0, 3)'),
    `indices computed on the GPU out of range, at the next read: gather "${o.dev.gather?.message}"; select ${o.dev.select?.code} "${o.dev.select?.message}"; oneHot ${o.dev.oneHot?.code}; scatter ${o.dev.scatter?.code} "${o.dev.scatter?.message}"`);
  check(JSON.stringify(o.dev.gatherOk) === '[3,1,2]' && JSON.stringify(o.dev.selectNeg) === '[3,6]',
    `computed indices in range: gather [[2, 0, 1]] of row [1, 2, 3] = ${JSON.stringify(o.dev.gatherOk)}; select -1 of dim 1 = ${JSON.stringify(o.dev.selectNeg)}`);
  check(idxErr(o.dev.unrelated, 'gather', 5, 'in [0, 3)') && JSON.stringify(o.dev.clean) === '[14]' && JSON.stringify(o.dev.badValues) === '[0,1,1]',
    `reported by the first read after the op, whichever tensor it reads ("${o.dev.unrelated?.message}"), then once only: [7]·2 = ${JSON.stringify(o.dev.clean)}; the op's output (0 for the bad index) ${JSON.stringify(o.dev.badValues)}`);
  // 8.
  check(JSON.stringify(o.lostBefore) === '[2,4,6]', `before the loss: [1, 2, 3]·2 = ${JSON.stringify(o.lostBefore)}`);
  const lostErr = (e) => e?.name === 'KilnError' && e.code === 'Device' && /lost/.test(e.message);
  check(lostErr(o.lostRead) && lostErr(o.lostOp) && lostErr(o.lostReadNew),
    `after device.destroy(): read ${o.lostRead?.code} "${o.lostRead?.message}"; op ${o.lostOp?.code} "${o.lostOp?.message}"; new read ${o.lostReadNew?.code}`);
  check(lostErr(o.lostFit) && o.lostFit.message.startsWith('Learner.fit: '), `fit() on the lost device: ${o.lostFit?.name} ${o.lostFit?.code} "${o.lostFit?.message}"`);
  check(JSON.stringify(o.otherAfterLoss) === '[4,6]', `the first webgpu instance (its own device) after the loss: [1, 2] + [3, 4] = ${JSON.stringify(o.otherAfterLoss)}`);
} catch (e) {
  fail(e);
} finally {
  await browser.close();
  server.close();
}
finish();
