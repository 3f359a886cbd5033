// Autodiff<Wgpu> against Autodiff<Cpu> (tests/webgpu/ops_autodiff.cpp): losses and gradients of
// small graphs. Float tolerances: the matmuls and reductions sum in a different order on the
// GPU (f32 trees vs the Cpu's blocked f32/f64), so rel 1e-5 with abs 1e-6 per unit of scale.
import { tensor } from './support.mjs';

const mlpInputs = (n, i, h, o, seed) => [
  tensor([n, i], 'f32', seed), tensor([i, h], 'f32', seed + 1), tensor([1, h], 'f32', seed + 2),
  tensor([h, o], 'f32', seed + 3), tensor([n, o], 'f32', seed + 4),
];
const TOL = { abs: 1e-6, rel: 1e-4 };

export const cases = [
  ...['loss', 'dw1', 'db1', 'dw2', 'dx'].map((what, output) => ({
    name: `mlp ${what}`, op: 'mlp_grad', inputs: mlpInputs(16, 8, 32, 4, 10), attrs: { output }, tol: TOL,
  })),
  ...['loss', 'dw1', 'db1', 'dw2', 'dx'].map((what, output) => ({
    name: `mlp ${what}, odd sizes`, op: 'mlp_grad', inputs: mlpInputs(33, 7, 65, 3, 20), attrs: { output }, tol: TOL,
  })),
  ...['loss', 'dz'].map((what, output) => {
    const n = 12, c = 5, t = [];
    for (let i = 0; i < n; i++) for (let j = 0; j < c; j++) t.push(j === (i * 7) % c ? 1 : 0);
    return { name: `cross-entropy ${what}`, op: 'cross_entropy_grad', inputs: [tensor([n, c], 'f32', 30, -4, 4), { shape: [n, c], dtype: 'f32', data: t }], attrs: { output }, tol: TOL };
  }),
  ...['loss', 'dx'].map((what, output) => ({
    name: `slice, exp, sum_dim ${what}`, op: 'shape_reduce_grad', inputs: [tensor([3, 4, 5], 'f32', 40)], attrs: { output }, tol: TOL,
  })),
  { name: 'mlp shape error (inner dims)', op: 'mlp_grad', inputs: [tensor([4, 3]), tensor([2, 5]), tensor([1, 5]), tensor([5, 2]), tensor([4, 2])], error: 'Shape' },
];
