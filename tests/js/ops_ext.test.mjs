// The issue-15 Tensor ops against PyTorch 1.13 (fixtures/ops_ext_torch.json, written by
// fixtures/ops_ext_torch.py: values and gradients of sum(out * dy)), finite differences for
// the gradients, and their bad inputs. Kiln keeps a reduced dim when `dim` is given; a
// whole-tensor reduction is rank-0 [] as torch's.
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose, expectKilnError } from './helpers.mjs';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/ops_ext_torch.json', import.meta.url), 'utf8'));

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const P = (v) => (v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const tensor = (t) => T.fromData(t.data.map(num), { shape: t.shape, dtype: t.dtype });
const TOL = { abs: 1e-5, rel: 1e-5 };

describe('issue-15 ops against PyTorch', () => {
  for (const c of fixture.cases) {
    it(c.id, () => {
      kiln.tidy(() => {
        const xs = c.inputs.map((t) => {
          const x = tensor(t);
          return t.dtype === 'float32' && c.grads ? x.requireGrad() : x;
        });
        const args = c.method === 'norm' ? [P(c.args[0]), ...c.args.slice(1)] : c.args;
        const out = xs[0][c.method](...args);
        expect(out.shape).toEqual(c.out.shape);
        expect(out.dtype).toBe(c.out.dtype);
        expectClose(out.dataSync(), c.out.data.map(num), TOL);
        if (c.grads) {
          const g = out.mul(tensor(c.dy)).sum().backward();
          c.grads.forEach((want, i) => {
            const got = xs[i].grad(g);
            expect(got.shape).toEqual(want.shape);
            expectClose(got.dataSync(), want.data.map(num), TOL);
          });
        }
      });
    });
  }

  it('linspace', () => {
    kiln.tidy(() => {
      for (const c of fixture.linspace) {
        const out = T.linspace(...c.args);
        expect(out.shape).toEqual(c.out.shape);
        expect(out.dtype).toBe('float32');
        // torch's formula; its vectorised kernel adds the step per SIMD block, so inner
        // values may differ in the last bit or two: both ends are exact.
        const got = Array.from(out.dataSync());
        expectClose(got, c.out.data, { abs: 1e-6, rel: 2e-7 });
        if (got.length > 0) {
          expect(got[0]).toBe(c.out.data[0]);
          expect(got[got.length - 1]).toBe(c.out.data[c.out.data.length - 1]);
        }
      }
    });
  });

  for (const c of fixture.einsum) {
    it(`einsum ${c.equation} ${c.inputs.map((t) => JSON.stringify(t.shape)).join(' ')}`, () => {
      kiln.tidy(() => {
        const xs = c.inputs.map((t) => tensor(t).requireGrad());
        const out = T.einsum(c.equation, ...xs);
        expect(out.shape).toEqual(c.out.shape);
        expectClose(out.dataSync(), c.out.data.map(num), TOL);
        if (c.out.data.length === 0 && xs.every((x) => x.shape.includes(0))) return;
        const g = out.mul(tensor(c.dy)).sum().backward();
        c.grads.forEach((want, i) => {
          const got = xs[i].grad(g);
          expect(got.shape).toEqual(want.shape);
          expectClose(got.dataSync(), want.data.map(num), TOL);
        });
      });
    });
  }
});

/** Central finite differences of f (Tensor -> Tensor) at x, of sum(f(x) * w), in float32. */
function checkFiniteDifferences(f, data, shape, { h = 1e-2, tol = 2e-2 } = {}) {
  kiln.tidy(() => {
    const x = T.fromData(data, { shape }).requireGrad();
    const y = f(x);
    const w = T.fromData(Array.from({ length: y.size ?? y.dataSync().length }, (_, i) => 0.5 + ((i * 7) % 5) / 4), { shape: y.shape });
    const analytic = x.grad(y.mul(w).sum().backward()).dataSync();
    const wv = w.dataSync();
    const objective = (vals) => {
      const yv = f(T.fromData(vals, { shape })).dataSync();
      let s = 0;
      for (let i = 0; i < yv.length; i++) s += yv[i] * wv[i];
      return s;
    };
    data.forEach((_, i) => {
      const plus = data.slice();
      const minus = data.slice();
      plus[i] += h;
      minus[i] -= h;
      const numeric = (objective(plus) - objective(minus)) / (2 * h);
      expect(Math.abs(analytic[i] - numeric), `d/dx[${i}]: analytic ${analytic[i]}, numeric ${numeric}`)
        .toBeLessThanOrEqual(tol * (1 + Math.abs(numeric)));
    });
  });
}

describe('gradients against finite differences', () => {
  // Points away from kinks and ties (|x| distinct, no zeros), where the derivative exists.
  const data = [0.7, -1.3, 2.1, -0.4, 1.7, -2.6, 0.9, 1.2, -0.8, 2.9, -1.9, 0.3];
  const shape = [3, 4];
  const ops = {
    'norm p=2 dim 1': (x) => x.norm(2, 1),
    'norm p=1 all': (x) => x.norm(1),
    'norm p=3 dim 0': (x) => x.norm(3, 0),
    'norm p=0.5 dim 1': (x) => x.norm(0.5, 1),
    'norm p=1.5 dims [0, 1]': (x) => x.norm(1.5, [0, 1]),
    'norm p=inf dim 1': (x) => x.norm(Infinity, 1),
    'norm p=-inf dim 0': (x) => x.norm(-Infinity, 0),
    'std dim 1': (x) => x.std(1),
    'var correction 0 dim 0': (x) => x.var(0, { correction: 0 }),
    'std correction 2 all': (x) => x.std(null, { correction: 2 }),
    'amax dim 1': (x) => x.amax(1),
    'amin all': (x) => x.amin(),
    'pad constant': (x) => x.pad([1, -1, 2, 1], { value: 3 }),
    'pad reflect': (x) => x.pad([2, 1], { mode: 'reflect' }),
    'pad replicate': (x) => x.pad([1, 2, 1, 0], { mode: 'replicate' }),
    'pad circular': (x) => x.pad([3, 1], { mode: 'circular' }),
    'tril 1': (x) => x.tril(1),
    'triu -1': (x) => x.triu(-1),
    'cumsum 1': (x) => x.cumsum(1),
    'cumsum 0': (x) => x.cumsum(0),
    'einsum ij,kj->ik': (x) => T.einsum('ij,kj->ik', x, x.mul(0.5)),
    'einsum ij->j': (x) => T.einsum('ij->j', x.mul(x)),
  };
  for (const [name, f] of Object.entries(ops)) {
    it(name, () => checkFiniteDifferences(f, data, shape));
  }
});

describe('special points', () => {
  it('norm p=2 of the zero vector: value 0, subgradient 0 (not nan), as PyTorch', () => {
    kiln.tidy(() => {
      const x = T.zeros([3]).requireGrad();
      const n = x.norm();
      expect(n.shape).toEqual([]);
      expect(n.item()).toBe(0);
      expect(Array.from(x.grad(n.backward()).dataSync())).toEqual([0, 0, 0]);
    });
  });

  it('norm p=2 by hand: |[3, 4]| = 5, gradient x / 5; keepDim false drops the dim', () => {
    kiln.tidy(() => {
      const x = T.fromData([[3, 4], [6, 8]]).requireGrad();
      const n = x.norm(2, 1, { keepDim: false });
      expect(n.shape).toEqual([2]);
      expect(Array.from(n.dataSync())).toEqual([5, 10]);
      expectClose(x.grad(n.sum().backward()).dataSync(), [0.6, 0.8, 0.6, 0.8]);
    });
  });

  it('amax splits the gradient among ties where maxDimWithIndices picks one', () => {
    kiln.tidy(() => {
      const x = T.fromData([2, 7, 7, 1]).requireGrad();
      expect(Array.from(x.grad(x.amax().backward()).dataSync())).toEqual([0, 0.5, 0.5, 0]);
      const y = T.fromData([2, 7, 7, 1]).requireGrad();
      expect(Array.from(y.grad(y.maxDimWithIndices(0)[0].sum().backward()).dataSync())).toEqual([0, 1, 0, 0]);
    });
  });

  it('cumsum by hand, and the reverse cumulative sum as its gradient', () => {
    kiln.tidy(() => {
      const x = T.fromData([1, 2, 3, 4]).requireGrad();
      const y = x.cumsum(0);
      expect(Array.from(y.dataSync())).toEqual([1, 3, 6, 10]);
      const g = y.mul(T.fromData([1, 10, 100, 1000])).sum().backward();
      expect(Array.from(x.grad(g).dataSync())).toEqual([1111, 1110, 1100, 1000]);
      expect(T.fromData(5).cumsum(0).shape).toEqual([]);
    });
  });

  it('var(dim, unbiased) keeps its signature and values', () => {
    kiln.tidy(() => {
      const x = T.fromData([[1, 2, 3, 4]]);
      expectClose(x.var(1).dataSync(), [5 / 3]);
      expectClose(x.var(1, false).dataSync(), [5 / 4]);
      expectClose(x.var(1, { correction: 2 }).dataSync(), [5 / 2]);
      expect(x.var(1).shape).toEqual([1, 1]);
      expect(x.var(1, { correction: 1, keepDim: false }).shape).toEqual([1]);
    });
  });

  it('empty dims as torch: norm 0, std nan, cumsum and pad keep working', () => {
    kiln.tidy(() => {
      // torch.linalg.vector_norm(torch.zeros(2, 0), 2, dim=1) = [0, 0]; torch.std(..., dim=1) = [nan, nan]
      const e = T.zeros([2, 0]);
      expect(Array.from(e.norm(2, 1).dataSync())).toEqual([0, 0]);
      expect(Array.from(e.norm(0.5).dataSync())).toEqual([0]);
      expect(Array.from(e.std(1).dataSync()).every(Number.isNaN)).toBe(true);
      expect(e.cumsum(1).shape).toEqual([2, 0]);
      expect(e.pad([1, 1]).toArray()).toEqual([[0, 0], [0, 0]]);
      expectKilnError(kiln, () => e.norm(Infinity, 1), 'Value',
        'norm: the norm with p = Infinity of dim 1 of size 0 of shape [2, 0] is undefined (the operation has no identity, as torch)');
    });
  });

  it('pad on int32 and bool keeps the dtype', () => {
    kiln.tidy(() => {
      expect(T.fromData([true, false]).pad([1, 0], { value: 1 }).toArray()).toEqual([true, true, false]);
      expect(T.fromData([1, 2], { dtype: 'int32' }).pad([0, 2], { mode: 'replicate' }).toArray()).toEqual([1, 2, 2, 2]);
    });
  });
});

describe('bad inputs', () => {
  it('norm', () => {
    kiln.tidy(() => {
      const x = T.fromData([[1, 2], [3, 4]]);
      expectKilnError(kiln, () => x.norm(NaN), 'Value', 'norm: p must not be NaN (a real number, Infinity or -Infinity)');
      expectKilnError(kiln, () => x.norm('fro'), 'Type', 'norm: p must be a number, got the string "fro"');
      expectKilnError(kiln, () => x.norm(2, 2), 'Index', 'norm: dim 2 is out of range for a tensor of rank 2 (expected -2 <= dim < 2)');
      expectKilnError(kiln, () => x.norm(2, [1, -1]), 'Index', 'norm: dim -1 appears more than once in the dims');
      expectKilnError(kiln, () => x.norm(2, []), 'Value', 'norm: dim must list at least one dim (omit it to reduce every dim)');
      expectKilnError(kiln, () => x.norm(2, 0.5), 'Type', 'norm: dim must be an integer, got the number 0.5');
      expectKilnError(kiln, () => x.norm(2, 0, { keepDim: 1 }), 'Type', 'norm: keepDim must be a boolean, got the number 1');
      expectKilnError(kiln, () => T.fromData([1, 2], { dtype: 'int32' }).norm(), 'DType', /^norm: expected a float32 tensor, got int32/);
    });
  });

  it('std / var', () => {
    kiln.tidy(() => {
      const x = T.fromData([[1, 2], [3, 4]]);
      expectKilnError(kiln, () => x.std(0, { correction: -1 }), 'Value', 'std: correction must be a finite number >= 0, got -1');
      expectKilnError(kiln, () => x.var(0, { correction: Infinity }), 'Value', 'var: correction must be a finite number >= 0, got Infinity');
      expectKilnError(kiln, () => x.std(0, { correction: '1' }), 'Type', 'std: correction must be a number, got the string "1"');
      expectKilnError(kiln, () => x.std(3), 'Index', /^std: dim 3 is out of range/);
      expectKilnError(kiln, () => x.var(0, 1), 'Type', 'var: unbiased must be a boolean, got the number 1');
    });
  });

  it('amax / amin', () => {
    kiln.tidy(() => {
      expectKilnError(kiln, () => T.zeros([2, 0]).amax(1), 'Value',
        'amax: cannot reduce dim 1 of size 0 of shape [2, 0] (the maximum of no elements is undefined)');
      expectKilnError(kiln, () => T.fromData([true]).amin(), 'DType', 'amin: expected a float32 or int32 tensor, got bool');
      expectKilnError(kiln, () => T.zeros([2]).amax(-2), 'Index', /^amax: dim -2 is out of range/);
    });
  });

  it('pad', () => {
    kiln.tidy(() => {
      const x = T.zeros([2, 3]);
      expectKilnError(kiln, () => x.pad([1]), 'Value',
        'pad: the pad list must have an even length ([left, right] per dim, last dim first), got 1 entries');
      expectKilnError(kiln, () => x.pad([1, 1, 1, 1, 1, 1]), 'Value',
        'pad: the pad list has 6 entries (3 dims) but the tensor has shape [2, 3] (rank 2)');
      expectKilnError(kiln, () => x.pad([-2, -2]), 'Value', 'pad: pads (-2, -2) of dim 1 of size 3 give a negative size -1');
      expectKilnError(kiln, () => x.pad([3, 0], { mode: 'reflect' }), 'Value', "pad: reflect pads (3, 0) must be smaller than dim 1's size 3");
      expectKilnError(kiln, () => x.pad([1, 1], { mode: 'wrap' }), 'Value',
        "pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got 'wrap'");
      expectKilnError(kiln, () => T.zeros([2, 0]).pad([1, 1], { mode: 'replicate' }), 'Value',
        "pad: cannot pad the empty dim 1 of shape [2, 0] in a mode other than 'constant'");
      expectKilnError(kiln, () => x.pad([1.5, 0]), 'Type', 'pad: pads[0] must be an integer, got the number 1.5');
      expectKilnError(kiln, () => x.pad([1, 0], { value: 'a' }), 'Type', 'pad: value must be a number, got the string "a"');
      expectKilnError(kiln, () => x.pad([2 ** 30, 2 ** 30]), 'Limit',
        'pad: dim 1 of shape [2, 2147483651] is 2147483651, more than the limit of 2147483647');
      expect(x.pad([1, 0]).shape).toEqual([2, 4]); // nothing half-applied: x still usable
    });
  });

  it('tril / triu / cumsum', () => {
    kiln.tidy(() => {
      expectKilnError(kiln, () => T.zeros([3]).tril(), 'Rank',
        'tril: expected a tensor of rank >= 2 (a matrix or a batch of matrices), got shape [3] (rank 1)');
      expectKilnError(kiln, () => T.zeros([3, 3]).triu(0.5), 'Type', 'triu: diagonal must be an integer, got the number 0.5');
      expectKilnError(kiln, () => T.fromData([true, false]).cumsum(0), 'DType',
        'cumsum: expected a float32 or int32 tensor, got bool (cast it first)');
      expectKilnError(kiln, () => T.zeros([3]).cumsum(1), 'Index', /^cumsum: dim 1 is out of range/);
    });
  });

  it('linspace', () => {
    expectKilnError(kiln, () => T.linspace(0, 1, -1), 'Value', 'linspace: steps must be >= 0, got -1');
    expectKilnError(kiln, () => T.linspace(0, 1, 2.5), 'Type', 'linspace: steps must be an integer, got the number 2.5');
    expectKilnError(kiln, () => T.linspace(0, Infinity, 3), 'Value', 'linspace: start and end must be finite, got 0 and Infinity');
    expectKilnError(kiln, () => T.linspace('0', 1, 3), 'Type', 'linspace: start must be a number, got the string "0"');
  });

  it('einsum', () => {
    kiln.tidy(() => {
      const a = T.zeros([2, 3]);
      const b = T.zeros([4, 5]);
      expectKilnError(kiln, () => T.einsum('ij,jk->ik', a, b), 'Shape',
        "einsum: label 'j' has size 3 and 4 (operand 1 has shape [4, 5]), in the equation 'ij,jk->ik'");
      expectKilnError(kiln, () => T.einsum('ijk,jk->i', a, b), 'Shape',
        "einsum: operand 0 has shape [2, 3] (rank 2) but its term 'ijk' has 3 label(s), in the equation 'ijk,jk->i'");
      expectKilnError(kiln, () => T.einsum('...ij,jk->ik', a, b), 'Value',
        "einsum: an ellipsis ('...') is not supported in the equation '...ij,jk->ik'");
      expectKilnError(kiln, () => T.einsum('ii->i', a), 'Value',
        "einsum: label 'i' repeats within the operand 'ii' (diagonals are not supported) in the equation 'ii->i'");
      expectKilnError(kiln, () => T.einsum('ij->ik', a), 'Value', "einsum: output label 'k' is in no operand in the equation 'ij->ik'");
      expectKilnError(kiln, () => T.einsum('ij->ii', a), 'Value', "einsum: output label 'i' repeats in the equation 'ij->ii'");
      expectKilnError(kiln, () => T.einsum('i1,j->ij', a, b), 'Value',
        "einsum: unexpected character '1' (labels are letters a-z, A-Z) in the equation 'i1,j->ij'");
      expectKilnError(kiln, () => T.einsum('ij,jk->ik', a), 'Value',
        "einsum: the equation has 2 operand(s) but 1 tensor(s) were given in the equation 'ij,jk->ik'");
      expectKilnError(kiln, () => T.einsum('i,j,k->ijk', a, b, a), 'Value', 'einsum: one or two operands are supported, got 3');
      expectKilnError(kiln, () => T.einsum('ij->j->i', a), 'Value', "einsum: more than one '->' in the equation 'ij->j->i'");
      expectKilnError(kiln, () => T.einsum(3, a), 'Type', 'einsum: equation must be a string, got the number 3');
      expectKilnError(kiln, () => T.einsum('i->i', T.fromData([1], { dtype: 'int32' })), 'DType', /^einsum: expected a float32 tensor, got int32/);
    });
  });
});
