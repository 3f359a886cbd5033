// Step 2 of the tutorial: ownership (in JS: dispose and kiln.tidy), arithmetic, math,
// matmul, reductions, reshaping, cat/stack, slicing and comparisons.
//
//   node examples/js/tutorial/02_ownership_and_ops.mjs
//
// Burn moves a tensor into each op (`x.exp()` consumes x; `x.clone()` is a cheap refcount
// bump). Kiln's C++ API keeps refcounted handles, so `x.exp()` leaves x usable and
// `std::move(x).exp()` lets the op reuse x's buffer. In JS the garbage collector does not
// see WebAssembly memory, so kiln-dl follows TensorFlow.js: every op returns a new tensor,
// inputs stay usable, and you free tensors with `t.dispose()` or, simpler, by running the
// code inside `kiln.tidy(fn)`, which frees every tensor made inside except what fn returns.
import { init } from 'kiln-dl';

const kiln = await init();
const { Tensor } = kiln;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);
const round = (xs, d = 4) => xs.map((v) => Number(v.toFixed(d)));

// ---- Ownership: dispose and tidy ----
const before = kiln.memory().tensors;
const x = Tensor.fromData([1, 2, 3]);
const y = x.exp();                // x is still usable (Burn: x.clone().exp())
const z = x.log();
const w = x.add(y);
show('w', round(Array.from(w.dataSync())));
for (const t of [x, y, z, w]) t.dispose();
show('ownership.leaked', kiln.memory().tensors - before);

// tidy: everything made inside is freed, the returned value is kept.
const kept = kiln.tidy(() => {
  const t = Tensor.fromData([1, 2, 3]);
  return t.mul(2).add(1);          // the intermediate t.mul(2) is freed
});
show('tidy.kept', Array.from(kept.dataSync()));
show('tidy.leaked', kiln.memory().tensors - before - 1);
kept.dispose();

kiln.tidy(() => {
  // ---- Arithmetic (element-wise, broadcasting) ----
  const a = Tensor.fromData([[1, 2], [3, 4]]);
  const b = Tensor.fromData([[10, 20], [30, 40]]);
  show('add', a.add(b).toArray());
  show('sub', a.sub(b).toArray());
  show('mul', a.mul(b).toArray());
  show('div', round(Array.from(a.div(b).dataSync())));
  show('scaled', a.mul(2).toArray());
  show('shifted', a.add(1).toArray());
  show('neg', a.neg().toArray());
  show('broadcast', a.add(Tensor.fromData([100, 200])).toArray());

  // ---- Float math ----
  const v = Tensor.fromData([0, 1, 2]);
  show('exp', round(Array.from(v.exp().dataSync())));
  show('sqrt', round(Array.from(v.sqrt().dataSync())));
  show('sin', round(Array.from(v.sin().dataSync())));
  show('tanh', round(Array.from(v.tanh().dataSync())));
  show('square', Array.from(v.powf(2).dataSync()));
  show('recip', Array.from(Tensor.fromData([1, 2, 4]).recip().dataSync()));
  show('recipOfZero', String(v.recip().dataSync()[0]));   // 1/0 = Infinity, as IEEE 754 says
  show('floor', Array.from(Tensor.fromData([-1.5, 2.5]).floor().dataSync()));

  // ---- Matrix multiplication ----
  const m1 = Tensor.fromData([[1, 2], [3, 4]]);
  const m2 = Tensor.fromData([[5, 6], [7, 8]]);
  show('matmul', m1.matmul(m2).toArray());

  // ---- Reductions ----
  const t = Tensor.fromData([[1, 2, 3], [4, 5, 6]]);
  show('sum', t.sum().item());
  show('sumDim0', t.sumDim(0).toArray());          // keeps the dim, as Burn: [1, 3]
  show('sumDim1', t.sumDim(1).toArray());          // [2, 1]
  show('mean', t.mean().item());
  show('max', t.max().item());
  show('argmax1', t.argmax(1).toArray());          // int32, [2, 1]

  // ---- Reshaping ----
  const r = Tensor.fromData([1, 2, 3, 4, 5, 6]).reshape([2, 3]);
  show('reshape', r.toArray());
  show('flatten.shape', r.flatten(0, 1).shape);
  show('unsqueeze.shape', r.unsqueezeDim(0).shape);
  show('squeeze.shape', r.unsqueezeDim(0).squeezeDim(0).shape);
  show('swapDims', r.swapDims(0, 1).toArray());
  show('transpose', r.transpose().toArray());

  // ---- cat and stack ----
  const c1 = Tensor.fromData([[1, 2]]);
  const c2 = Tensor.fromData([[3, 4]]);
  show('cat', Tensor.cat([c1, c2], 0).toArray());          // [2, 2]
  show('stack.shape', Tensor.stack([c1, c2], 0).shape);    // [2, 1, 2]

  // ---- Slicing: [start, end) per dim ----
  const s = Tensor.fromData([[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
  show('row0', s.slice([[0, 1], [0, 3]]).toArray());
  show('col01', s.slice([[0, 3], [0, 2]]).toArray());
  show('single', s.slice([[1, 2], [1, 2]]).toArray());

  // ---- Comparisons give bool tensors ----
  const q = Tensor.fromData([1, 5, 3]);
  show('gt3', q.greaterElem(3).toArray());
  show('eq5', q.equalElem(5).toArray());

  // ---- Exercise 2 ----
  // minMaxNormalize(t) = (t - min) / (max - min); softmax along dim 1 from exp, sumDim, div.
  const minMaxNormalize = (u) => {
    const min = u.min();
    const max = u.max();
    return u.sub(min).div(max.sub(min));
  };
  show('exercise2.normalized', Array.from(minMaxNormalize(Tensor.fromData([2, 4, 6, 8, 10])).dataSync()));
  const softmaxByHand = (u) => {
    const e = u.exp();
    return e.div(e.sumDim(1));
  };
  const logits = Tensor.fromData([[1, 2, 3], [1, 1, 1]]);
  show('exercise2.softmax', round(softmaxByHand(logits).toArray().flat(), 5));
  show('exercise2.softmaxBuiltin', round(kiln.activation.softmax(logits, 1).toArray().flat(), 5));
});
show('liveTensors', kiln.memory().tensors);
