// Load options of Module.loadStateDict / loadSafetensors and Sequential.loadSafetensors
// (remap, allowPartial, strict, the Burn adapter) and their report, decided by the engine
// (kiln::record::LoadOptions through raw.loadPlan), against the files PyTorch wrote for
// tests/native/record/load_options_test.cpp (tests/native/record/make_load_fixtures.py):
// a "model."-prefixed checkpoint of an MLP with BatchNorm, and a file in Burn's conventions
// (LayerNorm gamma/beta, Linear weights [dInput, dOutput], one of them square). Loaded
// models give torch's outputs (expected.json) to 1e-5.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose, expectKilnError } from './helpers.mjs';

const DIR = new URL('../native/record/load_fixtures/', import.meta.url);
const fixture = (name) => new Uint8Array(readFileSync(new URL(name, DIR)));
const EXPECTED = JSON.parse(readFileSync(new URL('expected.json', DIR), 'utf8'));
const PREFIXED = fixture('prefixed_mlp.safetensors');
const BURN = fixture('burn_mlp.safetensors');
const STRIP = [[/^model\./, '']];
const ALL = ['fc1.weight', 'fc1.bias', 'bn.weight', 'bn.bias', 'bn.running_mean', 'bn.running_var',
  'bn.num_batches_tracked', 'fc2.weight', 'fc2.bias'];

let kiln;
let Mlp;
let MlpPlus;
let Head;
let BurnMlp;
beforeAll(async () => {
  kiln = await init();
  // torch's Mlp: fc2(relu(bn(fc1(x)))), Linear(4, 5), BatchNorm1d(5), Linear(5, 3)
  Mlp = class Mlp extends kiln.Module {
    constructor() {
      super();
      this.fc1 = kiln.nn.linear({ dInput: 4, dOutput: 5 });
      this.bn = kiln.nn.batchNorm({ numFeatures: 5 });
      this.fc2 = kiln.nn.linear({ dInput: 5, dOutput: 3 });
    }
    forward(x) { return this.fc2.forward(this.bn.forward(this.fc1.forward(x)).relu()); }
  };
  MlpPlus = class MlpPlus extends Mlp {
    constructor() {
      super();
      this.head = kiln.nn.linear({ dInput: 3, dOutput: 2 });
    }
  };
  Head = class Head extends kiln.Module {
    constructor() {
      super();
      this.fc1 = kiln.nn.linear({ dInput: 4, dOutput: 5 });
    }
  };
  // torch's BurnMlp: fc2(relu(norm(fc1(x)))), Linear(4, 4), LayerNorm(4), Linear(4, 3)
  BurnMlp = class BurnMlp extends kiln.Module {
    constructor() {
      super();
      this.fc1 = kiln.nn.linear({ dInput: 4, dOutput: 4 });
      this.norm = kiln.nn.layerNorm({ dModel: 4 });
      this.fc2 = kiln.nn.linear({ dInput: 4, dOutput: 3 });
    }
    forward(x) { return this.fc2.forward(this.norm.forward(this.fc1.forward(x)).relu()); }
  };
});

/** The model's outputs on the fixture's x, in eval mode. */
function outputs(model) {
  model.eval();
  return kiln.tidy(() => model.forward(kiln.Tensor.fromData(EXPECTED.x)).toArray());
}

function values(model) {
  return kiln.tidy(() => Object.fromEntries(Object.entries(model.stateDict()).map(([k, t]) => [k, t.toArray()])));
}

function readDict(bytes) {
  return kiln.io.readSafetensors(bytes);
}

function disposeAll(dict) {
  for (const t of Object.values(dict)) t.dispose();
}

describe('remap', () => {
  it('a "model."-prefixed checkpoint loads with remap and gives torch\'s outputs', () => {
    const model = new Mlp();
    expect(model.loadSafetensors(PREFIXED, { remap: STRIP })).toBe(model);
    expectClose(outputs(model).flat(), EXPECTED.prefixed_output.flat(), { abs: 1e-5, rel: 0 });
    expect(values(model)['bn.num_batches_tracked']).toEqual([7]);
    model.dispose();
  });

  it('loadStateDict returns the report: applied, remapped pairs', () => {
    const model = new Mlp();
    const dict = readDict(PREFIXED);
    const report = model.loadStateDict(dict, { remap: [['^model\\.', '']] });
    disposeAll(dict);
    expect(report.applied).toEqual(ALL);
    expect(report.missing).toEqual([]);
    expect(report.unexpected).toEqual([]);
    expect(report.mismatched).toEqual([]);
    expect(report.transposed).toEqual([]);
    expect(report.remapped).toHaveLength(9);
    expect(report.remapped).toContainEqual(['model.bn.num_batches_tracked', 'bn.num_batches_tracked']);
    expectClose(outputs(model).flat(), EXPECTED.prefixed_output.flat(), { abs: 1e-5, rel: 0 });
    model.dispose();
  });

  it('rules apply in order, replace every match, take $1 and the i flag', () => {
    const model = new Mlp();
    const dict = readDict(PREFIXED);
    const renamed = {};
    for (const [k, t] of Object.entries(dict)) renamed[k.replace(/^model\./, 'MODEL.').replace(/\./g, '/')] = t;
    const report = model.loadStateDict(renamed, { remap: [[/^model\//i, ''], ['/', '.'], [/^(fc\d)\.(weight|bias)$/, '$1.$2']] });
    disposeAll(dict);
    expect(report.applied).toEqual(ALL);
    expect(report.remapped).toContainEqual(['MODEL/bn/running_var', 'bn.running_var']);
    expectClose(outputs(model).flat(), EXPECTED.prefixed_output.flat(), { abs: 1e-5, rel: 0 });
    model.dispose();
  });

  it('a pattern the regex library gives up on is a Value error naming the pattern and the key', () => {
    const m = new kiln.Module();
    m.p = new kiln.Param(kiln.Tensor.zeros([1]));
    const t = kiln.Tensor.ones([1]);
    const key = `${'a'.repeat(30)}!`;
    expectKilnError(kiln, () => m.loadStateDict({ [key]: t }, { remap: [['(a+)+$', 'x']], strict: false }), 'Value', /\(a\+\)\+\$.*aaaa/);
    t.dispose();
    m.dispose();
  });

  it('without remap: every key listed, nothing loaded (Format from bytes, Value from a dict)', () => {
    const model = new Mlp();
    const before = values(model);
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED), 'Format',
      /^Mlp\.loadSafetensors: bytes: 18 problems: missing "fc1\.weight"; .*unexpected "model\.bn\.bias"/);
    const dict = readDict(PREFIXED);
    expectKilnError(kiln, () => model.loadStateDict(dict), 'Value',
      /^Mlp\.loadStateDict: 18 problems \(nothing was loaded\): missing "fc1\.weight"/);
    disposeAll(dict);
    expect(values(model)).toEqual(before);
    model.dispose();
  });

  it('two keys remapped to one: Value naming both', () => {
    const model = new Mlp();
    const dict = readDict(PREFIXED);
    const extra = kiln.Tensor.zeros([5, 4]);
    expectKilnError(kiln, () => model.loadStateDict({ ...dict, 'fc1.weight': extra }, { remap: STRIP, strict: false }), 'Value',
      'Mlp.loadStateDict: 1 problem (nothing was loaded): the keys "model.fc1.weight" and "fc1.weight" both become "fc1.weight"');
    extra.dispose();
    disposeAll(dict);
    model.dispose();
  });
});

describe('partial loading and strict', () => {
  it('allowPartial keeps what the state lacks and reports it missing', () => {
    const model = new MlpPlus();
    const before = values(model);
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remap: STRIP }), 'Format',
      'MlpPlus.loadSafetensors: bytes: 2 problems: missing "head.weight"; missing "head.bias"');
    const dict = readDict(PREFIXED);
    const report = model.loadStateDict(dict, { remap: STRIP, allowPartial: true });
    expect(report.missing).toEqual(['head.weight', 'head.bias']);
    expect(report.applied).toEqual(ALL);
    const after = values(model);
    expect(after['head.weight']).toEqual(before['head.weight']);
    expect(after['fc1.weight']).toEqual(kiln.tidy(() => dict['model.fc1.weight'].toArray()));
    disposeAll(dict);
    model.dispose();
  });

  it('unexpected keys need strict: false (allowPartial does not allow them)', () => {
    const model = new Head();
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remap: STRIP, allowPartial: true }), 'Format',
      /7 problems: unexpected "bn\.bias" \(from "model\.bn\.bias"\); unexpected "bn\.num_batches_tracked"/);
    const dict = readDict(PREFIXED);
    const report = model.loadStateDict(dict, { remap: STRIP, strict: false });
    expect(report.applied).toEqual(['fc1.weight', 'fc1.bias']);
    expect(report.unexpected).toEqual(['bn.bias', 'bn.num_batches_tracked', 'bn.running_mean', 'bn.running_var',
      'bn.weight', 'fc2.bias', 'fc2.weight']);
    expect(values(model)['fc1.bias']).toEqual(kiln.tidy(() => dict['model.fc1.bias'].toArray()));
    disposeAll(dict);
    model.dispose();
  });

  it('mismatched shapes are refused even with strict: false, naming both shapes', () => {
    const model = new Mlp();
    model.fc2 = kiln.nn.linear({ dInput: 5, dOutput: 2 });
    const before = values(model);
    const dict = readDict(PREFIXED);
    expectKilnError(kiln, () => model.loadStateDict(dict, { remap: STRIP, strict: false }), 'Shape',
      'Mlp.loadStateDict: 2 problems (nothing was loaded): "fc2.weight" (from "model.fc2.weight") has shape [2, 5], got [3, 5]; ' +
      '"fc2.bias" (from "model.fc2.bias") has shape [2], got [3]');
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remap: STRIP, strict: false }), 'Format',
      /"fc2\.weight" \(from "model\.fc2\.weight"\) has shape \[3, 5\], module expects \[2, 5\]/);
    disposeAll(dict);
    expect(values(model)).toEqual(before);
    model.dispose();
  });
});

describe('the Burn adapter', () => {
  const ADAPTER = { from: 'burn', linearWeights: [/^fc\d+\.weight$/] };

  it('a Burn-convention file loads with the adapter and gives torch\'s outputs', () => {
    const model = new BurnMlp();
    model.loadSafetensors(BURN, { adapter: ADAPTER });
    expectClose(outputs(model).flat(), EXPECTED.burn_output.flat(), { abs: 1e-5, rel: 0 });
    model.dispose();
  });

  it('loadStateDict reports the renamed and transposed keys', () => {
    const model = new BurnMlp();
    const dict = readDict(BURN);
    const report = model.loadStateDict(dict, { adapter: ADAPTER });
    disposeAll(dict);
    expect(report.transposed).toEqual(['fc1.weight', 'fc2.weight']);
    expect(report.remapped).toEqual([['norm.beta', 'norm.bias'], ['norm.gamma', 'norm.weight']]);
    expect(report.applied).toHaveLength(6);
    expectClose(outputs(model).flat(), EXPECTED.burn_output.flat(), { abs: 1e-5, rel: 0 });
    model.dispose();
  });

  it('without the adapter the file is refused; naming only fc2 loads the square fc1 wrongly', () => {
    const model = new BurnMlp();
    expectKilnError(kiln, () => model.loadSafetensors(BURN), 'Format',
      'BurnMlp.loadSafetensors: bytes: 5 problems: missing "norm.weight"; missing "norm.bias"; unexpected "norm.beta"; ' +
      'unexpected "norm.gamma"; "fc2.weight" has shape [4, 3], module expects [3, 4]');
    model.loadSafetensors(BURN, { adapter: { from: 'burn', linearWeights: ['^fc2\\.weight$'] } });
    const out = outputs(model).flat();
    const diff = Math.max(...EXPECTED.burn_output.flat().map((v, i) => Math.abs(v - out[i])));
    expect(diff).toBeGreaterThan(1e-3);
    model.dispose();
  });

  it('a Sequential loads it with remap and the adapter (patterns match the remapped keys)', () => {
    const model = kiln.nn.sequential({
      layers: [
        { type: 'linear', dInput: 4, dOutput: 4 },
        { type: 'layerNorm', dModel: 4 },
        { type: 'relu' },
        { type: 'linear', dInput: 4, dOutput: 3 },
      ],
    });
    const options = {
      remap: [[/^fc1\./, '0.'], [/^norm\./, '1.'], [/^fc2\./, '3.']],
      adapter: { from: 'burn', linearWeights: [/^[03]\.weight$/] },
    };
    expect(model.loadSafetensors(BURN, options)).toBe(model);
    expectClose(outputs(model).flat(), EXPECTED.burn_output.flat(), { abs: 1e-5, rel: 0 });
    const dict = readDict(BURN);
    const report = model.loadStateDict(dict, options);
    disposeAll(dict);
    expect(report.transposed).toEqual(['0.weight', '3.weight']);
    expect(report.remapped).toContainEqual(['norm.gamma', '1.weight']);
    model.dispose();
  });
});

describe('bad options', () => {
  it('are Type or Value errors naming the option, and nothing is loaded', () => {
    const model = new Mlp();
    const before = values(model);
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remapping: STRIP }), 'Type',
      'Mlp.loadSafetensors: unknown option "remapping" (options: strict, allowPartial, remap, adapter)');
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remap: /^model/ }), 'Type',
      /Mlp\.loadSafetensors: remap must be an array of \[pattern, replacement\] pairs, got/);
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remap: [[/^model/]] }), 'Type',
      /remap\[0\] must be a \[pattern, replacement\] pair/);
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remap: [[1, '']] }), 'Type',
      'Mlp.loadSafetensors: remap[0][0] must be a RegExp or a string, got the number 1');
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remap: [['a', /b/]] }), 'Type',
      /remap\[0\]\[1\] \(the replacement\) must be a string/);
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remap: [[/model/y, '']] }), 'Value',
      /remap\[0\]\[0\] \/model\/y is sticky/);
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remap: [['model.(', '']] }), 'Value',
      /^LoadOptions::with_key_remapping: the pattern "model\.\(" is not a valid ECMAScript regular expression/);
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { remap: [[/(?<=model)\./, '']] }), 'Value',
      /the pattern "\(\?<=model\)\\\." is not a valid ECMAScript regular expression/);
    expectKilnError(kiln, () => model.loadSafetensors(PREFIXED, { allowPartial: 1 }), 'Type',
      'Mlp.loadSafetensors: allowPartial must be a boolean, got the number 1');
    expectKilnError(kiln, () => model.loadStateDict({}, { adapter: 'burn' }), 'Type',
      /Mlp\.loadStateDict: adapter must be \{from: 'burn', linearWeights\?: \[\.\.\.\]\}, got the string "burn"/);
    expectKilnError(kiln, () => model.loadStateDict({}, { adapter: { from: 'burn', linear: [] } }), 'Type',
      /unknown adapter option "linear"/);
    expectKilnError(kiln, () => model.loadStateDict({}, { adapter: { from: 'burn', linearWeights: ['[fc'] } }), 'Value',
      /LoadOptions::with_adapter: the pattern "\[fc"/);
    const seq = kiln.nn.linear({ dInput: 4, dOutput: 5 });
    expectKilnError(kiln, () => seq.loadSafetensors(PREFIXED, { strict: 'no' }), 'Type',
      'Sequential.loadSafetensors: strict must be a boolean, got the string "no"');
    seq.dispose();
    expect(values(model)).toEqual(before);
    model.dispose();
  });
});
