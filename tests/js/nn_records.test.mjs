// A JS Sequential writes exactly what the C++ nn::Sequential of the same spec writes: the
// fixture tests/js/fixtures/sequential_seed42.safetensors is checked byte for byte against
// the C++ side by the native test SequentialGolden.SeededModelWritesTheFixturesBytes
// (tests/native/nn/sequential_golden_test.cpp, which also writes the spec next to it), and
// here against the WebAssembly build: same spec (camelCase here), same seed, same bytes
// (Kiln's generator gives the same values natively and in WebAssembly). The C++ records
// load in PyTorch's nn.Sequential (tests/native/record/torch_interop_test.cpp), so a model
// made in JS does too.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

const SPEC = {
  layers: [
    { type: 'reshape', shape: [1, 5, 5] },
    { type: 'conv2d', channels: [1, 3], kernelSize: [3, 3], padding: 'same' },
    { type: 'batchNorm', numFeatures: 3 },
    { type: 'relu' },
    { type: 'avgPool2d', kernelSize: [2, 2] },
    { type: 'flatten' },
    { type: 'dropout', prob: 0.1 },
    { type: 'linear', dInput: 12, dOutput: 4 },
    { type: 'gelu' },
    { type: 'linear', dInput: 4, dOutput: 2, bias: false },
  ],
};

const fixture = (name) => new URL(`./fixtures/${name}`, import.meta.url);

describe('records shared with C++', () => {
  it('the spec is the C++ fixture spec', () => {
    const model = kiln.nn.sequential(SPEC);
    expect(JSON.parse(model.configJson())).toEqual(JSON.parse(readFileSync(fixture('sequential_seed42.json'), 'utf8')));
    model.dispose();
  });

  it('seed 42 gives the bytes the C++ nn::Sequential writes', () => {
    const model = kiln.nn.sequential(SPEC, { seed: 42 });
    const want = new Uint8Array(readFileSync(fixture('sequential_seed42.safetensors')));
    const got = model.saveSafetensors();
    expect(got.length).toBe(want.length);
    expect(Buffer.from(got).equals(Buffer.from(want))).toBe(true);
    model.dispose();
  });

  it('a JS model loads the C++ bytes and writes them back unchanged', () => {
    const model = kiln.nn.sequential(SPEC, { seed: 1 });
    const want = new Uint8Array(readFileSync(fixture('sequential_seed42.safetensors')));
    model.loadSafetensors(want);
    expect(Buffer.from(model.saveSafetensors()).equals(Buffer.from(want))).toBe(true);
    model.dispose();
  });
});
