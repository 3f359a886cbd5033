// Errors: the KilnError class (exported from the package and as kiln.KilnError), C++
// kiln::Error arriving with the same code and message, wrong argument types -> Type,
// foreign tensors, out-of-memory and size limits, and the module staying usable after.
import { beforeAll, describe, expect, it } from 'vitest';
import { init, KilnError } from 'kiln-dl';
import { caught, expectKilnError } from './helpers.mjs';

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});

/** The module still computes correctly. */
function stillWorks() {
  kiln.tidy(() => {
    const c = T.fromData([[1, 2], [3, 4]]);
    expect(c.matmul(c).toArray()).toEqual([[7, 10], [15, 22]]);
  });
}

describe('KilnError', () => {
  it('is one class, exported from the package and the module, extending Error', () => {
    expect(kiln.KilnError).toBe(KilnError);
    const e = new KilnError('Value', 'op: bad');
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('KilnError');
    expect(e.code).toBe('Value');
    expect(e.message).toBe('op: bad');
    expect(String(e)).toBe('KilnError: op: bad');
    expect(e.stack).toContain('KilnError');
  });

  it('carries the C++ code and message (kiln::Error), and the module keeps working', () => {
    kiln.tidy(() => {
      const e = caught(() => T.ones([2, 3]).matmul(T.ones([4, 5])));
      expect(e).toBeInstanceOf(KilnError);
      expect(e.code).toBe('Shape');
      // the engine's own text (engine/src/cpu/ops/matmul_ops.cpp)
      expect(e.message).toBe('matmul: inner dimensions differ: lhs [2, 3] vs rhs [4, 5] (3 != 4)');
      expectKilnError(kiln, () => T.ones([2]).add(T.ones([3])), 'Shape', /^add: /);
      expectKilnError(kiln, () => T.ones([2]).sumDim(3), 'Index', /^sum_dim: dim 3 is out of range/);
      expectKilnError(kiln, () => T.fromData([1, 2], { dtype: 'int32' }).exp(), 'DType', 'exp: expected a f32 tensor, got i32');
      expectKilnError(kiln, () => T.random([2], { uniform: [1, 1] }), 'Value', /uniform/);
    });
    stillWorks();
  });
});

describe('wrong argument types give Type', () => {
  it('a string, number, array or plain object where a tensor is expected', () => {
    kiln.tidy(() => {
      const a = T.ones([2]);
      expectKilnError(kiln, () => a.add('x'), 'Type', 'add: other must be a kiln Tensor, got the string "x"');
      expectKilnError(kiln, () => a.add([1, 2]), 'Type', 'add: other must be a kiln Tensor, got an array');
      expectKilnError(kiln, () => a.add(null), 'Type', 'add: other must be a kiln Tensor, got null');
      expectKilnError(kiln, () => a.matmul(2), 'Type', 'matmul: other must be a kiln Tensor, got the number 2');
      expectKilnError(kiln, () => a.maskWhere({}, a), 'Type', 'maskWhere: mask must be a kiln Tensor, got an object');
      expectKilnError(kiln, () => a.add(1n), 'Type', 'add: other must be a kiln Tensor, got the bigint 1n');
      expectKilnError(kiln, () => T.cat(a), 'Type', 'cat: tensors must be an array of Tensors, got a Tensor');
      // a method called without its tensor
      const add = a.add;
      expectKilnError(kiln, () => add(a), 'Type', 'add: tensor must be a kiln Tensor, got undefined');
      expectKilnError(kiln, () => a.grad(a), 'Type', 'grad: grads must be the Gradients returned by backward(), got a Tensor');
    });
  });

  it('non-integers where dims, shapes and counts are expected', () => {
    kiln.tidy(() => {
      const a = T.ones([2, 3]);
      expectKilnError(kiln, () => a.sumDim('1'), 'Type', 'sumDim: dim must be an integer, got the string "1"');
      expectKilnError(kiln, () => a.softmax(), 'Type', 'softmax: dim must be an integer, got undefined');
      expectKilnError(kiln, () => a.argmax(1.5), 'Type', 'argmax: dim must be an integer, got the number 1.5');
      expectKilnError(kiln, () => a.reshape(6), 'Type', 'reshape: shape must be an array of integers, got the number 6');
      expectKilnError(kiln, () => a.permute([0, '1']), 'Type', 'permute: axes[1] must be an integer, got the string "1"');
      expectKilnError(kiln, () => a.clamp('0', 1), 'Type', 'clamp: min must be a number, got the string "0"');
      expectKilnError(kiln, () => a.narrow(0, 0, '1'), 'Type', 'narrow: length must be an integer, got the string "1"');
      expectKilnError(kiln, () => a.leakyRelu('x'), 'Type', 'leakyRelu: negativeSlope must be a number, got the string "x"');
      expectKilnError(kiln, () => a.maskFill(a.greater(0), 'x'), 'Type', 'maskFill: value must be a number or a boolean, got the string "x"');
      expectKilnError(kiln, () => T.eye('3'), 'Type', 'eye: n must be an integer, got the string "3"');
      expectKilnError(kiln, () => kiln.seed(-0.5), 'Type', 'seed: seed must be an integer, got the number -0.5');
      expectKilnError(kiln, () => a.sort(0, 'desc'), 'Type', 'sort: descending must be a boolean, got the string "desc"');
    });
  });

  it('a tensor of another module instance is not a tensor of this one', async () => {
    const other = await init();
    const foreign = other.Tensor.ones([2]);
    kiln.tidy(() => {
      expectKilnError(kiln, () => T.ones([2]).add(foreign), 'Type', 'add: other must be a kiln Tensor, got a Tensor');
    });
    foreign.dispose();
  });
});

describe('out of memory and size limits', () => {
  it('a size past 2^31 - 1 elements is Limit', () => {
    expectKilnError(kiln, () => T.zeros([1e5, 1e5]), 'Limit',
      'zeros: shape [100000, 100000] has 10000000000 elements, more than the limit of 2147483647');
    stillWorks();
  });

  it('the size errors of creation name the factory the user called, not the engine type', () => {
    // 65536 · 65536 = 2^32 elements (by hand); 3 · 2^31 - 3 = 6442450941 for [3, 2^31 - 1]
    expectKilnError(kiln, () => T.ones([65536, 65536]), 'Limit',
      'ones: shape [65536, 65536] has 4294967296 elements, more than the limit of 2147483647');
    expectKilnError(kiln, () => T.full([3, 2147483647], 7), 'Limit',
      'full: shape [3, 2147483647] has 6442450941 elements, more than the limit of 2147483647');
    expectKilnError(kiln, () => T.random([65536, 65536]), 'Limit',
      'random: shape [65536, 65536] has 4294967296 elements, more than the limit of 2147483647');
    expectKilnError(kiln, () => T.eye(65536), 'Limit',
      'eye: shape [65536, 65536] has 4294967296 elements, more than the limit of 2147483647');
    // 2^29 int32 values = 2^31 bytes: more than half of wasm32's address space
    expectKilnError(kiln, () => T.zeros([536870912], { dtype: 'int32' }), 'OutOfMemory',
      'zeros: shape [536870912] of i32 needs 2147483648 bytes, more than this platform can address');
    stillWorks();
  });

  it('more bytes than wasm32 addresses, or than the heap may grow to, is OutOfMemory', () => {
    expectKilnError(kiln, () => T.zeros([30000, 30000]), 'OutOfMemory',
      'zeros: shape [30000, 30000] of f32 needs 3600000000 bytes, more than this platform can address');
    expectKilnError(kiln, () => T.zeros([600_000_000]), 'OutOfMemory',
      'zeros: shape [600000000] of f32 needs 2400000000 bytes, more than this platform can address');
    // 2^31 - 283,648 bytes: addressable, but the heap (2 GiB at most, stack and data
    // included) cannot grow to hold it: malloc fails (no memory is committed)
    expectKilnError(kiln, () => T.zeros([536_800_000]), 'OutOfMemory', /cannot allocate 2147200000 bytes/);
    // a result too large, from an op (broadcast [32768, 1] + [1, 32768] = 4 GiB)
    kiln.tidy(() => {
      const col = T.zeros([32768, 1]);
      const row = T.zeros([1, 32768]);
      expectKilnError(kiln, () => col.add(row), 'OutOfMemory', /needs 4294967296 bytes/);
    });
    stillWorks();
    expect(kiln.memory().tensors).toBe(0);
  });
});

describe('backendInfo', () => {
  it('reports the single-threaded SIMD build', () => {
    const info = kiln.backendInfo();
    // Node 20 without --experimental-wasm-relaxed-simd: SIMD128 (relaxed: tests/js/relaxed.test.mjs).
    expect(info).toEqual({
      simd: true, threads: 1, maxThreads: 1, adapter: null, arch: 'sse4.1', build: 'simd', backend: 'autodiff<cpu>',
      buildReason: 'SIMD128: this WebAssembly engine does not support relaxed SIMD (f32x4.relaxed_madd)',
      engine: 'full',
      // The split engine's deferred half: loaded once an earlier test called beyond the primary module.
      deferred: expect.stringMatching(/^(pending|loaded)$/),
    });
  });
});
