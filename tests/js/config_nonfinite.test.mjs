// NaN and ±Infinity in a layer spec, an optimizer or a loss config: JSON cannot carry them
// (JSON.stringify writes null), so the package names the field and the value instead of
// passing the engine a null ("expected a number, got null").
import { beforeAll, describe, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

describe('non-finite numbers in configs', () => {
  it('a layer spec names the layer, its type and the field', () => {
    expectKilnError(kiln, () => kiln.nn.groupNorm({ numGroups: 2, numChannels: 4, epsilon: NaN }), 'Config',
      'SequentialConfig: layers[0] (groupNorm): epsilon: expected a finite number, got NaN');
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 3 },
      { type: 'layerNorm', dModel: 3, epsilon: Infinity }]), 'Config',
    'SequentialConfig: layers[1] (layerNorm): epsilon: expected a finite number, got Infinity');
  });

  it('an optimizer names its lr or field', () => {
    expectKilnError(kiln, () => kiln.optim.sgd({ lr: Infinity }), 'Config',
      'optim.sgd: lr: expected a finite number, got Infinity');
    expectKilnError(kiln, () => kiln.optim.schedule.step({ initialLr: 0.1, stepSize: 2, gamma: -Infinity }), 'Config',
      'optim.schedule.step: gamma: expected a finite number, got -Infinity');
  });
});
