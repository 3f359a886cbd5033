// The error boundary (bindings/js/boundary.ts + `guarded` in bindings/js_tensor.hpp): a
// caught error of any kind leaves the instance exactly as it was. Before the boundary each
// caught engine error kept its call's stack frames (with -fwasm-exceptions nothing restores
// the shadow stack pointer when an exception leaves a wasm export: 880 bytes per matmul
// shape error, 576 per dtype error, ...) and a caught Config error leaked the 64-72 bytes
// of its JSON argument; after ~1,200 errors the 1 MiB stack ran into the heap.
//
// For every kind of error the API can raise (each code; C++-side and JS-side checks;
// Embind's own errors; a JS exception thrown inside wasm), this checks that after EACH of
// the first EXACT errors the stack pointer, the heap size, the malloc'd bytes, the engine's
// buffers and graph nodes are exactly where they were, that after COUNT errors (default
// 100,000 per kind; KILN_ERRORS=1000000 for the million) they still are, and that a fixed
// computation keeps its exact result.
//
// Shared by tests/js/error_boundary_{1,2}.test.mjs, which run half of the kinds each (two
// Vitest workers); part 0 also runs the other boundary tests.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';

const COUNT = Number(process.env.KILN_ERRORS ?? 100_000);
const EXACT = Math.min(COUNT, 1_000);

let kiln;
let T;
let raw;
let unwrap;
let fixed; // per-kind fixtures, made once

/** Every kind: [name, code, the call that must throw]. */
const KINDS = [
  ['matmul shape (C++)', 'Shape', () => fixed.a23.matmul(fixed.b45)],
  ['broadcast shape (C++)', 'Shape', () => fixed.a23.add(fixed.b4)],
  ['reshape (C++)', 'Shape', () => fixed.a23.reshape([7])],
  ['rank (C++)', 'Rank', () => fixed.v2.transpose()],
  ['dtype (C++)', 'DType', () => fixed.int2.exp()],
  ['dim out of range (C++)', 'Index', () => fixed.v2.sumDim(5)],
  ['integer division by zero (C++)', 'Value', () => fixed.int2.div(fixed.int0)],
  ['optimizer config through JSON (C++, was 64-72 bytes leaked)', 'Config', () => kiln.optim.sgd({ lr: -1 })],
  ['optimizer NaN (JS)', 'Config', () => kiln.optim.sgd({ lr: NaN })],
  ['layer spec (C++)', 'Config', () => kiln.nn.sequential([{ type: 'linear', dInput: 0, dOutput: 2 }])],
  ['size limit (C++)', 'Limit', () => T.zeros([100000, 100000])],
  ['malformed SafeTensors (C++)', 'Format', () => fixed.model.loadSafetensors(new Uint8Array([1, 2, 3]))],
  ['backward twice (C++)', 'State', () => fixed.tracked.backward()],
  ['non-finite training step (C++)', 'NonFinite', () => fixed.learner.trainBatch(fixed.nanX, fixed.label, 1)],
  ['disposed tensor (JS)', 'Disposed', () => fixed.disposedTensor.add(1)],
  ['disposed model (JS)', 'Disposed', () => fixed.disposedModel.forward(fixed.x22)],
  ['bad argument (JS)', 'Type', () => T.fromData('abc')],
  ['bad shape entry (C++ check of a JS value)', 'Type', () => raw.tFull(['x'], 0, 0, 'full')],
  ['Embind: deleted handle', 'Disposed', () => raw.tUnary(0, fixed.deletedHandle)],
  ['Embind: wrong argument count', 'Type', () => raw.tMatmul(unwrap(fixed.v2, 'test'))],
  ['Embind: wrong class', 'Type', () => raw.tMatmul({}, {})],
  ['JS exception inside wasm', 'Type', () => raw.tFromTypedArray(null, [2], 0)],
];

/** Everything an error could wear down. */
function state() {
  const m = raw.memoryStats();
  return {
    stackPointer: raw.stackSave(), heapBytes: m.heapBytes, mallocBytes: m.mallocBytes,
    bytes: m.bytes, buffers: m.buffers, graphNodes: m.graphNodes, tensors: kiln.memory().tensors,
  };
}

/** The fixed computation: exact values known by hand, plus float bits of exp/softmax. */
function compute() {
  return kiln.tidy(() => {
    const a = T.fromData([[1, 2], [3, 4]]);
    const b = T.fromData([[5, 6], [7, 8]]);
    const out = {
      matmul: Array.from(a.matmul(b).dataSync()), // [[19, 22], [43, 50]]
      add: Array.from(T.fromData([1, 2]).add(1).dataSync()), // [2, 3]
      ints: Array.from(T.arange(0, 5).mul(3).dataSync()), // [0, 3, 6, 9, 12]
      expBits: Array.from(new Uint32Array(T.fromData([0.5, -1.25, 3]).exp().softmax(0).dataSync().buffer)),
      forward: Array.from(fixed.model.forward(fixed.x22).dataSync()),
    };
    return out;
  });
}

/** Runs fn, which must throw a KilnError of `code`; returns nothing (fast path). */
function expectThrows(fn, code, name, i) {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof kiln.KilnError) || e.code !== code) {
      throw new Error(`${name}, error ${i}: expected KilnError ${code}, got ${e?.name} ${e?.code}: ${e?.message}`);
    }
    return e;
  }
  throw new Error(`${name}, error ${i}: did not throw`);
}

/**
 * Defines the suite's tests: the kinds with index % parts === part, and (part 0) the rest.
 * @param {number} part @param {number} parts
 */
export function defineErrorBoundarySuite(part, parts) {
  beforeAll(async () => {
    kiln = await init();
    T = kiln.Tensor;
    raw = kiln._internals.raw;
    unwrap = kiln._internals.unwrap;
    const model = kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 2 }]);
    const disposedModel = kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 2 }]);
    disposedModel.dispose();
    const disposedTensor = T.ones([2]);
    disposedTensor.dispose();
    const deletedHandle = raw.tFull([2], 1, 0, 'full');
    deletedHandle.delete();
    const learner = new kiln.Learner(kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 2 }]),
      { optimizer: kiln.optim.sgd({ lr: 0.1 }) });
    fixed = {
      a23: T.ones([2, 3]), b45: T.ones([4, 5]), b4: T.ones([4]), v2: T.ones([2]),
      int2: T.fromData([1, 2], { dtype: 'int32' }), int0: T.fromData([0, 0], { dtype: 'int32' }),
      model, disposedModel, disposedTensor, deletedHandle, learner,
      x22: T.ones([1, 2]),
      nanX: Float32Array.from([NaN, 1]), label: Int32Array.from([0]),
      tracked: null,
    };
    const x = T.fromData([1, 2]).requireGrad();
    const loss = x.mul(x).sum();
    loss.backward().dispose();
    fixed.tracked = loss; // its graph was released by the backward above
  });

  describe('caught errors leave the instance exactly as it was', () => {
    let reference;
    beforeAll(() => {
      reference = compute();
      expect(reference.matmul).toEqual([19, 22, 43, 50]);
      expect(reference.add).toEqual([2, 3]);
      expect(reference.ints).toEqual([0, 3, 6, 9, 12]);
    });

    for (const [name, code, fn] of KINDS.filter((_, k) => k % parts === part)) {
      it(`${name}: ${code}, ${COUNT} errors`, () => {
        // Warm-up: first-use allocations (static tables, the type-name cache of Embind).
        for (let i = 0; i < 3; i++) expectThrows(fn, code, name, i);
        const before = state();
        // Capturing JS stack traces is most of an error's cost here; the errors are the same.
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0;
        try {
          for (let i = 0; i < EXACT; i++) {
            expectThrows(fn, code, name, i);
            const now = state();
            if (JSON.stringify(now) !== JSON.stringify(before)) {
              expect({ error: i, ...now }).toEqual({ error: i, ...before });
            }
          }
          const sp = before.stackPointer;
          for (let i = EXACT; i < COUNT; i++) {
            expectThrows(fn, code, name, i);
            if (raw.stackSave() !== sp) expect({ error: i, stackPointer: raw.stackSave() }).toEqual({ error: i, stackPointer: sp });
            if (i % 10_000 === 0) expect(state()).toEqual(before);
          }
        } finally {
          Error.stackTraceLimit = limit;
        }
        expect(state()).toEqual(before);
        expect(compute()).toEqual(reference);
      }, Math.max(120_000, COUNT * 0.5));
    }

    if (part === 0) it('an error thrown by a fit() callback is the caller\'s own error, and costs nothing', async () => {
      const model = kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 2 }]);
      const learner = new kiln.Learner(model, { optimizer: kiln.optim.sgd({ lr: 0.1 }) });
      const data = kiln.data.fromArrays(Float32Array.from([0, 0, 0, 1, 1, 0, 1, 1]), Int32Array.from([0, 1, 1, 0]), { itemShape: [2] });
      const mine = new Error('mine');
      await learner.fit(data, { epochs: 1, batchSize: 2, onBatchEnd: () => { throw mine; } }).catch(() => {});
      const before = state();
      for (let i = 0; i < 50; i++) {
        await expect(learner.fit(data, { epochs: 1, batchSize: 2, onBatchEnd: () => { throw mine; } })).rejects.toBe(mine);
      }
      // The stack exactly; the heap within one small allocation over the 50 rejected fits (the
      // learner's own state may grow a vector once; a block leaked per rejected fit would add
      // 400 or more). Measured with dlmalloc: 24 bytes after 50 fits and the same after 200.
      // With emmalloc, whose used bytes also count block headers (free blocks' too) and tails
      // too small to split off: 40 after 50 fits, 84 after 100, 92 after 200, 80 after 800, so
      // bounded: where blocks land, not a leak.
      const after = state();
      expect(after.stackPointer).toBe(before.stackPointer);
      expect({ ...after, mallocBytes: 0 }).toEqual({ ...before, mallocBytes: 0 });
      expect(after.mallocBytes - before.mallocBytes).toBeLessThanOrEqual(128);
      learner.dispose();
      data.dispose();
      model.dispose();
    });

    if (part === 0) it('disposing a dataset while fit() runs makes fit reject with Disposed (was an Embind BindingError)', async () => {
      const model = kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 2 }]);
      const learner = new kiln.Learner(model, { optimizer: kiln.optim.sgd({ lr: 0.1 }) });
      const x = Float32Array.from([0, 0, 0, 1, 1, 0, 1, 1]);
      const y = Int32Array.from([0, 1, 1, 0]);
      for (const which of ['train', 'validation']) {
        const train = kiln.data.fromArrays(x, y, { itemShape: [2] });
        const valid = kiln.data.fromArrays(x, y, { itemShape: [2] });
        const before = state();
        const victim = which === 'train' ? train : valid;
        const run = learner.fit(train, {
          epochs: 3, batchSize: 2, validationData: valid,
          onBatchEnd: () => { if (!victim.isDisposed) victim.dispose(); },
        });
        const e = await run.then(() => null, (err) => err);
        expect(e).toBeInstanceOf(kiln.KilnError);
        expect({ code: e.code, message: e.message }).toEqual({
          code: 'Disposed',
          message: `Learner.fit: the dataset was disposed`,
        });
        if (!train.isDisposed) train.dispose();
        if (!valid.isDisposed) valid.dispose();
        // The learner's last epoch keeps its data until the next beginEpoch: compare the stack only.
        expect(raw.stackSave()).toBe(before.stackPointer);
      }
      learner.dispose();
      model.dispose();
    });
  });

  if (part === 0) describe('every engine entry point is behind the boundary', () => {
    it('wraps each Embind function and class method of the module', () => {
      const unwrapped = [];
      let wrapped = 0;
      for (const [name, v] of Object.entries(raw)) {
        if (typeof v !== 'function') continue;
        if (typeof v.prototype?.isAliasOf === 'function') {
          for (const m of Object.getOwnPropertyNames(v.prototype)) {
            if (['constructor', 'delete', 'isDeleted', 'clone', 'isAliasOf', 'deleteLater'].includes(m)) continue;
            if (v.prototype[m].kilnBoundary === true) wrapped++;
            else unwrapped.push(`${v.name}.${m}`);
          }
        } else if (v.kilnBoundary === true) {
          wrapped++;
        } else if ('argCount' in v && name !== 'takeError') {
          unwrapped.push(name); // an Embind function (Embind sets argCount) left unwrapped
        }
      }
      expect(unwrapped).toEqual([]);
      // RawTensor, RawGradients, RawModel, RawOptimizer, RawDataset, RawLearner methods and
      // the t*/model*/optimizer*/dataset*/learner*/loss* functions: well over a hundred.
      expect(wrapped).toBeGreaterThan(100);
    });

    it('shows NaN and Infinity as JavaScript writes them, not nan/inf', () => {
      for (const [end, shown] of [[NaN, 'NaN'], [Infinity, 'Infinity'], [-Infinity, '-Infinity']]) {
        const e = (() => { try { T.arange(0, end); } catch (err) { return err; } return null; })();
        expect(e).toBeInstanceOf(kiln.KilnError);
        expect(e.message).toBe(`arange: expected finite start, end and a non-zero step, got start 0, end ${shown}, step 1`);
      }
    });
  });

  if (part === 0) describe('errors name the user\'s call and value', () => {
    const err = (fn) => {
      try {
        fn();
      } catch (e) {
        expect(e).toBeInstanceOf(kiln.KilnError);
        return { code: e.code, message: e.message };
      }
      throw new Error('expected a throw');
    };

    it('NaN in an optimizer config is a Config error naming the field (was Type)', () => {
      expect(err(() => kiln.optim.sgd({ lr: NaN }))).toEqual({ code: 'Config', message: 'optim.sgd: lr: expected a finite number, got NaN' });
      expect(err(() => kiln.optim.adam({ lr: 0.1, beta1: NaN }))).toEqual({ code: 'Config', message: 'optim.adam: beta1: expected a finite number, got NaN' });
      expect(err(() => kiln.optim.sgd({ lr: 0.1, momentum: NaN }))).toEqual({ code: 'Config', message: 'optim.sgd: momentum: expected a finite number, got NaN' });
      expect(err(() => kiln.optim.sgd({ lr: 'x' }))).toEqual({ code: 'Type', message: 'optim.sgd: lr must be a number or a kiln.optim.schedule, got the string "x"' });
    });

    it('optimizer and schedule checks of the engine name the JS call, not the C++ config type', () => {
      const sgd = err(() => kiln.optim.sgd({ lr: -1 }));
      expect(sgd.code).toBe('Config');
      expect(sgd.message).toBe('optim.sgd: lr: lr must be finite and >= 0, got -1');
      expect(err(() => kiln.optim.schedule.cosine({ initialLr: 1, numIters: 0 })).message)
        .toBe('optim.schedule.cosine: numIters must be >= 1, got 0');
      expect(err(() => kiln.optim.schedule.noam({ factor: 1, warmupSteps: 0, modelSize: 4 })).message)
        .toMatch(/^optim\.schedule\.noam: warmupSteps must be >= 1, got 0/);
      for (const m of [sgd.message]) expect(m).not.toMatch(/Config::|LrScheduler/);
    });

    it('a Tensor method called on something else is a Type error naming the method', () => {
      const t = T.ones([2]);
      const f = t.exp;
      t.dispose();
      expect(err(() => f())).toEqual({ code: 'Type', message: 'exp: tensor must be a kiln Tensor, got undefined' });
      expect(err(() => T.prototype.sumDim.call(5, 0))).toEqual({ code: 'Type', message: 'sumDim: tensor must be a kiln Tensor, got the number 5' });
    });

    it('toArray of a tensor whose nested arrays would not fit the JS heap is a Limit error', () => {
      const t = T.zeros([2147483647, 0, 4]);
      expect(err(() => t.toArray())).toEqual({
        code: 'Limit',
        message: 'toArray: shape [2147483647, 0, 4] would build 2147483647 nested arrays and values, more than the limit of 33554432 (dataSync() gives the values as one typed array)',
      });
      expect(t.dataSync().length).toBe(0);
      t.dispose();
      const ok = T.zeros([2, 0, 4]);
      expect(ok.toArray()).toEqual([[], []]);
      ok.dispose();
    });

    it('Dataset.split(NaN) is a Value error (NaN is outside [0, 1])', () => {
      const d = kiln.data.fromArrays(new Float32Array(4), Int32Array.from([0, 1]), { itemShape: [2] });
      expect(err(() => d.split(NaN))).toEqual({ code: 'Value', message: 'Dataset.split: fraction must be in [0, 1], got NaN' });
      d.dispose();
    });
  });

  if (part === 0) describe('toKilnError: what crosses the boundary other than the engine\'s own errors', () => {
    it('maps a wasm trap, Embind errors and a JS stack overflow to KilnErrors with a code', async () => {
      const { toKilnError, jsNumbers } = await import('../../../dist/boundary.js');
      const named = (name, message) => Object.assign(new Error(message), { name });
      const cases = [
        [new WebAssembly.RuntimeError('divide by zero'), 'Internal', 'tReshape: RuntimeError: divide by zero (a bug in the engine: please report it)'],
        [new WebAssembly.RuntimeError('memory access out of bounds'), 'Internal', 'tReshape: RuntimeError: memory access out of bounds (a bug in the engine: please report it)'],
        [named('BindingError', 'Cannot pass deleted object as a pointer of type RawTensor'), 'Disposed',
          'tReshape: an object passed to the engine was disposed (Cannot pass deleted object as a pointer of type RawTensor)'],
        [named('BindingError', 'function tReshape called with 1 arguments, expected 2 args!'), 'Type',
          'tReshape: the engine rejected an argument: function tReshape called with 1 arguments, expected 2 args!'],
        [new TypeError('Cannot convert "x" to int'), 'Type', 'tReshape: the engine rejected an argument: Cannot convert "x" to int'],
        [new RangeError('Maximum call stack size exceeded'), 'Limit', 'tReshape: the JavaScript call stack overflowed (Maximum call stack size exceeded)'],
        [new RangeError('Invalid typed array length: -1'), 'Internal', 'tReshape: RangeError: Invalid typed array length: -1 (a bug in the engine: please report it)'],
        ['a string', 'Internal', 'tReshape: string: a string (a bug in the engine: please report it)'],
      ];
      for (const [err, code, message] of cases) {
        const k = toKilnError(err, 'tReshape');
        expect(k).toBeInstanceOf(kiln.KilnError);
        expect({ code: k.code, message: k.message }).toEqual({ code, message });
      }
      const own = new kiln.KilnError('Shape', 'x');
      expect(toKilnError(own, 'tReshape')).toBe(own);
      expect(jsNumbers('got nan, -nan, inf and -inf; info, nanos, 1.5inf')).toBe('got NaN, NaN, Infinity and -Infinity; info, nanos, 1.5inf');
    });
  });
}
