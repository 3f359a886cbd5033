// group_norm in JS: a layer registered in C++ (engine/include/kiln/nn/group_norm.hpp's one
// KILN_REGISTER_LAYER line) is a kiln.nn factory and a spec type with no JS edit, because
// kiln.nn reads its layer types from the engine. Values from PyTorch 1.13:
//   x = ((torch.arange(24.).reshape(2, 4, 3) * 0.37) % 1.3) - 0.4
//   torch.nn.GroupNorm(2, 4)(x)        # eps 1e-5, weight 1, bias 0 at init
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose, expectKilnError } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

const X = [-0.4000000059604645, -0.030000001192092896, 0.3400000035762787, 0.7100000381469727,
  -0.21999993920326233, 0.15000006556510925, 0.5200001001358032, 0.8900002241134644,
  -0.03999987244606018, 0.33000001311302185, 0.7000001668930054, -0.22999969124794006,
  0.14000019431114197, 0.5100001096725464, 0.8800004720687866, -0.049999624490737915,
  0.3200002610683441, 0.6900001764297485, -0.239999920129776, 0.13000044226646423,
  0.5000003576278687, 0.8700002431869507, -0.05999937653541565, 0.3100005090236664];
const TORCH = [-1.3455235, -0.3329601, 0.6796033, 1.6921668, -0.8529249, 0.1596385, 0.40192,
  1.3411442, -1.0196079, -0.0803844, 0.8588399, -1.5019116, -0.8683178, 0.2999638, 1.4682468,
  -1.4682457, -0.2999642, 0.8683174, -1.3455244, -0.3329599, 0.6796035, 1.6921668, -0.8529245,
  0.1596388];

describe('groupNorm (registered in C++ only)', () => {
  it('is listed in kiln.nn.layerTypes and has a factory', () => {
    expect(kiln.nn.layerTypes).toContain('groupNorm');
    expect(typeof kiln.nn.groupNorm).toBe('function');
  });

  it('normalises groups of channels as torch.nn.GroupNorm, with PyTorch record keys', () => {
    const model = kiln.nn.sequential([{ type: 'groupNorm', numGroups: 2, numChannels: 4 }]);
    try {
      kiln.tidy(() => {
        const y = model.forward(kiln.Tensor.fromData(X, { shape: [2, 4, 3] }));
        expect(y.shape).toEqual([2, 4, 3]);
        expectClose(y.dataSync(), TORCH, { abs: 2e-5 });
      });
      const params = model.namedParameters();
      try {
        expect(Object.keys(params).sort()).toEqual(['0.bias', '0.weight']);
        expect(params['0.weight'].toArray()).toEqual([1, 1, 1, 1]);
      } finally {
        for (const p of Object.values(params)) p.dispose();
      }
    } finally {
      model.dispose();
    }
  });

  it('rejects channels that the groups do not divide, naming the layer and fields', () => {
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'groupNorm', numGroups: 3, numChannels: 4 }]),
      'Config', /layers\[0\] \(groupNorm\).*numGroups/);
  });
});
