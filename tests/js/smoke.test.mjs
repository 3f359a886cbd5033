// Smoke test of the WebAssembly build through the package's public entry, loaded by name
// as a user would (Node resolves "kiln-dl" to this package through its "exports").
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

/** Runs fn(track) and disposes every tensor passed to track afterwards. */
function scoped(fn) {
  const tensors = [];
  try {
    return fn((t) => {
      tensors.push(t);
      return t;
    });
  } finally {
    for (const t of tensors) t.dispose();
  }
}

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
    expect(kiln.simdArch()).toBe('sse4.1');
  });

  it('keeps the shape and returns the values as a Float32Array copy', () => {
    scoped((track) => {
      const t = track(new kiln.Tensor(new Float32Array([1, 2, 3, 4, 5, 6]), [2, 3]));
      expect(t.shape).toEqual([2, 3]);
      expect(t.rank).toBe(2);
      const values = t.toArray();
      expect(values).toBeInstanceOf(Float32Array);
      expect(Array.from(values)).toEqual([1, 2, 3, 4, 5, 6]);
      values[0] = 100; // a copy: the tensor does not change
      expect(t.toArray()[0]).toBe(1);
    });
  });

  it('multiplies two 2x2 matrices', () => {
    scoped((track) => {
      const a = track(new kiln.Tensor(new Float32Array([1, 2, 3, 4]), [2, 2]));
      const b = track(new kiln.Tensor(new Float32Array([5, 6, 7, 8]), [2, 2]));
      const c = track(a.matmul(b));
      // [[1*5 + 2*7, 1*6 + 2*8], [3*5 + 4*7, 3*6 + 4*8]]
      expect(c.shape).toEqual([2, 2]);
      expect(Array.from(c.toArray())).toEqual([19, 22, 43, 50]);
    });
  });

  it('computes softmax along the last dim', () => {
    scoped((track) => {
      const rows = [
        [1, 2, 3],
        [-1, 0, 4],
      ];
      const x = track(new kiln.Tensor(new Float32Array(rows.flat()), [2, 3]));
      const y = track(x.softmax(1));
      expect(y.shape).toEqual([2, 3]);
      expectClose(y.toArray(), rows.flatMap(softmaxRow));
      const yNeg = track(x.softmax(-1));
      expectClose(yNeg.toArray(), rows.flatMap(softmaxRow));
    });
  });

  it('throws an Error with code Shape when the inner dims differ, and keeps working', () => {
    scoped((track) => {
      const a = track(new kiln.Tensor(new Float32Array(6), [2, 3]));
      const b = track(new kiln.Tensor(new Float32Array(20), [4, 5]));
      let caught;
      try {
        a.matmul(b);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(Error);
      expect(caught.code).toBe('Shape');
      expect(caught.message).toMatch(/^matmul: inner dimensions differ: lhs \[2, 3\] vs rhs \[4, 5\]/);

      // The module is still usable after the error.
      const c = track(new kiln.Tensor(new Float32Array([1, 2, 3, 4]), [2, 2]));
      expect(Array.from(track(c.matmul(c)).toArray())).toEqual([7, 10, 15, 22]);
    });
  });

  it('rejects a result too large for wasm32 with code OutOfMemory, and keeps working', () => {
    scoped((track) => {
      // [32768, 1] + [1, 32768] -> 2^30 floats = 4 GiB: more than wasm32 can address (the
      // byte count once wrapped to 0 in 32-bit size_t and the kernel overwrote the heap).
      const column = track(new kiln.Tensor(new Float32Array(32768), [32768, 1]));
      const row = track(new kiln.Tensor(new Float32Array(32768), [1, 32768]));
      let caught;
      try {
        column.add(row);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(Error);
      expect(caught.code).toBe('OutOfMemory');
      expect(caught.message).toMatch(/needs 4294967296 bytes/);
      const c = track(new kiln.Tensor(new Float32Array([1, 2, 3, 4]), [2, 2]));
      expect(Array.from(track(c.matmul(c)).toArray())).toEqual([7, 10, 15, 22]);
      expect(Array.from(column.toArray().subarray(0, 2))).toEqual([0, 0]);
    });
  });

  it('rejects data whose length does not match the shape', () => {
    expect(() => new kiln.Tensor(new Float32Array(5), [2, 3])).toThrow(
      expect.objectContaining({
        code: 'Shape',
        message: 'Tensor: data has 5 values, shape [2, 3] needs 6',
      }),
    );
  });

  it('rejects a bad dim of softmax with code Index', () => {
    scoped((track) => {
      const x = track(new kiln.Tensor(new Float32Array(6), [2, 3]));
      expect(() => x.softmax(2)).toThrow(expect.objectContaining({ code: 'Index' }));
      expect(() => x.softmax(1e300)).toThrow(
        expect.objectContaining({ code: 'Index', message: 'softmax: dim 1e+300 is out of range' }),
      );
    });
  });

  it('frees every buffer on dispose, also after errors', () => {
    const before = kiln.memory().liveBuffers;
    scoped((track) => {
      const a = track(new kiln.Tensor(new Float32Array(6), [2, 3]));
      const b = track(new kiln.Tensor(new Float32Array(6), [2, 3]));
      expect(() => a.matmul(b)).toThrow();
      track(a.add(b));
      expect(kiln.memory().liveBuffers).toBe(before + 3);
    });
    expect(kiln.memory().liveBuffers).toBe(before);
  });
});
