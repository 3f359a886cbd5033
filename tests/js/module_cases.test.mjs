// The optimizer cases of tests/native/cases/{cases,round2}.jsonl (PyTorch 1.13; 3 steps with
// given gradients) through the new doors of optimizer.step: a kiln.Param of a user module,
// and a plain tensor in a list (updated in place). Each gradient is given exactly by
// backward() of sum(p · g).
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose } from './support/train_helpers.mjs';

function load(file) {
  const out = new Map();
  for (const line of readFileSync(new URL(`../native/cases/${file}`, import.meta.url), 'utf8').split('\n')) {
    if (line.trim() !== '') {
      const c = JSON.parse(line);
      out.set(c.id, c);
    }
  }
  return out;
}

let kiln;
const cases = new Map([...load('cases.jsonl'), ...load('round2.jsonl')]);
beforeAll(async () => {
  kiln = await init();
});

/** Runs case c's 3 steps with a fresh optimizer from make(), both ways; checks each step. */
function run(c, make, expectedKey = 'params_after_each_step') {
  const p0 = c.inputs.p0.data;
  const n = p0.length;
  const grads = c.inputs.grads.data;
  const want = c.expected[expectedKey].data;
  // (a) a Param of a user module
  const One = class One extends kiln.Module {
    constructor() {
      super();
      this.p = this.param('p', kiln.tidy(() => kiln.Tensor.fromData(p0)));
    }
  };
  const net = new One();
  // (b) a plain tensor in a list
  const t = kiln.Tensor.fromData(p0).requireGrad();
  const oa = make();
  const ob = make();
  for (let step = 0; step < 3; step++) {
    kiln.tidy(() => {
      const g = kiln.Tensor.fromData(grads.slice(step * n, (step + 1) * n));
      oa.step(net, net.p.mul(g).sum().backward());
      ob.step([t], t.mul(g).sum().backward());
    });
    const w = want.slice(step * n, (step + 1) * n);
    expectClose(net.p.dataSync(), w, c.tolerance, `${c.id} (module) step ${step + 1}`);
    expectClose(t.dataSync(), w, c.tolerance, `${c.id} (tensor list) step ${step + 1}`);
  }
  expect([oa.steps, ob.steps]).toEqual([3, 3]);
  for (const o of [oa, ob, net, t]) o.dispose();
}

describe('optimizer cases through optimizer.step(module | [tensor], grads)', () => {
  it('sgd_momentum_dampening_weight_decay', () => {
    const c = cases.get('sgd_momentum_dampening_weight_decay');
    const { lr, momentum, dampening, weight_decay: weightDecay } = c.params;
    run(c, () => kiln.optim.sgd({ lr, momentum, dampening, weightDecay }));
  });

  it('sgd_nesterov', () => {
    const c = cases.get('sgd_nesterov');
    const { lr, momentum, weight_decay: weightDecay } = c.params;
    run(c, () => kiln.optim.sgd({ lr, momentum, nesterov: true, weightDecay }));
  });

  it('adamw_decoupled_weight_decay', () => {
    const c = cases.get('adamw_decoupled_weight_decay');
    const { lr, beta1, beta2, eps, weight_decay: weightDecay } = c.params;
    run(c, () => kiln.optim.adamW({ lr, beta1, beta2, epsilon: eps, weightDecay }));
  });

  it('rmsprop_eps_outside_sqrt_centered (plain, and centered with momentum and weight decay)', () => {
    const c = cases.get('rmsprop_eps_outside_sqrt_centered');
    const plain = c.params.plain;
    run(c, () => kiln.optim.rmsProp({ lr: plain.lr, alpha: plain.alpha, epsilon: plain.eps }), 'plain_params_after_each_step');
    const cm = c.params.centered_momentum_wd;
    run(c, () => kiln.optim.rmsProp({ lr: cm.lr, alpha: cm.alpha, epsilon: cm.eps, centered: true, momentum: cm.momentum, weightDecay: cm.weight_decay }),
      'centered_momentum_wd_params_after_each_step');
  });
});

describe('optimizer.step on a tensor list: what is not stepped stays as it is', () => {
  it('an untracked tensor and one without a gradient keep their handle, values and tracking', () => {
    const a = kiln.Tensor.fromData([1, 2]).requireGrad();
    const b = kiln.Tensor.fromData([3, 4]); // untracked: no gradient
    const c = kiln.Tensor.fromData([5, 6]).requireGrad(); // not in the loss
    const opt = kiln.optim.sgd({ lr: 0.5 });
    kiln.tidy(() => opt.step([a, b, c], a.mul(b).sum().backward()));
    expect(a.toArray()).toEqual([1 - 0.5 * 3, 2 - 0.5 * 4]);
    expect([b.toArray(), b.isRequireGrad]).toEqual([[3, 4], false]);
    expect([c.toArray(), c.isRequireGrad]).toEqual([[5, 6], true]);
    kiln.dispose([a, b, c]);
    opt.dispose();
  });
});
