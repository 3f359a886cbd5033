// Autodiff through the JS API: requireGrad (in place), isRequireGrad, backward ->
// Gradients, grad / gradRemove / gradReplace, detach, noGrad, retained gradients of op
// outputs, and every error path. Expected gradients by hand or by central differences.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose, expectKilnError } from './helpers.mjs';

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});
const run = (fn) => kiln.tidy(() => void fn());

describe('gradients', () => {
  it('requireGrad marks in place and returns the tensor', () => {
    run(() => {
      const x = T.fromData([1, 2, 3]);
      expect(x.isRequireGrad).toBe(false);
      const same = x.requireGrad();
      expect(same).toBe(x);
      expect(x.isRequireGrad).toBe(true);
      expect(x.toArray()).toEqual([1, 2, 3]);
      const y = x.mul(2);
      expect(y.isRequireGrad).toBe(true);
      expect(T.fromData([1]).mul(2).isRequireGrad).toBe(false);
      x.setRequireGrad(false);
      expect(x.isRequireGrad).toBe(false);
      expectKilnError(kiln, () => T.arange(3).requireGrad(), 'DType', 'requireGrad: expected a float32 tensor, got int32 (shape [3])');
      expectKilnError(kiln, () => x.setRequireGrad(1), 'Type', 'setRequireGrad: require must be a boolean, got the number 1');
    });
  });

  it('d/dx sum(x * x + 3x) = 2x + 3', () => {
    run(() => {
      const x = T.fromData([[1, -2], [0.5, 4]]).requireGrad();
      const loss = x.mul(x).add(x.mul(3)).sum();
      expect(loss.item()).toBeCloseTo(1 + 3 + 4 - 6 + 0.25 + 1.5 + 16 + 12, 5);
      const grads = loss.backward();
      expect(grads.size).toBe(1);
      const g = x.grad(grads);
      expect(g.shape).toEqual([2, 2]);
      expect(g.isRequireGrad).toBe(false);
      expect(g.toArray()).toEqual([[5, -1], [4, 11]]);
      expect(grads.get(x).toArray()).toEqual([[5, -1], [4, 11]]);
    });
  });

  it('matmul gradients: dA = G·Bᵀ, dB = Aᵀ·G', () => {
    run(() => {
      const A = [[1, 2, 3], [4, 5, 6]];
      const B = [[1, -1], [0, 2], [3, 1]];
      const G = [[1, 0.5], [-1, 2]];
      const a = T.fromData(A).requireGrad();
      const b = T.fromData(B).requireGrad();
      const grads = a.matmul(b).mul(T.fromData(G)).sum().backward();
      const dA = A.map((_, i) => A[0].map((_, k) => G[i].reduce((s, g, j) => s + g * B[k][j], 0)));
      const dB = B.map((_, k) => B[0].map((_, j) => A.reduce((s, row, i) => s + row[k] * G[i][j], 0)));
      expect(a.grad(grads).toArray()).toEqual(dA);
      expect(b.grad(grads).toArray()).toEqual(dB);
    });
  });

  it('matches central differences on a composite function', () => {
    run(() => {
      const x0 = [0.3, -0.7, 1.1, 0.05, -1.4, 0.8];
      const w = T.fromData([[0.5, -1], [1.5, 0.25], [-0.5, 2]]);
      const target = T.fromData([[0, 1], [1, 0]]);
      // f(x) = sum(logSoftmax(tanh(x) · w, 1) * target) + mean(sigmoid(x)^2)
      const f = (xt) =>
        kiln.tidy(() => {
          const h = xt.reshape([2, 3]).tanh().matmul(w);
          return h.logSoftmax(1).mul(target).sum().add(xt.sigmoid().pow(2).mean());
        });
      const x = T.fromData(x0).requireGrad();
      const g = x.grad(f(x).backward()).dataSync();
      const eps = 1e-2;
      const numeric = x0.map((_, i) =>
        kiln.noGrad(() =>
          kiln.tidy(() => {
            const plus = x0.slice();
            const minus = x0.slice();
            plus[i] += eps;
            minus[i] -= eps;
            return (f(T.fromData(plus)).item() - f(T.fromData(minus)).item()) / (2 * eps);
          }),
        ),
      );
      expectClose(g, numeric, { abs: 2e-3, rel: 1e-2 });
    });
  });

  it('gradients broadcast back to the input shape', () => {
    run(() => {
      const b = T.fromData([1, 2, 3]).requireGrad();
      const x = T.ones([4, 3]);
      const g = b.grad(x.add(b).sum().backward());
      expect(g.toArray()).toEqual([4, 4, 4]);
    });
  });

  it('grad is undefined for tensors without a gradient', () => {
    run(() => {
      const x = T.fromData([1, 2]).requireGrad();
      const unused = T.fromData([3, 4]).requireGrad();
      const plain = T.fromData([5, 6]);
      const grads = x.sum().backward();
      expect(unused.grad(grads)).toBeUndefined();
      expect(plain.grad(grads)).toBeUndefined();
      expect(T.arange(2).grad(grads)).toBeUndefined();
    });
  });

  it('a requireGrad on an op output keeps its gradient (retain_grad)', () => {
    run(() => {
      const x = T.fromData([1, 2]).requireGrad();
      const h = x.mul(3).requireGrad();
      const grads = h.mul(h).sum().backward();
      expect(h.grad(grads).toArray()).toEqual([6, 12]); // 2h
      expect(x.grad(grads).toArray()).toEqual([18, 36]); // 2h·3
    });
  });

  it('gradRemove and gradReplace', () => {
    run(() => {
      const x = T.fromData([1, 2]).requireGrad();
      const grads = x.mul(x).sum().backward();
      x.gradReplace(grads, T.fromData([7, 8]));
      expect(x.grad(grads).toArray()).toEqual([7, 8]);
      expect(x.gradRemove(grads).toArray()).toEqual([7, 8]);
      expect(x.grad(grads)).toBeUndefined();
      expect(grads.size).toBe(0);
      expectKilnError(kiln, () => x.gradReplace(grads, T.ones([3])), 'Shape', /grad_replace|gradReplace/);
      expectKilnError(kiln, () => T.ones([2]).gradReplace(grads, T.ones([2])), 'State', /grad/);
    });
  });

  it('detach cuts the graph', () => {
    run(() => {
      const x = T.fromData([1, 2]).requireGrad();
      const d = x.mul(2).detach();
      expect(d.isRequireGrad).toBe(false);
      const grads = x.mul(d).sum().backward();
      expect(x.grad(grads).toArray()).toEqual([2, 4]); // d is a constant
      expect(T.arange(2).detach().toArray()).toEqual([0, 1]);
    });
  });

  it('noGrad records nothing, nests, and restores after a throw', () => {
    run(() => {
      const x = T.fromData([1, 2]).requireGrad();
      const y = kiln.noGrad(() => x.mul(2).add(1));
      expect(y.isRequireGrad).toBe(false);
      expect(y.toArray()).toEqual([3, 5]);
      kiln.noGrad(() => {
        kiln.noGrad(() => {});
        expect(x.mul(2).isRequireGrad).toBe(false);
      });
      expect(() => kiln.noGrad(() => { throw new Error('boom'); })).toThrow('boom');
      expect(x.mul(2).isRequireGrad).toBe(true);
      // a leaf may still be marked inside noGrad (as torch)
      const z = kiln.noGrad(() => T.fromData([1]).requireGrad());
      expect(z.isRequireGrad).toBe(true);
      expectKilnError(kiln, () => kiln.noGrad(5), 'Type', 'noGrad: expected a function, got the number 5');
    });
  });
});

describe('js_tensor.hpp conversions (used by the nn bindings)', () => {
  it('to_typed / from_typed keep the graph; rank and dtype are checked', () => {
    run(() => {
      const { raw, wrap, unwrap } = kiln._internals;
      const x = T.fromData([[-1, 2], [3, -4]]).requireGrad();
      const y = wrap(raw._typedRoundTrip(unwrap(x, 'test'), false)); // relu through Tensor<AD, 2>
      expect(y.toArray()).toEqual([[0, 2], [3, 0]]);
      expect(y.isRequireGrad).toBe(true);
      expect(x.grad(y.sum().backward()).toArray()).toEqual([[0, 1], [1, 0]]);
      const i = T.fromData([1, 2], { dtype: 'int32' });
      expect(wrap(raw._typedRoundTrip(unwrap(i, 'test'), true)).toArray()).toEqual([1, 2]);
      const inner = wrap(raw._innerRoundTrip(unwrap(x, 'test')));
      expect(inner.toArray()).toEqual([[-2, 4], [6, -8]]);
      expect(inner.isRequireGrad).toBe(false);
      expectKilnError(kiln, () => raw._typedRoundTrip(unwrap(T.ones([2]), 'test'), false), 'Rank',
        'typedRoundTrip: expected a tensor of rank 2, got shape [2] (rank 1)');
      expectKilnError(kiln, () => raw._typedRoundTrip(unwrap(x, 'test'), true), 'DType',
        'typedRoundTrip: expected an int32 tensor, got float32 (shape [2, 2])');
    });
  });
});

describe('backward errors', () => {
  it('needs one element, a tracked tensor, and runs once per graph', () => {
    run(() => {
      const x = T.fromData([1, 2]).requireGrad();
      expectKilnError(kiln, () => x.mul(2).backward(), 'Shape', /backward/);
      expectKilnError(kiln, () => T.fromData([1]).backward(), 'State',
        /^backward: the tensor \(shape \[1\]\) does not require gradients/);
      expectKilnError(kiln, () => T.arange(1).backward(), 'DType', 'backward: expected a float32 tensor, got int32 (shape [1])');
      const loss = x.mul(x).sum();
      loss.backward();
      expectKilnError(kiln, () => loss.backward(), 'State', /already released/);
      expectKilnError(kiln, () => x.grad({}), 'Type', 'grad: grads must be the Gradients returned by backward(), got an object');
    });
  });

  it('Gradients: dispose, Symbol.dispose, use after dispose', () => {
    run(() => {
      const x = T.fromData([1]).requireGrad();
      const grads = x.mul(2).sum().backward();
      expect(grads).toBeInstanceOf(kiln.Gradients);
      grads.dispose();
      expect(grads.isDisposed).toBe(true);
      grads.dispose(); // twice is fine
      expectKilnError(kiln, () => x.grad(grads), 'Disposed', 'grad: the Gradients were disposed');
      // what `using g2 = ...` calls at the end of its block (Node 20 has no `using` syntax)
      const g2 = x.mul(3).sum().backward();
      expect(x.grad(g2).toArray()).toEqual([3]);
      g2[Symbol.dispose]();
      expect(g2.isDisposed).toBe(true);
      expectKilnError(kiln, () => new kiln.Gradients(), 'Type', /returned by tensor.backward/);
    });
  });
});
