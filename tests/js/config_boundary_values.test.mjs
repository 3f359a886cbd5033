// Configs and specs cross into the engine as JS values, not JSON text (issue 17: no JSON
// parser in the module a page downloads; bindings/config_js.hpp). The engine must read a
// value exactly as it read the JSON text of it: an integer-valued number is an integer when
// it fits in 64 bits (as its digits would parse), anything else a float; the limits of
// config::parse (nesting depth, max_layers) hold; and a value JSON cannot carry, handed to the
// raw engine directly, is a Config error naming it and where it is, not a crash or a silent
// null. User code that runs while the engine reads a value (a getter, a Proxy trap) cannot
// call into the engine or free what the running call holds: KilnError `Busy`, nothing lost.
// Expected messages are written by hand from those rules.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
let raw;
beforeAll(async () => {
  kiln = await init();
  raw = kiln._internals.raw;
});

function stillExact() {
  kiln.tidy(() => {
    // [[1, 2], [3, 4]] · [[1, 2], [3, 4]] = [[7, 10], [15, 22]] (by hand)
    const a = kiln.Tensor.fromData([[1, 2], [3, 4]]);
    expect(a.matmul(a).toArray()).toEqual([[7, 10], [15, 22]]);
  });
}

const layer0 = 'SequentialConfig: layers[0] (linear): dInput';

describe('numbers read as the JSON text of them would be', () => {
  it('an integer-valued number within 64 bits is an integer; beyond, or fractional, a float', () => {
    // 2.5: a float. -1: a signed integer (the range check speaks). 2^63: an unsigned integer
    // past int64's range. 2^64 (JSON.stringify: 18446744073709552000, past uint64): a float.
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 2.5, dOutput: 3 }), 'Config',
      `${layer0}: expected an integer, got the number 2.5`);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: -1, dOutput: 3 }), 'Config', `${layer0} must be >= 1, got -1`);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 2 ** 63, dOutput: 3 }), 'Config',
      `${layer0}: expected an integer in [-9223372036854775808, 9223372036854775807], got the integer 9223372036854775808`);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: -(2 ** 63), dOutput: 3 }), 'Config',
      `${layer0} must be >= 1, got -9223372036854775808`);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 2 ** 64, dOutput: 3 }), 'Config',
      `${layer0}: expected an integer, got the number 1.8446744073709552e+19`);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 1e300, dOutput: 3 }), 'Config',
      `${layer0}: expected an integer, got the number 1e+300`);
    stillExact();
  });

  it('-0 is the integer 0 and a float field takes an integer', () => {
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: -0, dOutput: 3 }), 'Config', `${layer0} must be >= 1, got 0`);
    // lr 1 (an integer in the value) is the rate 1: rates 1, 1, 0.5, 0.5, 0.25 (by hand).
    const s = kiln.optim.schedule.step({ initialLr: 1, stepSize: 2, gamma: 0.5 });
    expect(Array.from(s.values(5))).toEqual([1, 1, 0.5, 0.5, 0.25]);
  });
});

describe('the limits of config::parse hold for values', () => {
  it('a spec of more than max_layers layers is Limit before any layer is built', () => {
    const layers = Array.from({ length: 4097 }, () => ({ type: 'relu' }));
    expectKilnError(kiln, () => kiln.nn.sequential({ layers }), 'Limit',
      'JSON string: the array at layers has more than 4096 elements (the limit of SequentialConfig::maxLayers)');
    stillExact();
  });

  it("a value nested deeper than 64 levels is Limit, naming where (the object and 63 arrays fit)", () => {
    let deep = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    expectKilnError(kiln, () => raw.lossValidate({ kind: 'mse', extra: deep }), 'Limit',
      /^loss: JSON nested deeper than 64 arrays\/objects \(the limit of config::ParseLimits::max_depth\) at extra(\[0\]){63}$/);
    stillExact();
  });
});

describe('values JSON cannot carry, handed to the raw engine', () => {
  it('undefined, a function or a non-finite number is Config naming it', () => {
    expectKilnError(kiln, () => raw.modelCreate(undefined, -1, false), 'Config',
      'JSON string: expected a JSON value (null, boolean, number, string, array or object), got undefined');
    expectKilnError(kiln, () => raw.lossValidate({ kind: 'huber', delta: () => 1 }), 'Config',
      'loss: delta: expected a JSON value (null, boolean, number, string, array or object), got function');
    expectKilnError(kiln, () => raw.lossValidate({ kind: 'huber', delta: NaN }), 'Config',
      'loss: delta: expected a finite number, got NaN');
    expectKilnError(kiln, () => raw.scheduleValues(-Infinity, 1), 'Config', 'schedule: expected a finite number, got -Infinity');
    stillExact();
  });

  it('a well-formed value passes: the raw schedule of a plain number is a constant rate', () => {
    expect(Array.from(raw.scheduleValues(0.25, 3))).toEqual([0.25, 0.25, 0.25]);
    expect(Array.from(raw.scheduleValues({ kind: 'step', initial_lr: 1, step_size: 1, gamma: 0.5 }, 3))).toEqual([1, 0.5, 0.25]);
  });
});

describe('values JSON cannot carry, and where they are', () => {
  it('a hole, a Date, a Map or a boxed number is Config naming its path', () => {
    // eslint-disable-next-line no-sparse-arrays
    expectKilnError(kiln, () => raw.modelCreate({ layers: [, 1] }, -1, false), 'Config',
      'JSON string: layers[0]: expected a JSON value (null, boolean, number, string, array or object), got undefined');
    expectKilnError(kiln, () => raw.lossValidate({ kind: 'mse', extra: { at: new Date(0) } }), 'Config',
      'loss: extra.at: expected a plain object or array, got [object Date]');
    expectKilnError(kiln, () => raw.lossValidate({ kind: 'mse', extra: [new Map()] }), 'Config',
      'loss: extra[0]: expected a plain object or array, got [object Map]');
    expectKilnError(kiln, () => raw.scheduleValues(new Number(0.5), 1), 'Config',
      'schedule: expected a plain object or array, got [object Number]');
    // An object without a prototype is plain: read as any other ({kind: 'mse'} is a loss).
    expect(() => raw.lossValidate(Object.assign(Object.create(null), { kind: 'mse' }))).not.toThrow();
    stillExact();
  });

  it('a lone UTF-16 surrogate in a string or key is Config (JSON text of it is no UTF-8)', () => {
    expectKilnError(kiln, () => raw.lossValidate({ kind: 'mse', reduction: 'mean\uD800' }), 'Config',
      'loss: reduction: a string holds a lone UTF-16 surrogate (not valid Unicode text)');
    expectKilnError(kiln, () => raw.lossValidate({ kind: 'mse', x: { ['\uDC00']: 1 } }), 'Config',
      'loss: x: a string holds a lone UTF-16 surrogate (not valid Unicode text)');
    // Through the package: refused before the engine, naming the field.
    expectKilnError(kiln, () => kiln.loss.mse({ reduction: 'sum\uDFFF' }), 'Config',
      'loss.mse: reduction: a string holds a lone UTF-16 surrogate (not valid Unicode text)');
    // A pair is one code point: an unknown reduction, not a surrogate error.
    expectKilnError(kiln, () => kiln.loss.mse({ reduction: 'sum\uD83D\uDE00' }), 'Config', /reduction/);
    expect(() => kiln.loss.mse({ reduction: 'sum\uD83D\uDE00' })).toThrow(/^(?!.*surrogate)/);
  });
});

describe('user code running while the engine reads a value', () => {
  const busy = (entry) => new RegExp(`called while the engine runs ${entry} \\(from a getter or Proxy of its argument\\); the engine is not re-entrant`);

  it('a getter that disposes the optimizer being scheduled is Busy; the optimizer is intact', () => {
    const o = kiln.optim.sgd({ lr: 0.1 });
    const h = o._raw('test');
    const before = kiln.memory().mallocBytes;
    const spec = { kind: 'constant', get lr() { o.dispose(); return 0.5; } };
    expectKilnError(kiln, () => raw.optimizerSetSchedule(h, spec), 'Busy', busy('optimizerSetSchedule'));
    expect(o.isDisposed).toBe(false);
    expect(kiln.memory().mallocBytes).toBe(before);
    // Still an optimizer: its schedule can be set, and it disposes once.
    raw.optimizerSetSchedule(h, { kind: 'constant', lr: 0.5 });
    expect(raw.optimizerScheduleKind(h)).toBe('constant');
    o.dispose();
    expect(o.isDisposed).toBe(true);
    stillExact();
  });

  it('a Proxy trap that disposes the plateau scheduler\'s optimizer is Busy', () => {
    const o = kiln.optim.sgd({ lr: 0.1 });
    const cfg = new Proxy({ initial_lr: 0, factor: 0.5, patience: 0 }, {
      ownKeys(target) { o.dispose(); return Reflect.ownKeys(target); },
    });
    expectKilnError(kiln, () => raw.plateauCreateFor(cfg, o._raw('test')), 'Busy', busy('plateauCreateFor'));
    // The optimizer drives a ReduceLROnPlateau as usual: patience 0, factor 0.5 -> 0.05 after
    // a step without improvement (1 then 2, mode 'min').
    const p = new kiln.optim.ReduceLROnPlateau(o, { factor: 0.5, patience: 0 });
    expect(p.step(1)).toBeCloseTo(0.1, 12);
    expect(p.step(2)).toBeCloseTo(0.05, 12);
    p.dispose();
    o.dispose();
  });

  it('a getter that disposes a loss operand or creates a tensor is Busy; the operands are intact', () => {
    const a = kiln.Tensor.fromData([[1, 2], [3, 4]]);
    const b = kiln.Tensor.fromData([[1, 0], [0, 1]]);
    const tensors = kiln.memory().tensors;
    expectKilnError(kiln, () => raw.lossForward({ get kind() { a.dispose(); return 'mse'; } }, a._h, b._h), 'Busy',
      /^Tensor\.dispose: called while the engine runs lossForward/);
    expectKilnError(kiln, () => raw.lossForward({ get kind() { kiln.Tensor.zeros([1]); return 'mse'; } }, a._h, b._h), 'Busy',
      /called while the engine runs lossForward/);
    expect(kiln.memory().tensors).toBe(tensors);
    // mse of [[1, 2], [3, 4]] against [[1, 0], [0, 1]]: (0 + 4 + 9 + 9) / 4 = 5.5 (by hand)
    const loss = kiln.loss.mse().forward(a, b);
    expect(loss.item()).toBeCloseTo(5.5, 6);
    kiln.dispose([a, b, loss]);
    stillExact();
  });

  it('specs the package keeps for later calls are frozen', () => {
    const loss = kiln.loss.crossEntropy({ weights: [1, 2] });
    expect(Object.isFrozen(loss._spec)).toBe(true);
    expect(Object.isFrozen(loss._spec.weights)).toBe(true);
    expect(() => { loss._spec.weights[0] = 5; }).toThrow(TypeError);
    expect(() => Object.defineProperty(loss._spec, 'kind', { get() { return 'mse'; } })).toThrow(TypeError);
    const s = kiln.optim.schedule.step({ initialLr: 1, stepSize: 1, gamma: 0.5 });
    expect(Object.isFrozen(s._spec)).toBe(true);
    expect(Array.from(s.values(3))).toEqual([1, 0.5, 0.25]);
  });
});

describe('arrays the package hands the engine are its own checked copies', () => {
  /** An array whose elements count their reads (a getter per index). */
  function counted(values) {
    const a = [];
    const reads = values.map(() => 0);
    values.forEach((v, i) => Object.defineProperty(a, i, { get() { reads[i]++; return v; }, enumerable: true }));
    return { a, reads };
  }

  it('each element is read once, in JS, before the engine runs', () => {
    const x = kiln.Tensor.fromData([[1, 2], [3, 4]]);
    const s = counted([4]);
    const y = x.reshape(s.a);
    expect(s.reads).toEqual([1]);
    expect(y.toArray()).toEqual([1, 2, 3, 4]);
    // pad [[1, 2], [3, 4]] by one zero left and right of the last dim (by hand)
    const p = counted([1, 1]);
    const z = x.pad(p.a);
    expect(p.reads).toEqual([1, 1]);
    expect(z.toArray()).toEqual([[0, 1, 2, 0], [0, 3, 4, 0]]);
    kiln.dispose([x, y, z]);
  });

  it('a getter that disposes the tensor is seen before the call: Disposed, nothing else', () => {
    const x = kiln.Tensor.fromData([1, 2, 3, 4]);
    const tensors = kiln.memory().tensors;
    const shape = [];
    Object.defineProperty(shape, 0, { get() { x.dispose(); return 4; }, enumerable: true });
    expectKilnError(kiln, () => x.reshape(shape), 'Disposed', /^tReshape: an object passed to the engine was disposed/);
    expect(kiln.memory().tensors).toBe(tensors - 1);
    stillExact();
  });
});

describe('no way around the re-entrancy guard', () => {
  /** Whether the engine is running a call now (a tensor cannot be made from inside one). */
  const insideEngine = () => {
    try { kiln.Tensor.zeros([1]).dispose(); return false; } catch (e) { return e.code === 'Busy'; }
  };

  it("Embind's own delete, up the prototype chain, is guarded too", () => {
    const x = kiln.Tensor.full([4], 3);
    const h = x._h;
    let base = Object.getPrototypeOf(h);
    while (!Object.prototype.hasOwnProperty.call(base, 'delete')) base = Object.getPrototypeOf(base);
    const root = Object.getPrototypeOf(base);
    const deletes = [base.delete, ...(root && Object.prototype.hasOwnProperty.call(root, 'delete') ? [root.delete] : [])];
    for (const del of deletes) {
      const dims = [];
      Object.defineProperty(dims, 0, { get() { del.call(h); return 4; }, enumerable: true });
      expectKilnError(kiln, () => raw.tReshape(h, dims), 'Busy', /called while the engine runs reshape \(/);
    }
    expect(h.isDeleted()).toBe(false);
    expect(x.toArray()).toEqual([3, 3, 3, 3]);
    x.dispose();
  });

  it("a typed array's own length getter is not read inside the engine, and cannot lie to it", () => {
    const data = new Float32Array([5]);
    const reads = [];
    Object.defineProperty(data, 'length', { get() { reads.push(insideEngine()); return 4096; } });
    // The package believes 4096 values; the engine reads the array's real length (1).
    expectKilnError(kiln, () => kiln.Tensor.fromData(data), 'Shape', 'fromData: data has 1 values, shape [4096] needs 4096');
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((inside) => inside === false)).toBe(true);
    stillExact();
  });

  it("a user array's Symbol.species cannot put a Proxy into the engine (the copies use Array.from)", async () => {
    const full = await init({ engine: 'full' });
    const reads = [];
    class Evil extends Array {
      static get [Symbol.species]() {
        return function Species() {
          return new Proxy([], { get(t, k, r) { if (/^\d+$/.test(String(k))) reads.push(k); return Reflect.get(t, k, r); } });
        };
      }
    }
    const x = full.Tensor.ones([1, 1, 4, 4]);
    const w = full.Tensor.ones([1, 1, 2, 2]);
    // stride 2 over a 4x4 input of ones with a 2x2 kernel of ones: [[4, 4], [4, 4]] (by hand)
    const y = full.nn.functional.conv2d(x, w, null, { stride: Evil.from([2, 2]) });
    expect(y.toArray()).toEqual([[[[4, 4], [4, 4]]]]);
    expect(reads).toEqual([]);
    full.dispose([x, w, y]);
  });
});
