// kiln.io.loadPytorch on the checkpoints Debian's PyTorch 1.13 wrote
// (tests/native/record/make_pt_fixtures.py -> tests/native/record/pytorch/, the fixtures of
// the native tests pytorch_test.cpp and pytorch_models_test.cpp): an MLP (a kiln.Module
// with fc1/fc2), the CNN and a BatchNorm model (Sequential specs) load with loadStateDict
// and give PyTorch's outputs to 1e-5; views and every dtype; nested checkpoints with
// topLevelKey; malformed files give KilnError `Format` with the engine's message and no
// tensor is left behind.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

const DIR = new URL('../native/record/pytorch/', import.meta.url);
const bytesOf = (name) => new Uint8Array(readFileSync(new URL(name, DIR)));
const EXPECTED = JSON.parse(readFileSync(new URL('expected.json', DIR), 'utf8'));

function expectClose(got, want, tol, what) {
  expect(got.length, what).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= tol)) {
      throw new Error(`${what}: element ${i}: ${got[i]} vs ${want[i]} (tolerance ${tol})`);
    }
  }
}

const disposeAll = (dict) => Object.values(dict).forEach((t) => t.dispose());

/** Loads the checkpoint into `model` (loadStateDict, strict), runs the case's inputs, checks the logits to 1e-5. */
function checkLogits(model, file, c, options) {
  const dict = kiln.io.loadPytorch(bytesOf(file), options);
  try {
    model.loadStateDict(dict);
  } finally {
    disposeAll(dict);
  }
  const x = kiln.Tensor.fromData(c.inputs);
  const y = model.forward(x);
  expectClose(y.dataSync(), c.logits.flat(), 1e-5, `${file} logits`);
  x.dispose();
  y.dispose();
}

function makeMlp() {
  class Mlp extends kiln.Module {
    constructor() {
      super();
      this.fc1 = kiln.nn.linear({ dInput: 3, dOutput: 4 });
      this.fc2 = kiln.nn.linear({ dInput: 4, dOutput: 2 });
    }
    forward(x) {
      return kiln.tidy(() => this.fc2.forward(this.fc1.forward(x).relu()));
    }
  }
  return new Mlp();
}

const CNN = {
  layers: [
    { type: 'reshape', shape: [1, 6, 6] },
    { type: 'conv2d', channels: [1, 4], kernelSize: [3, 3], padding: 'same' },
    { type: 'batchNorm', numFeatures: 4 },
    { type: 'relu' },
    { type: 'maxPool2d', kernelSize: [2, 2] },
    { type: 'conv2d', channels: [4, 6], kernelSize: 2 },
    { type: 'flatten' },
    { type: 'linear', dInput: 24, dOutput: 3 },
  ],
};
const BN = {
  layers: [
    { type: 'linear', dInput: 4, dOutput: 5 },
    { type: 'batchNorm', numFeatures: 5 },
    { type: 'relu' },
    { type: 'linear', dInput: 5, dOutput: 3 },
  ],
};

describe('models from PyTorch checkpoints give PyTorch outputs', () => {
  it('an MLP (kiln.Module with fc1, fc2), also in float16 and bfloat16', () => {
    for (const [file, c] of [['mlp.pt', EXPECTED.mlp], ['half.pt', EXPECTED.half], ['bf16.pt', EXPECTED.bf16]]) {
      const model = makeMlp();
      checkLogits(model, file, c);
      model.dispose();
    }
  });

  it('the CNN (conv2d, batchNorm, maxPool2d, linear) in eval mode, num_batches_tracked included', () => {
    const model = kiln.nn.sequential(CNN).eval();
    checkLogits(model, 'cnn.pt', EXPECTED.cnn);
    const state = model.stateDict();
    const n = state['2.num_batches_tracked'];
    expect(n.dtype).toBe('int32');
    expect(Array.from(n.dataSync())).toEqual([5]);
    disposeAll(state);
    model.dispose();
  });

  it('a Linear + BatchNorm1d model in eval mode', () => {
    const model = kiln.nn.sequential(BN).eval();
    checkLogits(model, 'bn.pt', EXPECTED.bn);
    model.dispose();
  });

  it('a nested checkpoint through topLevelKey', () => {
    const model = makeMlp();
    checkLogits(model, 'nested.pt', EXPECTED.nested, { topLevelKey: 'model' });
    model.dispose();
  });
});

describe('what loadPytorch returns', () => {
  it('views and every dtype, as PyTorch prints them', () => {
    const dict = kiln.io.loadPytorch(bytesOf('views.pt').buffer.slice(0));
    try {
      expect(Object.keys(dict)).toEqual(Object.keys(EXPECTED.views).sort());
      for (const [key, want] of Object.entries(EXPECTED.views)) {
        const t = dict[key];
        expect(t.shape, key).toEqual(want.shape);
        const values = [want.values].flat(Infinity).map((v) => (typeof v === 'boolean' ? Number(v) : v));
        const dtype = { bool: 'bool', float32: 'float32', float64: 'float32' }[want.dtype] ?? 'int32';
        expect(t.dtype, key).toBe(dtype);
        expect(Array.from(t.dataSync()).map(Number), key).toEqual(dtype === 'float32' ? values.map(Math.fround) : values);
      }
    } finally {
      disposeAll(dict);
    }
  });

  it('a nested checkpoint flattens to dotted keys; topLevelKey keeps one dict', () => {
    const all = kiln.io.loadPytorch(bytesOf('nested.pt'));
    expect(Object.keys(all)).toContain('optimizer.state.0.momentum_buffer');
    expectClose(all['optimizer.state.0.momentum_buffer'].dataSync(),
      EXPECTED.nested['optimizer.state.0.momentum_buffer'].flat(), 0, 'momentum buffer');
    disposeAll(all);
    const model = kiln.io.loadPytorch(bytesOf('nested.pt'), { topLevelKey: 'model' });
    expect(Object.keys(model)).toEqual(['fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight']);
    expectClose(model['fc1.weight'].dataSync(), EXPECTED.nested['model.fc1.weight'].flat(), 0, 'fc1.weight');
    disposeAll(model);
  });
});

describe('bad input', () => {
  it('an int64 outside int32 is a Value error naming the tensor', () => {
    expectKilnError(kiln, () => kiln.io.loadPytorch(bytesOf('big_int64.pt')), 'Value',
      'loadPytorch: tensor "big" (I64): I64 value -1099511627776 at element 1 does not fit in i32 (Kiln\'s Int)');
  });

  it('malformed checkpoints: Format errors with the engine\'s messages', () => {
    const cases = {
      'legacy.pt': /^read_pytorch: bytes: a legacy PyTorch checkpoint .*re-save it with a newer PyTorch \(>= 1\.6, the zip format\)/,
      'deflated.pt': /entry "mlp\/data.pkl" is deflated \(compression method 8\)/,
      'eval_global.pt': /global "builtins\.eval" is not allowed/,
      'unknown_opcode.pt': /unsupported pickle opcode 0x69 \(INST\)/,
      'view_past_storage.pt': /reads element 4 but the storage holds 4/,
      'numel_mismatch.pt': /should hold 1000 elements of 4 bytes, the entry has 16 bytes/,
      'missing_storage.pt': /its storage entry "archive\/data\/7" is absent/,
      'not_a_dict.pt': /holds a list, expected a dict of tensors/,
      'no_data_pkl.pt': /no <name>\/data\.pkl entry/,
      'deep_nesting.pt': /holds a tuple, expected a dict/,
      'memo_missing.pt': /BINGET of memo key 5, never stored/,
      'bad_utf8_key.pt': /BINUNICODE holds invalid UTF-8/,
      'stack_underflow.pt': /TUPLE2 on an empty stack/,
    };
    for (const [file, message] of Object.entries(cases)) {
      expectKilnError(kiln, () => kiln.io.loadPytorch(bytesOf(`malformed/${file}`)), 'Format', message);
    }
    const good = bytesOf('mlp.pt');
    for (const n of [0, 1, 30, 100, good.length - 23, good.length - 1]) {
      expectKilnError(kiln, () => kiln.io.loadPytorch(good.subarray(0, n)), 'Format', /^read_pytorch: bytes: /);
    }
  });

  it('os.system is refused and nothing runs', () => {
    const marker = '/tmp/kiln_pytorch_os_system_ran';
    rmSync(marker, { force: true });
    expectKilnError(kiln, () => kiln.io.loadPytorch(bytesOf('malformed/os_system.pt')), 'Format',
      /global "os\.system" is not allowed: Kiln reads tensors only and runs nothing from the file/);
    expect(existsSync(marker)).toBe(false);
  });

  it('a missing top-level key, bad options and bad bytes', () => {
    expectKilnError(kiln, () => kiln.io.loadPytorch(bytesOf('nested.pt'), { topLevelKey: 'state_dict' }), 'Format',
      'read_pytorch: bytes: the top-level key "state_dict" is absent (keys: "model", "epoch", "lr", "tag", "optimizer")');
    expectKilnError(kiln, () => kiln.io.loadPytorch(bytesOf('mlp.pt'), { topLevel: 'model' }), 'Type',
      'io.loadPytorch: unknown option "topLevel" (options: topLevelKey)');
    expectKilnError(kiln, () => kiln.io.loadPytorch(bytesOf('mlp.pt'), { topLevelKey: 3 }), 'Type',
      /^io\.loadPytorch: topLevelKey must be a string/);
    expectKilnError(kiln, () => kiln.io.loadPytorch('mlp.pt'), 'Type',
      /^io\.loadPytorch: bytes must be a Uint8Array or an ArrayBuffer/);
  });

  it('a model whose shapes differ is left unchanged', () => {
    const model = kiln.nn.sequential(BN);
    const weight = () => {
      const state = model.stateDict();
      const w = Array.from(state['0.weight'].dataSync());
      disposeAll(state);
      return w;
    };
    const before = weight();
    const dict = kiln.io.loadPytorch(bytesOf('mlp.pt'));
    expect(() => model.loadStateDict(dict)).toThrow(kiln.KilnError);
    disposeAll(dict);
    expect(weight()).toEqual(before);
    model.dispose();
  });
});

describe('review fixes', () => {
  it('float64 values outside float32 are refused (Value naming the tensor), not loaded as Infinity', () => {
    // f64_overflow.pt: {"x": float64 [1e300, 1.0]} (make_review_fixtures.py, PyTorch 1.13).
    expectKilnError(kiln, () => kiln.io.loadPytorch(bytesOf('f64_overflow.pt')), 'Value', /"x".*1\.?0*e\+300 at element 0 is outside float32's range/);
  });
});
