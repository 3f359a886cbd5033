// Bounds on config text (issue 14), seen from JS: a spec with more layers than
// SequentialConfig::max_layers (4096; maxLayers in JS messages) is a Limit error naming the
// cap, refused while the engine reads the spec (before any layer config is built); 4096
// layers are accepted. (The C++ test, tests/native/config/value_test.cpp, sends a million.)
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

describe('config bounds', () => {
  it('a spec of 100,000 layers is a Limit error naming the cap', () => {
    const layers = Array.from({ length: 100_000 }, () => ({ type: 'relu' }));
    expectKilnError(kiln, () => kiln.nn.sequential(layers), 'Limit',
      'JSON string: the array at layers has more than 4096 elements (the limit of ' +
      'SequentialConfig::maxLayers)');
  });

  it('4096 layers are accepted, and the instance still works after the refusal', () => {
    const layers = [{ type: 'linear', dInput: 2, dOutput: 2 },
      ...Array.from({ length: 4095 }, () => ({ type: 'relu' }))];
    const model = kiln.nn.sequential(layers);
    const y = model.forward(kiln.Tensor.fromData([[1, -1]]));
    expect(Array.from(y.shape)).toEqual([1, 2]);
    y.dispose();
    model.dispose();
  });
});
