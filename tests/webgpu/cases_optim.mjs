// The optimizer rules' updates on Wgpu against Cpu (tests/webgpu/ops_optim.cpp): Adam, AdamW and
// SGD (the fused update on both backends), Adam with AMSGrad (the op chain on Wgpu), over 3 or 4
// steps from one parameter, with gradients of mixed scales (one step's with a subnormal and a
// zero). Tolerance: both run the same f32 operations in the same order; sqrt and the divisions
// may differ by an ulp between the CPU and WGSL, which the later steps carry.
import { tensor } from './support.mjs';

const TOL = { abs: 1e-7, rel: 2e-6 };
const shape = [7, 33];
const grads = (seed, steps = 3) => Array.from({ length: steps }, (_, k) => tensor(shape, 'f32', seed + 1 + k, -2, 2));
const special = () => {
  const g = tensor(shape, 'f32', 77, -1e-3, 1e-3);
  g.data[0] = 1e-39; // subnormal
  g.data[1] = 0;
  g.data[2] = -5e3;
  return g;
};
const rule = (name, attrs, outputs, seed) => outputs.map((what, output) => ({
  name: `${name} ${what}`,
  op: 'optim_rule',
  inputs: [tensor(shape, 'f32', seed), ...grads(seed), special()],
  attrs: { ...attrs, output },
  tol: TOL,
}));

const ADAM = ['param', 'moment_1', 'moment_2'];
const SGD = ['param', 'momentum buffer'];

export const cases = [
  ...rule('adam', { rule: 'adam', lr: 0.01 }, ADAM, 500),
  ...rule('adam, L2 penalty, epsilon 1e-5', { rule: 'adam', lr: 0.003, penalty: 0.05, epsilon: 1e-5, beta_1: 0.8, beta_2: 0.99 }, ADAM, 510),
  ...rule('adamw', { rule: 'adamw', lr: 0.02, weight_decay: 0.1 }, ADAM, 520),
  ...rule('adam amsgrad (chain on Wgpu)', { rule: 'adam', lr: 0.01, amsgrad: true }, [...ADAM, 'max moment_2'], 530),
  ...rule('sgd', { rule: 'sgd', lr: 0.1 }, ['param'], 540),
  ...rule('sgd momentum, dampening, L2', { rule: 'sgd', lr: 0.05, momentum: 0.9, dampening: 0.1, penalty: 0.01 }, SGD, 550),
  ...rule('sgd nesterov', { rule: 'sgd', lr: 0.05, momentum: 0.8, nesterov: true }, SGD, 560),
  { name: 'adam gradient of another shape', op: 'optim_rule', inputs: [tensor([2, 3]), tensor([3, 2])], attrs: { rule: 'adam' }, error: 'Shape' },
  { name: 'sgd gradient of another shape', op: 'optim_rule', inputs: [tensor([2, 3]), tensor([6])], attrs: { rule: 'sgd', momentum: 0.9 }, error: 'Shape' },
];
