// Gradients of every differentiable op of the JS Tensor against central differences:
// for each op f, d/dx sum(f(x) · r) (r fixed) from backward() must match
// (L(x + h·e_i) - L(x - h·e_i)) / 2h for every element i. Inputs stay away from the kinks
// of the non-smooth ops (clamp bounds, ties of max), so both sides are well defined.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose } from './helpers.mjs';

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

// [3, 4], distinct values in (0.3, 1.3), none within 0.02 of 0.5 or 1.0
const X0 = [0.31, 0.44, 0.58, 0.67, 0.73, 0.86, 0.92, 1.07, 1.15, 1.22, 1.29, 0.39];
const SHAPE = [3, 4];

const idx = () => T.fromData([[0, 3], [2, 2], [1, 0]], { dtype: 'int32' });
const mask = () => T.fromData([[true, false, false, true], [false, false, true, false], [true, true, false, false]]);

/** op name -> f(x) built from the JS API (x: [3, 4], float32). */
const OPS = {
  exp: (x) => x.exp(),
  log: (x) => x.log(),
  log1p: (x) => x.log1p(),
  sqrt: (x) => x.sqrt(),
  sin: (x) => x.sin(),
  cos: (x) => x.cos(),
  tanh: (x) => x.tanh(),
  erf: (x) => x.erf(),
  recip: (x) => x.recip(),
  neg: (x) => x.neg(),
  abs: (x) => x.sub(0.8).abs(),
  sigmoid: (x) => x.sigmoid(),
  relu: (x) => x.sub(0.8).relu(),
  gelu: (x) => x.gelu(),
  geluTanh: (x) => x.gelu({ approximate: 'tanh' }),
  silu: (x) => x.silu(),
  leakyRelu: (x) => x.sub(0.8).leakyRelu(0.1),
  softplus: (x) => x.softplus(2),
  'pow(3)': (x) => x.pow(3),
  'powf(tensor)': (x) => x.powf(x),
  'mul(self)': (x) => x.mul(x),
  'div(x + 1)': (x) => x.div(x.add(1)),
  'rsub, rdiv': (x) => x.rsub(2).rdiv(1),
  remainder: (x) => x.remainder(0.35), // jumps at multiples of 0.35, none within h of X0
  clamp: (x) => x.clamp(0.5, 1),
  maxPair: (x) => x.maxPair(x.flip([1])),
  minPair: (x) => x.minPair(x.flip([0])),
  softmax: (x) => x.softmax(1),
  logSoftmax: (x) => x.logSoftmax(0),
  sum: (x) => x.sum(),
  sumDim: (x) => x.sumDim(1),
  mean: (x) => x.mean(),
  meanDim: (x) => x.meanDim(0),
  prodDim: (x) => x.prodDim(1),
  max: (x) => x.max(),
  maxDim: (x) => x.maxDim(1),
  minDim: (x) => x.minDim(0),
  maxDimWithIndices: (x) => x.maxDimWithIndices(0)[0],
  var: (x) => x.var(1),
  varBias: (x) => x.varBias(0),
  sort: (x) => x.sort(1),
  topk: (x) => x.topk(2, 1),
  matmul: (x) => x.matmul(x.transpose()),
  'matmul rank 1': (x) => x.matmul(T.fromData([1, -2, 0.5, 3])),
  reshape: (x) => x.reshape([2, -1]).mul(T.fromData([1, 2, 3, 4, 5, 6])),
  flatten: (x) => x.flatten().mul(T.arange(12, { dtype: 'float32' })),
  transpose: (x) => x.transpose().mul(T.fromData([1, 2, 3])),
  permute: (x) => x.unsqueeze(0).permute([2, 0, 1]),
  swapDims: (x) => x.swapDims(0, 1).mul(T.fromData([[1], [2], [3], [4]])),
  expand: (x) => x.sumDim(1).expand([3, 5]),
  repeatDim: (x) => x.repeatDim(0, 2),
  repeat: (x) => x.repeat([2, 3]),
  flip: (x) => x.flip([0, 1]),
  slice: (x) => x.slice([[0, 2], [1, 4, 2]]),
  'slice negative step': (x) => x.slice([null, [0, 4, -1]]),
  narrow: (x) => x.narrow(1, 1, 2),
  chunk: (x) => x.chunk(2, 1)[1],
  sliceAssign: (x) => x.sliceAssign([[1, 3], [0, 2]], x.slice([[0, 2], [2, 4]]).mul(3)),
  cat: (x) => T.cat([x, x.mul(2)], 1),
  stack: (x) => T.stack([x, x.exp()], 1),
  select: (x) => x.select(0, [2, 0, 2]),
  selectAssign: (x) => x.selectAssign(1, [3, 3], x.slice([null, [0, 2]]).mul(2)),
  gather: (x) => x.gather(1, idx()),
  scatter: (x) => x.scatter(1, idx(), x.slice([null, [1, 3]]).sin()),
  maskFill: (x) => x.maskFill(mask(), 0.5),
  maskWhere: (x) => x.maskWhere(mask(), x.mul(-2)),
  squeeze: (x) => x.unsqueeze(1).squeeze(1),
  clone: (x) => x.clone().mul(2),
  'activation.logSigmoid': (x) => kiln.activation.logSigmoid(x),
  'activation.softmin': (x) => kiln.activation.softmin(x, 1),
};

/** L(x) = sum(f(x) · r), r a fixed pattern of f(x)'s shape. */
function objective(f, x) {
  return kiln.tidy(() => {
    const y = f(x);
    const n = y.numel;
    const r = T.fromData(Array.from({ length: n }, (_, i) => ((i * 7) % 5) - 1.7), { shape: y.shape });
    return y.mul(r).sum();
  });
}

describe('gradients against central differences', () => {
  for (const [name, f] of Object.entries(OPS)) {
    it(name, () => {
      kiln.tidy(() => {
        const x = T.fromData(X0, { shape: SHAPE }).requireGrad();
        const loss = objective(f, x);
        const g = x.grad(loss.backward());
        expect(g, `${name}: no gradient`).toBeDefined();
        expect(g.shape).toEqual(SHAPE);
        const h = 1e-2;
        const numeric = kiln.noGrad(() =>
          X0.map((_, i) =>
            kiln.tidy(() => {
              const plus = X0.slice();
              const minus = X0.slice();
              plus[i] += h;
              minus[i] -= h;
              const lp = objective(f, T.fromData(plus, { shape: SHAPE })).item();
              const lm = objective(f, T.fromData(minus, { shape: SHAPE })).item();
              return (lp - lm) / (2 * h);
            }),
          ),
        );
        expectClose(g.dataSync(), numeric, { abs: 5e-3, rel: 1e-2 });
      });
    });
  }
});
