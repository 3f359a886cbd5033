// Size arithmetic in the WebAssembly build (size_t is 32 bits there): extents whose
// products overflow int64 or pass the 2^31 - 1 element limit are a KilnError `Limit` (or
// the `Shape` error a bad reshape always was) naming the op and the sizes, thrown before
// anything is written, and the instance computes exactly afterwards. Before the checks,
// adaptiveAvgPool2d to [65536, 65536] wrapped its per-channel scratch size to 0 and wrote
// out of bounds, and a reshape spec [2^32, 2^32, -1] divided by zero (a trap).
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});

/** Expects f to throw a KilnError with `code` whose message contains every part. */
function expectKilnError(f, code, ...parts) {
  let error;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error, 'expected a KilnError').toBeInstanceOf(kiln.KilnError);
  expect(error.code, error.message).toBe(code);
  for (const p of parts) expect(error.message).toContain(p);
  return error;
}

/**
 * The instance still computes exactly and holds no tensor more than `tensors`:
 * [[1, 2], [3, 4]]² = [[7, 10], [15, 22]]; adaptive average pooling of 0..15 (4x4) to 2x2
 * averages each 2x2 block: [[2.5, 4.5], [10.5, 12.5]] (by hand).
 */
function expectExact(tensors) {
  kiln.tidy(() => {
    const a = T.fromData([[1, 2], [3, 4]]);
    expect(a.matmul(a).toArray()).toEqual([[7, 10], [15, 22]]);
    const x = T.fromData([...Array(16).keys()]).reshape([1, 1, 4, 4]);
    const pool = kiln.nn.adaptiveAvgPool2d({ outputSize: [2, 2] });
    expect(pool.forward(x).toArray()).toEqual([[[[2.5, 4.5], [10.5, 12.5]]]]);
    pool.dispose();
  });
  expect(kiln.memory().tensors).toBe(tensors);
}

describe('size overflow in the WebAssembly build', () => {
  it('adaptiveAvgPool2d to [65536, 65536] is Limit, not a write out of bounds', () => {
    const before = kiln.memory().tensors;
    const x = T.ones([1, 1, 4, 4]);
    const pool = kiln.nn.adaptiveAvgPool2d({ outputSize: [65536, 65536] });
    // 65536 · 65536 = 4294967296 elements per channel (0 in a 32-bit size_t)
    expectKilnError(() => pool.forward(x), 'Limit',
      'output size [65536, 65536] per channel gives 4294967296 elements, more than the limit of 2147483647');
    // 46341² = 2147488281, the first square past 2^31 - 1
    const pool2 = kiln.nn.adaptiveAvgPool2d({ outputSize: [46341, 46341] });
    expectKilnError(() => pool2.forward(x), 'Limit', 'gives 2147488281 elements');
    // [2^28, 1] fits the element and byte limits per channel (1 GiB), but its table of
    // 2^28 row windows (24 bytes each: 6 GiB) does not fit wasm32's size_t
    const pool3 = kiln.nn.adaptiveAvgPool2d({ outputSize: [2 ** 28, 1] });
    expectKilnError(() => pool3.forward(x), 'Limit',
      'adaptiveAvgPool2d: the table of output rows needs 268435456 · 24 bytes, more than the limit of 2147483647 bytes');
    pool.dispose();
    pool2.dispose();
    pool3.dispose();
    x.dispose();
    expectExact(before);
  });

  it('a reshape spec [2^32, 2^32, -1] is Limit, not a division by zero', () => {
    const before = kiln.memory().tensors;
    // 2^32 · 2^32 = 2^64 wrapped to 0 and 16 % 0 trapped
    expectKilnError(() => kiln.nn.sequential({
      layers: [{ type: 'reshape', shape: [16] }, { type: 'reshape', shape: [2 ** 32, 2 ** 32, -1] }],
    }), 'Limit', 'layers[1] (reshape): the product of shape [4294967296, 4294967296, -1] = 4294967296 · 4294967296 overflows int64');
    // the tensor op: the overflowing product is a Shape error
    kiln.tidy(() => {
      expectKilnError(() => T.ones([16]).reshape([2 ** 32, 2 ** 32, -1]), 'Shape',
        'reshape: cannot view [16] (16 elements) as [4294967296, 4294967296, -1]', 'an overflowing product');
    });
    // items of 2^32 elements (0 in a 32-bit size_t) cannot be reshaped
    expectKilnError(() => kiln.nn.sequential({
      layers: [{ type: 'reshape', shape: [65536, 65536] }, { type: 'reshape', shape: [-1] }],
    }), 'Limit', 'items [65536, 65536] gives 4294967296 elements');
    expectExact(before);
  });

  it('conv2d with a huge dilation, padding or output is Limit', () => {
    const before = kiln.memory().tensors;
    // dilation 2^52 · (kernel 2049 - 1) = 2^63 overflows int64 (JS integers stop at 2^53)
    expectKilnError(() => kiln.nn.sequential({
      layers: [{ type: 'reshape', shape: [1, 6, 6] },
        { type: 'conv2d', channels: [1, 1], kernelSize: [2049, 1], dilation: [2 ** 52, 1] }],
    }), 'Limit', 'layers[1] (conv2d): dilation · (kernelSize - 1) in the height = 4503599627370496 · 2048 overflows int64');
    kiln.tidy(() => {
      const conv = kiln.nn.conv2d({ channels: [1, 1], kernelSize: [2049, 1], dilation: [2 ** 52, 1] });
      expectKilnError(() => conv.forward(T.ones([1, 1, 5, 5])), 'Limit',
        'dilation · (kernel - 1) in spatial dim 0 = 4503599627370496 · 2048 overflows int64');
      // padding 30000: out = 1 + 60000 - 1 + 1 = 60001 per dim, 60001² = 3600120001 elements
      const padded = kiln.nn.conv2d({ channels: [1, 1], kernelSize: 1, padding: [30000, 30000] });
      expectKilnError(() => padded.forward(T.ones([1, 1, 1, 1])), 'Limit',
        'output shape [1, 1, 60001, 60001] gives 3600120001 elements');
      conv.dispose();
      padded.dispose();
    });
    expectExact(before);
  });

  it('zeros, broadcasting and matmul past the element limit are Limit', () => {
    const before = kiln.memory().tensors;
    expectKilnError(() => T.zeros([65536, 65536]), 'Limit', '[65536, 65536] has 4294967296 elements');
    kiln.tidy(() => {
      const col = T.zeros([65536, 1]);
      const row = T.zeros([1, 65536]);
      expectKilnError(() => col.add(row), 'Limit', 'broadcast shape [65536, 65536] gives 4294967296 elements');
      const a = T.zeros([65536, 1, 1, 1]);
      const b = T.zeros([1, 65536, 1, 1]);
      expectKilnError(() => a.matmul(b), 'Limit', 'matmul: output shape [65536, 65536, 1, 1] gives 4294967296 elements');
      expectKilnError(() => T.ones([2, 3]).repeat([1 << 20, 1 << 20]), 'Limit',
        'output shape [2097152, 3145728] gives 6597069766656 elements');
    });
    expectExact(before);
  });

  it('a dataset item of 2^32 elements is Limit, not a division by zero', () => {
    const before = kiln.memory().tensors;
    // itemShape [65536, 65536]: the item size wrapped to 0 in size_t and x.length % 0 trapped
    expectKilnError(() => kiln.data.fromArrays(new Float32Array(4), new Int32Array(1), { itemShape: [65536, 65536] }),
      'Limit', 'itemShape [65536, 65536] gives 4294967296 elements');
    const d = kiln.data.fromArrays(new Float32Array([1, 2, 3, 4]), new Int32Array([0, 1]), { itemShape: [2] });
    expect(d.length).toBe(2);
    d.dispose();
    expectExact(before);
  });

  it('fit with batchSize 2^32 - 1 counts one batch per epoch (len + batchSize - 1 wrapped to 2)', async () => {
    const model = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 2, dOutput: 2 }] }, { seed: 1 });
    const learner = new kiln.Learner(model, { optimizer: kiln.optim.sgd({ lr: 0.1 }) });
    const data = kiln.data.fromArrays(new Float32Array([0, 0, 0, 1, 1, 0, 1, 1]), new Int32Array([0, 1, 1, 0]),
      { itemShape: [2] });
    const seen = [];
    // ceil(4 / (2^32 - 1)) = 1 batch of the 4 items; in 32 bits 4 + 2^32 - 2 wrapped to 2: 0 batches
    await learner.fit(data, { epochs: 1, batchSize: 2 ** 32 - 1, onBatchEnd: (e) => { seen.push([e.batch, e.numBatches]); } });
    expect(seen).toEqual([[1, 1]]);
    expect(learner.steps).toBe(1);
    const ev = learner.evaluate(data, { batchSize: 2 ** 32 - 1 });
    expect(Number.isFinite(ev.loss)).toBe(true);
    learner.dispose();
    model.dispose();
    data.dispose();
  });
});
