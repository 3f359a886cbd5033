// The activations of issue 19 in JS: the op-table methods selu, mish, hardSigmoid, hardSwish
// (generated from ops.def), the hand-written elu, celu, glu methods and kiln.activation.prelu
// (one Embind call each, bindings/nn_activation_more.cpp), and the layers selu, mish,
// hardSigmoid, hardSwish, elu, celu, prelu, glu, swiGlu registered in C++. Expected values and
// gradients: PyTorch 1.13, tests/native/nn/activation_more_fixtures.json (written by
// tests/native/nn/make_activation_more_fixtures.py), the same file the native tests read.
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose, expectKilnError } from './helpers.mjs';

const FIXTURES = JSON.parse(readFileSync(new URL('../native/nn/activation_more_fixtures.json', import.meta.url), 'utf8'));
const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const values = (t) => t.data.map(num);

let kiln;
beforeAll(async () => {
  kiln = await init();
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

const tensor = (t) => kiln.Tensor.fromData(values(t), { shape: t.shape });

describe('element-wise activations vs PyTorch at 0, ±inf, nan, ±3 and large |x|', () => {
  // [f, the gradient at a nan input as a multiple of the upstream one where Kiln follows
  // PyTorch's scalar kernel (nan is not <= 0: the positive branch); PyTorch's vectorized
  // kernel, which produced the fixture's first 16 elements, gives nan there. 0: the fixture's.]
  const cases = {
    selu: [(x) => x.selu(), 1.0507009873554805],
    mish: [(x) => kiln.activation.mish(x), 0],
    hard_sigmoid: [(x) => x.hardSigmoid(), 0],
    hard_swish: [(x) => kiln.nn.functional.hardSwish(x), 1],
    elu: [(x) => x.elu(), 1],
    'elu_alpha_0.5': [(x) => kiln.activation.elu(x, 0.5), 1],
    celu: [(x) => x.celu(), 1],
    celu_alpha_2: [(x) => kiln.nn.functional.celu(x, 2), 1],
  };
  for (const [name, [f, nanGrad]] of Object.entries(cases)) {
    it(`${name}: values and gradients`, () => {
      const fx = FIXTURES.unary[name];
      kiln.tidy(() => {
        const x = tensor(fx.x).requireGrad();
        const y = f(x);
        expectClose(y.dataSync(), values(fx.y), { abs: 1e-6, rel: 1e-5 });
        const grads = y.mul(tensor(fx.dy)).sum().backward();
        const dy = values(fx.dy);
        const xs = values(fx.x);
        const want = values(fx.grad).map((g, i) => (Number.isNaN(xs[i]) && nanGrad ? nanGrad * dy[i] : g));
        // hardswish at 3: PyTorch's scalar kernel (x <= 3) gives 1.5·g, its vectorized one 1·g; Kiln 1.5·g.
        if (name === 'hard_swish') xs.forEach((v, i) => { if (v === 3) want[i] = 1.5 * dy[i]; });
        expectClose(x.grad(grads).dataSync(), want, { abs: 1e-6, rel: 1e-5 });
        grads.dispose();
      });
    });
  }

  it('rejects int32 tensors naming the op', () => {
    kiln.tidy(() => {
      const i = kiln.Tensor.fromData([1, 2], { dtype: 'int32' });
      expectKilnError(kiln, () => i.selu(), 'DType', /^selu: /);
      expectKilnError(kiln, () => i.hardSwish(), 'DType', /^hard_swish: /);
      expectKilnError(kiln, () => i.elu(), 'DType', /^elu: expected a float32 tensor/);
      expectKilnError(kiln, () => i.glu(), 'DType', /^glu: /);
    });
  });

  it('celu rejects alpha 0 and bad argument types', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.fromData([1, -1]);
      expectKilnError(kiln, () => x.celu(0), 'Value', /^celu: alpha must not be 0/);
      expectKilnError(kiln, () => x.elu('1'), 'Type', /elu/);
    });
  });
});

describe('glu and prelu vs PyTorch', () => {
  it('glu halves dim and matches values and gradients', () => {
    for (const fx of FIXTURES.glu) {
      kiln.tidy(() => {
        const x = tensor(fx.x).requireGrad();
        const y = x.glu(fx.dim);
        expect(y.shape).toEqual(fx.y.shape);
        expectClose(y.dataSync(), values(fx.y), { abs: 1e-6, rel: 1e-5 });
        const grads = y.mul(tensor(fx.dy)).sum().backward();
        expectClose(x.grad(grads).dataSync(), values(fx.grad), { abs: 1e-6, rel: 1e-5 });
        grads.dispose();
      });
    }
  });

  it('glu rejects an odd size and a bad dim', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.zeros([2, 3]);
      expectKilnError(kiln, () => x.glu(), 'Shape', 'glu: the halved dim must have an even size, but dim -1 of input [2, 3] has size 3');
      expectKilnError(kiln, () => x.glu(2), 'Index', /^glu: dim 2 is out of range/);
      expectKilnError(kiln, () => kiln.Tensor.fromData(1).glu(), 'Rank', /^glu: expected a tensor of rank >= 1/);
    });
  });

  it('prelu gives x and weight their gradients (weight·g at x = 0)', () => {
    for (const fx of FIXTURES.prelu) {
      kiln.tidy(() => {
        const x = tensor(fx.x).requireGrad();
        const w = tensor(fx.weight).requireGrad();
        const y = kiln.nn.functional.prelu(x, w);
        expectClose(y.dataSync(), values(fx.y), { abs: 1e-6, rel: 1e-5 });
        const grads = y.mul(tensor(fx.dy)).sum().backward();
        expectClose(x.grad(grads).dataSync(), values(fx.grad_x), { abs: 1e-6, rel: 1e-5 });
        expectClose(w.grad(grads).dataSync(), values(fx.grad_weight), { abs: 1e-5, rel: 1e-5 });
        grads.dispose();
      });
    }
  });

  it('prelu rejects a weight that fits neither 1 nor the channels', () => {
    kiln.tidy(() => {
      expectKilnError(kiln, () => kiln.activation.prelu(kiln.Tensor.zeros([2, 3]), kiln.Tensor.zeros([2])),
        'Shape', /^prelu: weight has 2 parameters but input \[2, 3\] has 3 channels in dim 1/);
    });
  });
});

describe('layers registered in C++', () => {
  it('are spec types and factories', () => {
    for (const t of ['selu', 'mish', 'hardSigmoid', 'hardSwish', 'elu', 'celu', 'prelu', 'glu', 'swiGlu']) {
      expect(kiln.nn.layerTypes).toContain(t);
      expect(typeof kiln.nn[t]).toBe('function');
    }
  });

  it('the parameterless ones compute their functions', () => {
    const x = [-4, -3, -1, 0, 0.5, 3, 5];
    for (const [type, config, f] of [
      ['selu', undefined, (t) => t.selu()],
      ['mish', undefined, (t) => t.mish()],
      ['hardSigmoid', undefined, (t) => t.hardSigmoid()],
      ['hardSwish', undefined, (t) => t.hardSwish()],
      ['elu', { alpha: 0.5 }, (t) => t.elu(0.5)],
      ['celu', { alpha: 2 }, (t) => t.celu(2)],
    ]) {
      const layer = kiln.nn[type](config);
      try {
        kiln.tidy(() => {
          const input = kiln.Tensor.fromData([x]);
          expect(Array.from(layer.forward(input).dataSync())).toEqual(Array.from(f(input).dataSync()));
        });
      } finally {
        layer.dispose();
      }
    }
  });

  it('prelu and swiGlu hold PyTorch / Burn keys and match PyTorch', () => {
    const fx = FIXTURES.swi_glu;
    const model = kiln.nn.sequential([{ type: 'swiGlu', dInput: 4, dOutput: 3, bias: true }]);
    try {
      const params = model.namedParameters();
      try {
        expect(Object.keys(params).sort()).toEqual(['0.linear_inner.bias', '0.linear_inner.weight',
          '0.linear_outer.bias', '0.linear_outer.weight']);
      } finally {
        for (const p of Object.values(params)) p.dispose();
      }
      kiln.tidy(() => {
        const state = {};
        for (const k of ['linear_inner.weight', 'linear_inner.bias', 'linear_outer.weight', 'linear_outer.bias']) {
          state[`0.${k}`] = tensor(fx[k]);
        }
        model.loadStateDict(state);
        const y = model.forward(tensor(fx.x));
        expectClose(y.dataSync(), values(fx.y), { abs: 1e-5, rel: 1e-5 });
      });
    } finally {
      model.dispose();
    }
    const prelu = kiln.nn.prelu({ numParameters: 3 });
    try {
      const params = prelu.namedParameters();
      try {
        expect(Object.keys(params)).toEqual(['weight']);  // torch.nn.PReLU's state_dict key
        expect(params.weight.toArray()).toEqual([0.25, 0.25, 0.25]);
      } finally {
        for (const p of Object.values(params)) p.dispose();
      }
      expect(prelu.config).toEqual({ type: 'prelu', numParameters: 3, alpha: 0.25 });
    } finally {
      prelu.dispose();
    }
  });

  it('bad specs name the layer', () => {
    expectKilnError(kiln, () => kiln.nn.celu({ alpha: 0 }), 'Config', /layers\[0\] \(celu\): alpha must be finite and not 0/);
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 5 }, { type: 'glu' }]),
      'Config', /layers\[1\] \(glu\): the previous layer's last dim has odd size 5/);
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'reshape', shape: [4, 3] }, { type: 'prelu', numParameters: 3 }]),
      'Config', /layers\[1\] \(prelu\): numParameters is 3 but the previous layer outputs items \[4, 3\]/);
  });
});

describe('declarations', () => {
  it('type-check tests/js/types/activations_consumer.ts with --strict', async () => {
    const { execFileSync } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tests/js/types/tsconfig.activations.json'], { cwd: root, encoding: 'utf8' });
    } catch (e) {
      output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    expect(output).toBe('');
  }, 60_000);
});
