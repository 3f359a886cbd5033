// expm1 in JS: the op added to the engine as one row of engine/include/kiln/backend/ops.def
// (no JS edit: the method comes from the engine's op table). Values and gradients are
// PyTorch 1.13's:
//   x = torch.tensor([-3.0, -1e-6, 0.0, 1e-7, 0.5, 2.0], requires_grad=True)
//   y = torch.expm1(x); y.sum().backward()
//   x2 = torch.tensor([[1e-7, -2.5], [0.25, 3.0]], requires_grad=True)
//   (torch.expm1(x2) * torch.tensor([[1., 2.], [3., 4.]])).sum().backward()
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init, KilnError } from 'kiln-dl';
import { expectClose } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

describe('expm1', () => {
  it('matches torch.expm1, keeping its precision near 0 where exp(x) - 1 cancels', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.fromData([-3.0, -1e-6, 0.0, 1e-7, 0.5, 2.0]);
      const y = x.expm1().toArray();
      const torch = [-0.9502129554748535, -9.999995427278918e-7, 0.0, 1.000000082740371e-7,
        0.6487212777137756, 6.389056205749512];
      for (let i = 0; i < torch.length; ++i) {
        expect(Math.abs(y[i] - torch[i])).toBeLessThanOrEqual(2e-6 * Math.abs(torch[i]) + 1e-12);
      }
      // At 1e-10, exp(x) - 1 in f32 loses x entirely (torch: 0.0); expm1 keeps it
      // (torch.expm1(torch.tensor([1e-10])) = 1.000000013351432e-10).
      const tiny = kiln.Tensor.fromData([1e-10]);
      expect(tiny.exp().sub(1).toArray()[0]).toBe(0);
      expect(Math.abs(tiny.expm1().toArray()[0] - 1.000000013351432e-10)).toBeLessThan(1e-16);
    });
  });

  it('has the gradient g·(y + 1), as PyTorch autograd', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.fromData([[1e-7, -2.5], [0.25, 3.0]]).requireGrad();
      const r = kiln.Tensor.fromData([[1, 2], [3, 4]]);
      const grads = x.expm1().mul(r).sum().backward();
      expectClose(x.grad(grads).dataSync(),
        [1.0000001192092896, 0.1641700267791748, 3.852076292037964, 80.34214782714844]);
      grads.dispose();
    });
  });

  it('is float32 only: an int32 tensor gets a DType error naming expm1', () => {
    kiln.tidy(() => {
      const i = kiln.Tensor.fromData([1, 2], { dtype: 'int32' });
      let caught;
      try {
        i.expm1();
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(KilnError);
      expect(caught.code).toBe('DType');
      expect(caught.message).toMatch(/expm1/);
    });
  });
});
