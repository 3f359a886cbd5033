// Smoke test of the WebAssembly build through the package's public entry, loaded by name
// as a user would (Node resolves "kiln-dl" to this package through its "exports").
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

/** Softmax of one row, by hand in double precision. */
function softmaxRow(row) {
  const max = Math.max(...row);
  const exps = row.map((x) => Math.exp(x - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

function expectClose(actual, expected, digits = 6) {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => expect(actual[i]).toBeCloseTo(e, digits));
}

describe('kiln-dl in Node', () => {
  it('reports SIMD128 kernels (xsimd sse4.1 lowered to wasm simd)', () => {
    expect(kiln.backendInfo().arch).toBe('sse4.1');
    expect(kiln.backendInfo().simd).toBe(true);
  });

  it('keeps the shape and returns the values as a Float32Array copy', () => {
    kiln.tidy(() => {
      const t = kiln.Tensor.fromData(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3] });
      expect(t.shape).toEqual([2, 3]);
      expect(t.rank).toBe(2);
      const values = t.dataSync();
      expect(values).toBeInstanceOf(Float32Array);
      expect(Array.from(values)).toEqual([1, 2, 3, 4, 5, 6]);
      values[0] = 100; // a copy: the tensor does not change
      expect(t.dataSync()[0]).toBe(1);
    });
  });

  it('multiplies two 2x2 matrices', () => {
    kiln.tidy(() => {
      const a = kiln.Tensor.fromData([[1, 2], [3, 4]]);
      const b = kiln.Tensor.fromData([[5, 6], [7, 8]]);
      // [[1*5 + 2*7, 1*6 + 2*8], [3*5 + 4*7, 3*6 + 4*8]]
      expect(a.matmul(b).toArray()).toEqual([[19, 22], [43, 50]]);
    });
  });

  it('computes softmax along the last dim', () => {
    kiln.tidy(() => {
      const rows = [[1, 2, 3], [-1, 0, 4]];
      const x = kiln.Tensor.fromData(rows);
      expectClose(x.softmax(1).dataSync(), rows.flatMap(softmaxRow));
      expectClose(kiln.activation.softmax(x, -1).dataSync(), rows.flatMap(softmaxRow));
    });
  });

  it('throws a KilnError with code Shape when the inner dims differ, and keeps working', () => {
    kiln.tidy(() => {
      const a = kiln.Tensor.zeros([2, 3]);
      const b = kiln.Tensor.zeros([4, 5]);
      let caught;
      try {
        a.matmul(b);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(kiln.KilnError);
      expect(caught).toBeInstanceOf(Error);
      expect(caught.code).toBe('Shape');
      expect(caught.message).toMatch(/^matmul: inner dimensions differ: lhs \[2, 3\] vs rhs \[4, 5\]/);
      const c = kiln.Tensor.fromData([[1, 2], [3, 4]]);
      expect(c.matmul(c).toArray()).toEqual([[7, 10], [15, 22]]);
    });
  });

  it('rejects a result too large for wasm32 with code OutOfMemory, and keeps working', () => {
    kiln.tidy(() => {
      // [32768, 1] + [1, 32768] -> 2^30 floats = 4 GiB: more than wasm32 can address (the
      // byte count once wrapped to 0 in 32-bit size_t and the kernel overwrote the heap).
      const column = kiln.Tensor.zeros([32768, 1]);
      const row = kiln.Tensor.zeros([1, 32768]);
      let caught;
      try {
        column.add(row);
      } catch (e) {
        caught = e;
      }
      expect(caught.code).toBe('OutOfMemory');
      expect(caught.message).toMatch(/needs 4294967296 bytes/);
      const c = kiln.Tensor.fromData([[1, 2], [3, 4]]);
      expect(c.matmul(c).toArray()).toEqual([[7, 10], [15, 22]]);
      expect(Array.from(column.dataSync().subarray(0, 2))).toEqual([0, 0]);
    });
  });

  it('rejects data whose length does not match the shape', () => {
    expect(() => kiln.Tensor.fromData(new Float32Array(5), { shape: [2, 3] })).toThrow(
      expect.objectContaining({ code: 'Shape', message: 'fromData: data has 5 values, shape [2, 3] needs 6' }),
    );
  });

  it('rejects a bad dim of softmax with code Index', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.zeros([2, 3]);
      expect(() => x.softmax(2)).toThrow(expect.objectContaining({ code: 'Index' }));
    });
  });

  it('frees every buffer on dispose, also after errors', () => {
    const before = kiln.memory().buffers;
    kiln.tidy(() => {
      const a = kiln.Tensor.zeros([2, 3]);
      const b = kiln.Tensor.zeros([2, 3]);
      expect(() => a.matmul(b)).toThrow();
      a.add(b);
      expect(kiln.memory().buffers).toBe(before + 3);
    });
    expect(kiln.memory().buffers).toBe(before);
  });
});
