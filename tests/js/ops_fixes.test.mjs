// The fixes of issue 15 through JS: backward({retainGraph}), sum()/mean()/max()/prod() of a
// rank-0 tensor in backward, a negative narrow start counting from the end (torch.narrow),
// and the one rule for scalar results (README "Scalar results"): whole-tensor reductions
// give rank-0 [] (PyTorch's), a rank-0 input stays rank 0 through element-wise ops,
// vector·vector matmul and einsum 'i,i->' give [], item() reads them. Expected values by hand.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

describe('backward({retainGraph})', () => {
  it('keeps the graph: a second backward gives the same gradients, each call its own', () => {
    kiln.tidy(() => {
      const x = T.fromData([1, 2, 3]).requireGrad();
      const y = x.mul(x).sum(); // d/dx = 2x
      const g1 = y.backward({ retainGraph: true });
      const g2 = y.backward({ retainGraph: true });
      const g3 = y.backward(); // releases it
      for (const g of [g1, g2, g3]) expect(Array.from(x.grad(g).dataSync())).toEqual([2, 4, 6]);
      expectKilnError(kiln, () => y.backward(), 'State', /^backward: the graph of this tensor was already released/);
    });
  });

  it('retainGraph false (or omitted) frees the graph as PyTorch: a second backward is a State error', () => {
    kiln.tidy(() => {
      const x = T.fromData([1, 2]).requireGrad();
      const y = x.exp().sum();
      y.backward({ retainGraph: false });
      expectKilnError(kiln, () => y.backward({ retainGraph: true }), 'State', /already released/);
    });
  });

  it('a graph shared by two losses: the first retained, the second released', () => {
    kiln.tidy(() => {
      const x = T.fromData([2]).requireGrad();
      const h = x.mul(3); // shared
      const a = h.mul(h).sum(); // 9x² -> 18x = 36
      const b = h.sum(); // 3
      expect(x.grad(a.backward({ retainGraph: true })).item()).toBe(36);
      expect(x.grad(b.backward()).item()).toBe(3);
    });
  });

  it('bad options', () => {
    kiln.tidy(() => {
      const y = T.fromData([1]).requireGrad().sum();
      expectKilnError(kiln, () => y.backward({ retainGraph: 'yes' }), 'Type', 'backward: retainGraph must be a boolean, got the string "yes"');
      expectKilnError(kiln, () => y.backward(true), 'Type', 'backward: options must be an object, got the boolean true');
      y.backward(); // nothing was half-applied
    });
  });
});

describe('rank-0 tensors in backward', () => {
  it('sum, mean, prod, max, min of a rank-0 tensor back-propagate to a [] gradient', () => {
    kiln.tidy(() => {
      for (const [name, f, want] of [
        ['sum', (x) => x.sum(), 1],
        ['mean', (x) => x.mean(), 1],
        ['prod', (x) => x.prod(), 1],
        ['max', (x) => x.max(), 1],
        ['min', (x) => x.min(), 1],
        ['sum of x³', (x) => x.mul(x).mul(x).sum(), 27],
      ]) {
        const x = T.fromData(3).requireGrad();
        const y = f(x);
        expect(y.shape, name).toEqual([]);
        const g = x.grad(y.backward());
        expect(g.shape, name).toEqual([]);
        expect(g.item(), name).toBe(want);
      }
    });
  });

  it('a rank-0 loss back-propagates directly', () => {
    kiln.tidy(() => {
      const x = T.fromData(2).requireGrad();
      const y = x.mul(x);
      expect(y.shape).toEqual([]);
      expect(x.grad(y.backward()).item()).toBe(4);
    });
  });
});

describe('narrow with a negative start (torch.narrow)', () => {
  it('counts from the end of the dim', () => {
    kiln.tidy(() => {
      const m = T.fromData([[0, 1, 2, 3], [4, 5, 6, 7]]);
      expect(m.narrow(1, -1, 1).toArray()).toEqual([[3], [7]]);
      expect(m.narrow(1, -4, 2).toArray()).toEqual([[0, 1], [4, 5]]);
      expect(m.narrow(0, -2, 2).toArray()).toEqual(m.toArray());
      expect(m.narrow(1, -2, 0).shape).toEqual([2, 0]);
      const x = T.fromData([1, 2, 3]).requireGrad();
      expect(Array.from(x.grad(x.narrow(0, -2, 2).sum().backward()).dataSync())).toEqual([0, 1, 1]);
    });
  });

  it('a start before -size or past the end is an Index error', () => {
    kiln.tidy(() => {
      const v = T.fromData([1, 2, 3]);
      expectKilnError(kiln, () => v.narrow(0, -4, 1), 'Index', 'narrow: start -4 and length 1 are out of bounds for dim 0 of size 3');
      expectKilnError(kiln, () => v.narrow(0, -1, 2), 'Index', 'narrow: start 2 and length 2 are out of bounds for dim 0 of size 3');
    });
  });
});

describe('the rule for scalar results', () => {
  it('whole-tensor reductions are rank-0 []; dim forms keep the dim; rank 0 stays rank 0', () => {
    kiln.tidy(() => {
      const x = T.fromData([[1, -2], [3, 4]]);
      for (const r of [x.sum(), x.mean(), x.max(), x.min(), x.prod(), x.norm(), x.amax(), x.std(), x.var(null),
        x.norm(2, [0, 1], { keepDim: false }), x.greaterElem(0).any(), x.greaterElem(0).all()]) {
        expect(r.shape).toEqual([]);
      }
      // A loss reduced to one value is rank 0 too, and backward starts from it.
      const loss = kiln.loss.mse().forward(x, T.zerosLike(x));
      expect(loss.shape).toEqual([]);
      expect(loss.item()).toBe((1 + 4 + 9 + 16) / 4);
      expect(x.norm(2, 1).shape).toEqual([2, 1]);
      expect(x.norm(2, 1, { keepDim: false }).shape).toEqual([2]);
      expect(x.amax(null, { keepDim: true }).shape).toEqual([1, 1]);
      const s = T.fromData(5);
      expect(s.shape).toEqual([]);
      expect(s.mul(2).shape).toEqual([]);
      expect(s.item()).toBe(5);
      const v = T.fromData([1, 2]);
      expect(v.matmul(v).shape).toEqual([]);
      expect(T.einsum('i,i->', v, v).shape).toEqual([]);
      expect(T.einsum('i,i->', v, v).item()).toBe(5);
      expect(x.sum().item()).toBe(6);
    });
  });
});
