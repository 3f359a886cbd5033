// kiln.Module's interface (names, modes, printing, state dicts, composition with kiln.nn)
// and its bad inputs: each a KilnError naming what was expected and given, nothing
// half-applied.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';
import { Mlp, stateFromFixture } from './support/module_helpers.mjs';

const F = JSON.parse(readFileSync(new URL('./module_torch_fixture.json', import.meta.url), 'utf8'));

let kiln;
beforeAll(async () => {
  kiln = await init();
});

function values(net) {
  return kiln.tidy(() => {
    const sd = net.stateDict();
    const out = {};
    for (const k of Object.keys(sd)) out[k] = Array.from(sd[k].dataSync());
    return out;
  });
}

/** torch's Outer of module_torch_gen.py, in Kiln. */
function outer() {
  const M = Mlp(kiln);
  return new (class Outer extends kiln.Module {
    constructor() {
      super();
      this.body = kiln.nn.sequential([{ type: 'linear', dInput: 3, dOutput: 4 }, { type: 'batchNorm', numFeatures: 4 }, { type: 'relu' }]);
      this.head = new M();
      this.layers = [kiln.nn.linear({ dInput: 2, dOutput: 2 }), kiln.nn.linear({ dInput: 2, dOutput: 1 })];
      this.bias = this.param('bias', kiln.Tensor.zeros([1]));
      this.note = 'constants are not members';
      this.table = kiln.Tensor.zeros([2]); // a plain tensor: not a parameter (as in PyTorch)
    }

    forward(x) {
      return x;
    }
  })();
}

describe('names, modes, printing', () => {
  it('nested modules have PyTorch state_dict keys and shapes (num_batches_tracked: [1], PyTorch [])', () => {
    const net = outer();
    const sd = kiln.tidy(() => {
      const d = net.stateDict();
      return Object.fromEntries(Object.entries(d).map(([k, t]) => [k, t.shape]));
    });
    expect(Object.keys(sd)).toEqual(F.nestedKeys);
    for (const k of F.nestedKeys) expect(sd[k]).toEqual(k.endsWith('num_batches_tracked') ? [1] : F.nestedShapes[k]);
    expect(Object.keys(kiln.tidy(() => net.namedParameters()))).toEqual(F.nestedKeys);
    expect(net.namedChildren().map(([k]) => k)).toEqual(['body', 'head', 'layers.0', 'layers.1']);
    expect(net.namedModules().map(([k]) => k)).toEqual(['', 'body', 'head', 'head.fc1', 'head.fc2', 'layers.0', 'layers.1']);
    // 16 + 4·4 (weight, bias, running stats) + 1 + head 28 + 6 + 3 + bias 1
    expect(net.numParams).toBe(16 + 16 + 1 + 28 + 6 + 3 + 1);
    net.table.dispose();
    net.dispose();
  });

  it('a plain object of modules is a dict of them (PyTorch ModuleDict keys), cloned deeply', () => {
    const Heads = class Heads extends kiln.Module {
      constructor() {
        super();
        this.heads = { a: kiln.nn.linear({ dInput: 2, dOutput: 1 }), b: new kiln.Param(kiln.tidy(() => kiln.Tensor.ones([3]))) };
      }
    };
    const m = new Heads();
    expect(Object.keys(values(m))).toEqual(['heads.a.weight', 'heads.a.bias', 'heads.b']);
    const c = m.clone();
    expect(c.heads).not.toBe(m.heads);
    expect(c.heads.b.paramId).not.toBe(m.heads.b.paramId);
    expect(values(c)).toEqual(values(m));
    m.heads.c = 'not a module';
    expectKilnError(kiln, () => m.numParams, 'Type',
      'Heads.heads.c: expected a kiln Module or Param (an object holding modules or parameters is a dict of them), got the string "not a module"');
    delete m.heads.c;
    c.dispose();
    m.dispose();
  });

  it('train()/eval() recurse into JS and built-in submodules', () => {
    const net = outer();
    expect(net.training).toBe(true);
    expect(net.eval()).toBe(net);
    expect([net.training, net.head.training, net.body.training, net.layers[1].training]).toEqual([false, false, false, false]);
    net.train();
    expect([net.training, net.head.training, net.body.training, net.layers[0].training]).toEqual([true, true, true, true]);
    net.table.dispose();
    net.dispose();
  });

  it('toString is a PyTorch-like tree', () => {
    const net = new (Mlp(kiln))();
    net.scale.requiresGrad = false;
    const text = net.toString();
    expect(text.split('\n')[0]).toBe('Mlp(');
    expect(text).toBe('Mlp(\n  (fc1): Linear {dInput: 3, dOutput: 4, bias: true, params: 16}\n  (fc2): Linear {dInput: 4, dOutput: 2, bias: true, params: 10}\n  (scale): Param [2] (frozen)\n)');
    const wrap = kiln.nn.sequential([net, { type: 'relu' }]);
    expect(wrap.toString()).toBe('Sequential(\n  (0): Mlp(\n    (fc1): Linear {dInput: 3, dOutput: 4, bias: true, params: 16}\n    (fc2): Linear {dInput: 4, dOutput: 2, bias: true, params: 10}\n    (scale): Param [2] (frozen)\n  )\n  (1): Relu\n)');
    expect(text).toContain('  (scale): Param [2] (frozen)');
    expect(text.endsWith('\n)')).toBe(true);
    net.dispose();
  });

  it('every built-in layer and Sequential is a kiln.Module; call() is forward()', () => {
    const lin = kiln.nn.linear({ dInput: 2, dOutput: 1 }, { seed: 1 });
    expect(lin).toBeInstanceOf(kiln.Module);
    expect(kiln.nn.sequential([{ type: 'relu' }])).toBeInstanceOf(kiln.Module);
    const x = kiln.Tensor.fromData([[1, 2]]);
    const a = lin.call(x);
    const b = lin.forward(x);
    expect(a.toArray()).toEqual(b.toArray());
    kiln.dispose([a, b, x]);
    lin.dispose();
  });

  it('kiln.nn.sequential with a user module chains forward; keys "0.fc1.weight", ...', () => {
    const M = Mlp(kiln);
    const inner = new M();
    kiln.tidy(() => inner.loadStateDict(stateFromFixture(kiln, F.init, F.shapes)));
    const seq = kiln.nn.sequential([{ type: 'linear', dInput: 3, dOutput: 3 }, inner, { type: 'relu' }], { seed: 5 });
    expect(seq).toBeInstanceOf(kiln.Module);
    expect(seq).not.toBeInstanceOf(kiln.nn.Sequential);
    expect(Object.keys(values(seq))).toEqual(['0.weight', '0.bias', '1.scale', '1.fc1.weight', '1.fc1.bias', '1.fc2.weight', '1.fc2.bias']);
    kiln.tidy(() => {
      const x = kiln.Tensor.fromData(F.x);
      const manual = seq['0'].forward(x);
      const expected = inner.forward(manual).relu();
      expect(Array.from(seq.call(x).dataSync())).toEqual(Array.from(expected.dataSync()));
    });
    expect(seq['1']).toBe(inner); // shared, as PyTorch's nn.Sequential(*modules)
    seq.dispose();
    expect(inner.isDisposed).toBe(true);
  });

  it('all-built-in kiln.nn.sequential([layer, ...]) still builds the engine Sequential', () => {
    const a = kiln.nn.linear({ dInput: 2, dOutput: 2 }, { seed: 1 });
    const s = kiln.nn.sequential([a, { type: 'relu' }]);
    expect(s).toBeInstanceOf(kiln.nn.Sequential);
    expect(s.config.layers.map((l) => l.type)).toEqual(['linear', 'relu']);
    s.dispose();
    a.dispose();
  });

  it('loadStateDict non-strict reports missing and unexpected keys and loads the rest', () => {
    const net = new (Mlp(kiln))();
    const report = kiln.tidy(() => {
      const sd = stateFromFixture(kiln, F.init, F.shapes);
      delete sd['fc2.bias'];
      sd.extra = kiln.Tensor.zeros([1]);
      return net.loadStateDict(sd, { strict: false });
    });
    expect(report).toEqual({ applied: expect.any(Array), missing: ['fc2.bias'], unexpected: ['extra'], mismatched: [], remapped: [], transposed: [] });
    expect(report.applied).toEqual(Object.keys(values(net)).filter((k) => k !== 'fc2.bias'));
    expect(values(net)['fc1.weight']).toEqual(F.init['fc1.weight'].map(Math.fround));
    net.dispose();
  });

  it('loadStateDict keeps ParamIds (optimizer state stays attached); loads a rank-0 num_batches_tracked', () => {
    const net = outer();
    const ids = net._paramSlots().map((s) => { s.release(); return s.paramId; });
    kiln.tidy(() => {
      const sd = net.stateDict();
      sd['body.1.num_batches_tracked'] = kiln.Tensor.fromData(7, { dtype: 'int32' });
      net.loadStateDict(sd);
    });
    expect(net._paramSlots().map((s) => { s.release(); return s.paramId; })).toEqual(ids);
    expect(values(net)['body.1.num_batches_tracked']).toEqual([7]);
    net.table.dispose();
    net.dispose();
  });

  it('_paramSlots: names, ids, flags, set() writes back keeping the id', () => {
    const net = new (Mlp(kiln))();
    const slots = net._paramSlots();
    expect(slots.map((s) => s.name)).toEqual(['scale', 'fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']);
    expect(slots.every((s) => s.requiresGrad)).toBe(true);
    const w = slots[1];
    kiln.tidy(() => w.set(kiln.Tensor.ones([4, 3])));
    expect(values(net)['fc1.weight']).toEqual(new Array(12).fill(1));
    const again = net._paramSlots();
    expect(again.map((s) => s.paramId)).toEqual(slots.map((s) => s.paramId));
    for (const s of [...slots, ...again]) s.release();
    net.dispose();
  });
});

describe('bad inputs', () => {
  it('a wrong-shaped parameter in loadStateDict: Shape naming it, nothing applied', () => {
    const net = new (Mlp(kiln))();
    const before = values(net);
    kiln.tidy(() => {
      const sd = stateFromFixture(kiln, F.init, F.shapes);
      sd['fc2.weight'] = kiln.Tensor.zeros([4, 2]);
      expectKilnError(kiln, () => net.loadStateDict(sd), 'Shape',
        'Mlp.loadStateDict: 1 problem (nothing was loaded): "fc2.weight" has shape [2, 4], got [4, 2]');
      expectKilnError(kiln, () => net.loadStateDict(sd, { strict: false }), 'Shape', /"fc2.weight" has shape \[2, 4\], got \[4, 2\]/);
    });
    expect(values(net)).toEqual(before);
    net.dispose();
  });

  it('missing and unexpected keys with strict: Value listing them, nothing applied', () => {
    const net = new (Mlp(kiln))();
    const before = values(net);
    kiln.tidy(() => {
      const sd = stateFromFixture(kiln, F.init, F.shapes);
      delete sd.scale;
      sd['fc3.weight'] = kiln.Tensor.zeros([1]);
      expectKilnError(kiln, () => net.loadStateDict(sd), 'Value',
        'Mlp.loadStateDict: 2 problems (nothing was loaded): missing "scale"; unexpected "fc3.weight"');
    });
    expect(values(net)).toEqual(before);
    net.dispose();
  });

  it('a float value for an int buffer, a non-tensor value, a bad dict: DType / Type', () => {
    const net = outer();
    kiln.tidy(() => {
      const sd = net.stateDict();
      sd['body.1.num_batches_tracked'] = kiln.Tensor.zeros([1]);
      expectKilnError(kiln, () => net.loadStateDict(sd), 'DType', /"body.1.num_batches_tracked" is int32, got float32/);
      expectKilnError(kiln, () => net.loadStateDict({ bias: [0] }), 'Type', 'Outer.loadStateDict: "bias" must be a kiln Tensor, got an array');
      expectKilnError(kiln, () => net.loadStateDict(null), 'Type', 'Outer.loadStateDict: expected an object {name: Tensor} or a Map, got null');
      expectKilnError(kiln, () => net.loadStateDict({}, { strict: 'yes' }), 'Type', 'Outer.loadStateDict: strict must be a boolean, got the string "yes"');
    });
    net.table.dispose();
    net.dispose();
  });

  it('a module without forward: Type when called', () => {
    const Empty = class Empty extends kiln.Module {};
    const m = new Empty();
    expectKilnError(kiln, () => m.call(kiln.Tensor.zeros([1])), 'Type',
      'Empty.forward: the module defines no forward (write forward(x) { ... } in class Empty)');
    expect(m.numParams).toBe(0);
    expect(m.toString()).toBe('Empty()');
  });

  it('a non-module where a module is expected: Type naming the property', () => {
    const Bad = class Bad extends kiln.Module {
      constructor() {
        super();
        this.layers = [kiln.nn.relu(), 'linear'];
      }
    };
    const m = new Bad();
    expectKilnError(kiln, () => m.namedParameters(), 'Type',
      'Bad.layers[1]: expected a kiln Module or Param (an array holding modules or parameters is a list of them), got the string "linear"');
    expectKilnError(kiln, () => kiln.nn.sequential([kiln.nn.relu(), new (Mlp(kiln))(), 42]), 'Config',
      "SequentialConfig: layers[2]: expected an object such as {type: 'relu'}, got the number 42");
    m.layers[0].dispose();
  });

  it('a param of int dtype, rank 0, a non-tensor: DType / Rank / Type', () => {
    const i = kiln.Tensor.fromData([1, 2], { dtype: 'int32' });
    expectKilnError(kiln, () => new kiln.Param(i), 'DType', 'Param: a parameter must be a float32 tensor, got int32');
    const s = kiln.Tensor.fromData(3);
    expectKilnError(kiln, () => new kiln.Param(s), 'Rank', 'Param: a parameter has rank 1 to 6, got shape [] (a scalar parameter: use shape [1])');
    expectKilnError(kiln, () => new kiln.Param([1, 2]), 'Type', 'Param: value must be a kiln Tensor, got an array');
    expectKilnError(kiln, () => new kiln.Param(s, { frozen: true }), 'Type', 'Param: unknown option "frozen" (options: requiresGrad)');
    const M = class M extends kiln.Module {};
    expectKilnError(kiln, () => new M().param('w', i), 'DType', /float32/);
    expectKilnError(kiln, () => new M().param('a.b', s), 'Type', "M.param: name must be a non-empty string without '.', got the string \"a.b\"");
    kiln.dispose([i, s]);
  });

  it('Param.assign of another shape or dtype: Shape / DType, value unchanged', () => {
    const p = new kiln.Param(kiln.tidy(() => kiln.Tensor.ones([2, 2])));
    const id = p.paramId;
    kiln.tidy(() => {
      expectKilnError(kiln, () => p.assign(kiln.Tensor.zeros([4])), 'Shape', 'Param.assign: expected shape [2, 2], got [4]');
      expectKilnError(kiln, () => p.assign(kiln.Tensor.zeros([2, 2], { dtype: 'int32' })), 'DType', /Param.assign: expected a float32 tensor of shape \[2, 2\], got int32/);
      p.assign(kiln.Tensor.zeros([2, 2]));
    });
    expect(p.toArray()).toEqual([[0, 0], [0, 0]]);
    expect(p.paramId).toBe(id);
    expectKilnError(kiln, () => { p.requiresGrad = 1; }, 'Type', 'Param.requiresGrad: expected a boolean, got the number 1');
    p.dispose();
    expectKilnError(kiln, () => p.paramId, 'Disposed', 'Param.paramId: the parameter was disposed');
  });

  it('a disposed submodule: Disposed naming it (stateDict, optimizer.step)', () => {
    const net = new (Mlp(kiln))();
    const opt = kiln.optim.sgd({ lr: 0.1 });
    const grads = kiln.tidy(() => kiln.keep(net.call(kiln.Tensor.ones([1, 3])).sum().backward()));
    net.fc2.dispose();
    expectKilnError(kiln, () => net.stateDict(), 'Disposed', 'Module: the layer "fc2" was disposed');
    const before = Array.from(net.scale.dataSync());
    expectKilnError(kiln, () => opt.step(net, grads), 'Disposed', 'Module: the layer "fc2" was disposed');
    expect(Array.from(net.scale.dataSync())).toEqual(before);
    expect(opt.steps).toBe(0);
    net.dispose();
    expectKilnError(kiln, () => net.call(kiln.Tensor.ones([1, 3])), 'Disposed', 'Mlp.call: the module was disposed');
    grads.dispose();
    opt.dispose();
  });

  it('optimizer.step with a foreign object or a non-float tensor: Type / DType', () => {
    const opt = kiln.optim.adam();
    const x = kiln.Tensor.ones([2]).requireGrad();
    const grads = x.sum().backward();
    expectKilnError(kiln, () => opt.step({ weight: x }, grads), 'Type',
      'Optimizer.step: model must be a kiln.nn Sequential or layer, a kiln.Module, or an array of Tensors, got an object');
    expectKilnError(kiln, () => opt.step([x, 3], grads), 'Type', 'Optimizer.step: params[1] must be a kiln Tensor, got the number 3');
    const i = kiln.Tensor.fromData([1], { dtype: 'int32' });
    expectKilnError(kiln, () => opt.step([i], grads), 'DType', 'Optimizer.step: params[0] must be a float32 tensor, got int32');
    expectKilnError(kiln, () => opt.step([x], {}), 'Type', /grads must be the Gradients returned by backward\(\)/);
    expect(x.toArray()).toEqual([1, 1]);
    expect(opt.steps).toBe(0);
    kiln.dispose([x, grads, i]);
    opt.dispose();
  });

  it('a module containing itself: Value; saveSafetensors with a bad dtype: Value; bad bytes: Format', () => {
    const Loop = class Loop extends kiln.Module {
      constructor() {
        super();
        this.self = this;
      }
    };
    expectKilnError(kiln, () => new Loop().stateDict(), 'Value', 'Loop: the module contains itself (at "self")');
    const net = new (Mlp(kiln))();
    expectKilnError(kiln, () => net.saveSafetensors({ dtype: 'float64' }), 'Value',
      "Mlp.saveSafetensors: dtype must be 'float32', 'float16' or 'bfloat16', got the string \"float64\"");
    expectKilnError(kiln, () => net.saveSafetensors({ precision: 'half', dtype: 'bfloat16' }), 'Value', /contradicts/);
    expectKilnError(kiln, () => kiln.nn.relu().saveSafetensors({ dtype: 'int8' }), 'Value', /Sequential.saveSafetensors: dtype must be/);
    expectKilnError(kiln, () => net.saveSafetensors({ half: true }), 'Type', 'Mlp.saveSafetensors: unknown option "half" (options: dtype)');
    const before = values(net);
    expectKilnError(kiln, () => net.loadSafetensors(new Uint8Array([1, 2, 3])), 'Format', /bytes/);
    expectKilnError(kiln, () => net.loadSafetensors([1, 2]), 'Type', 'Mlp.loadSafetensors: bytes must be a Uint8Array, got an array');
    // a file of another module: strict Format listing the keys (as Sequential's and the C++
    // recorder's), nothing applied
    const other = kiln.nn.linear({ dInput: 3, dOutput: 4 }).saveSafetensors();
    expectKilnError(kiln, () => net.loadSafetensors(other), 'Format', /^Mlp\.loadSafetensors: bytes: \d+ problems: .*missing "scale".*unexpected "weight"/);
    expect(values(net)).toEqual(before);
    net.dispose();
  });

  it("the guarded step (the Learner's): a non-finite update is refused, nothing applied", async () => {
    const { stepParams } = await import('../../dist/module_class.js');
    const net = new (Mlp(kiln))();
    const opt = kiln.optim.sgd({ lr: 1e38 });
    const before = values(net);
    const e = kiln._internals.engine;
    kiln.tidy(() => {
      const grads = net.call(kiln.Tensor.fromData([[100, 100, 100]])).sum().mul(kiln.Tensor.fromData([1e30])).backward();
      expectKilnError(kiln, () => stepParams(e, opt._raw('t'), net, grads, 'Optimizer.step', { op: 'Learner.fit', epoch: 2, batch: 5 }),
        'NonFinite', /^Learner.fit: the (gradient|update) of parameter [a-z0-9.]+ .*is not finite .* at epoch 2, batch 5 \(the step was not applied/);
    });
    expect(values(net)).toEqual(before);
    expect(opt.steps).toBe(0);
    opt.dispose();
    net.dispose();
  });
});
