// Regression tests of the fresh-eyes report (/tmp/breaker_report.md), kiln.Module's part:
// 3 (a module that contains itself: toString/clone threw raw RangeError/TypeError), 9
// (assigning a plain tensor over a registered Param silently unregistered it: PyTorch's
// "cannot assign ... as parameter"), 18 (`this.training = false` in a constructor threw a
// raw TypeError) and 14's module messages ("the module: the module was disposed",
// `the "w" was disposed`). Codes and key words of the messages, memory flat, nothing
// half-applied.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});

const tensors = () => kiln.memory().tensors;

/** The names of namedParameters() (its new tensors disposed). */
function names(m) {
  const d = m.namedParameters();
  kiln.dispose(Object.values(d));
  return Object.keys(d);
}

function classes() {
  class Leaf extends kiln.Module {
    constructor() {
      super();
      this.w = this.param('w', T.fromData([1, 2, 3]));
    }
    forward(x) {
      return x.mul(this.w);
    }
  }
  class Outer extends kiln.Module {
    constructor() {
      super();
      this.inner = new Leaf();
      this.fc = kiln.nn.linear({ dInput: 3, dOutput: 2 });
    }
    forward(x) {
      return this.fc.forward(this.inner.forward(x));
    }
  }
  return { Leaf, Outer };
}

describe('3: a module that contains itself', () => {
  it('toString, String(), inspect and clone throw KilnError Value naming where (as namedParameters)', () => {
    const { Leaf, Outer } = classes();
    const c = new Leaf();
    c.self = c;
    const start = tensors();
    expectKilnError(kiln, () => c.namedParameters(), 'Value', 'Leaf: the module contains itself (at "self")');
    expectKilnError(kiln, () => c.toString(), 'Value', 'Leaf.toString: the module contains itself (at "self")');
    expectKilnError(kiln, () => String(c), 'Value', 'Leaf.toString: the module contains itself (at "self")');
    expectKilnError(kiln, () => c.clone(), 'Value', 'Leaf.clone: the module contains itself (at "self")');
    expect(tensors()).toBe(start);  // clone made nothing
    // Deeper: outer.inner.back = outer.
    const o = new Outer();
    o.inner.back = o;
    expectKilnError(kiln, () => o.toString(), 'Value', 'Outer.toString: the module contains itself (at "inner.back")');
    expectKilnError(kiln, () => o.clone(), 'Value', 'Outer.clone: the module contains itself (at "inner.back")');
    expectKilnError(kiln, () => o.inner.toString(), 'Value', 'Leaf.toString: the module contains itself (at "back.inner")');
    // Removing the cycle makes everything work again; a module shared twice is no cycle.
    delete o.inner.back;
    delete c.self;
    o.again = o.inner;
    expect(o.toString()).toMatch(/^Outer\(\n {2}\(inner\): Leaf\(\n {4}\(w\): Param \[3\]\n {2}\)\n {2}\(fc\): Linear/);
    const copy = o.clone();
    expect(copy.again).toBe(copy.inner);
    expect(names(copy)).toEqual(['inner.w', 'fc.weight', 'fc.bias']);
    copy.dispose();
    expect(c.toString()).toBe('Leaf(\n  (w): Param [3]\n)');
    o.dispose();
    c.dispose();
  });
});

describe('9: assignment over a registered Param or submodule (PyTorch\'s __setattr__)', () => {
  it('a plain tensor over a Param is KilnError Type; the Param stays registered and the tensor the caller\'s', () => {
    const { Leaf } = classes();
    const r = new Leaf();
    const w = r.w;
    const z = T.zeros([3]);
    const start = tensors();
    const e = expectKilnError(kiln, () => { r.w = z; }, 'Type', /^Leaf: cannot assign a Tensor as parameter "w" \(a kiln\.Param, a Module, null or undefined expected/);
    expect(e.message).toMatch(/use this\.w\.assign\(tensor\)/);
    expectKilnError(kiln, () => Object.defineProperty(r, 'w', { value: z, enumerable: true }), 'Type', /cannot assign a Tensor as parameter "w"/);
    expectKilnError(kiln, () => { r.w = 5; }, 'Type', /cannot assign the number 5 as parameter "w"/);
    expect(r.w).toBe(w);
    expect(names(r)).toEqual(['w']);
    expect(z.isDisposed).toBe(false);
    expect(tensors()).toBe(start);
    // assign() changes the value, keeping the Param and its id.
    const id = w.paramId;
    r.w.assign(T.fromData([4, 5, 6]));
    expect(r.w.paramId).toBe(id);
    expect(Array.from(r.w.dataSync())).toEqual([4, 5, 6]);
    z.dispose();
    r.dispose();
  });

  it('a Param or Module over a Param replaces it (the old one is not disposed); null unregisters; delete frees the name', () => {
    const { Leaf } = classes();
    const r = new Leaf();
    const old = r.w;
    const next = new kiln.Param(T.fromData([7, 8, 9]));
    r.w = next;
    expect(r.w).toBe(next);
    expect(old.isDisposed).toBe(false);  // as PyTorch: left to the caller / the GC
    expect(Array.from(r.w.dataSync())).toEqual([7, 8, 9]);
    old.dispose();
    r.w = null;
    expect(names(r)).toEqual([]);
    delete r.w;
    const constant = T.ones([3]);
    r.w = constant;  // a plain property now: a constant, as PyTorch
    expect(names(r)).toEqual([]);
    constant.dispose();
    next.dispose();
    r.dispose();
  });

  it('a non-module over a submodule is KilnError Type; another module replaces it', () => {
    const { Leaf, Outer } = classes();
    const o = new Outer();
    const fc = o.fc;
    const t = T.ones([2]);
    expectKilnError(kiln, () => { o.fc = t; }, 'Type', /^Outer: cannot assign a Tensor as child module "fc" \(a kiln Module, a Param, null or undefined expected/);
    expectKilnError(kiln, () => { o.inner = { a: 1 }; }, 'Type', /cannot assign an object as child module "inner"/);
    expect(o.fc).toBe(fc);
    expect(names(o)).toEqual(['inner.w', 'fc.weight', 'fc.bias']);
    const leaf = new Leaf();
    o.fc = leaf;
    expect(names(o)).toEqual(['inner.w', 'fc.w']);
    expect(fc.isDisposed).toBe(false);
    fc.dispose();
    t.dispose();
    o.dispose();
  });

  it('clones are guarded the same way', () => {
    const { Leaf } = classes();
    const copy = new Leaf().clone();
    const t = T.zeros([3]);
    expectKilnError(kiln, () => { copy.w = t; }, 'Type', /cannot assign a Tensor as parameter "w"/);
    t.dispose();
    copy.dispose();
  });
});

describe('18: training is settable', () => {
  it('this.training = false in a constructor sets that module only (PyTorch\'s self.training)', () => {
    const { Leaf } = classes();
    class Frozen extends kiln.Module {
      constructor() {
        super();
        this.inner = new Leaf();
        this.training = false;
      }
    }
    const f = new Frozen();
    expect(f.training).toBe(false);
    expect(f.inner.training).toBe(true);
    f.train();
    expect([f.training, f.inner.training]).toEqual([true, true]);
    f.training = false;
    expect([f.training, f.inner.training]).toEqual([false, true]);
    expectKilnError(kiln, () => { f.training = 'no'; }, 'Type', 'Frozen.training: expected a boolean, got the string "no"');
    expect(f.training).toBe(false);
    expect(Object.keys(f)).toEqual(['inner']);  // no own property appeared
    f.dispose();
    expectKilnError(kiln, () => { f.training = true; }, 'Disposed', 'Frozen.training: the module was disposed');
  });

  it('a kiln.nn model\'s training is settable as train(mode)', () => {
    const seq = kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 2 }, { type: 'dropout', prob: 0.5 }]);
    seq.training = false;
    expect(seq.training).toBe(false);
    const x = T.ones([1, 2]);
    const a = seq.forward(x);
    const b = seq.forward(x);
    expect(Array.from(a.dataSync())).toEqual(Array.from(b.dataSync()));  // dropout off
    seq.training = true;
    expect(seq.training).toBe(true);
    expectKilnError(kiln, () => { seq.training = 1; }, 'Type', 'Sequential.training: expected a boolean, got the number 1');
    kiln.dispose([a, b, x]);
    seq.dispose();
  });
});

describe('14: module messages read as sentences', () => {
  it('a disposed module or submodule, a disposed tensor in loadStateDict', () => {
    const { Leaf, Outer } = classes();
    const o = new Outer();
    o.inner.dispose();
    expectKilnError(kiln, () => o.namedParameters(), 'Disposed', 'Module: the submodule "inner" (Leaf) was disposed');
    const n = new Outer();
    n.dispose();
    expectKilnError(kiln, () => n.namedParameters(), 'Disposed', 'Outer: the module was disposed');
    const r = new Leaf();
    const x = T.ones([3]);
    x.dispose();
    expectKilnError(kiln, () => r.loadStateDict({ w: x }), 'Disposed', /^Leaf\.loadStateDict: the tensor "w" was disposed \(by dispose\(\)/);
    expect(Array.from(r.w.dataSync())).toEqual([1, 2, 3]);
    o.dispose();
    r.dispose();
  });

  it('"an" before a vowel in "got ..."', async () => {
    const { InMemDataset } = kiln.data;
    expectKilnError(kiln, () => kiln.io.readSafetensors(new Int32Array(2)), 'Type', 'readSafetensors: bytes must be a Uint8Array or an ArrayBuffer, got an Int32Array');
    expectKilnError(kiln, () => kiln.io.readSafetensors(new Uint16Array(2)), 'Type', /got a Uint16Array$/);
    expectKilnError(kiln, () => new kiln.data.DataLoader(new ArrayBuffer(4)), 'Type', /got an ArrayBuffer$/);
    let err;
    try {
      await kiln.io.save('/tmp/never-written.safetensors', new InMemDataset([1]));
    } catch (e) {
      err = e;
    }
    expect(err.code).toBe('Type');
    expect(err.message).toMatch(/got an InMemDataset$/);
  });

  it('Optimizer.loadState of bytes that are not SafeTensors names the op first', () => {
    const m = kiln.nn.linear({ dInput: 2, dOutput: 2 });
    const opt = kiln.optim.adam({ lr: 0.1 });
    expectKilnError(kiln, () => opt.loadState(m, new Uint8Array(20)), 'Format', /^Optimizer\.loadState: the bytes are not a SafeTensors file: /);
    m.dispose();
  });
});
