// A TypeScript consumer of the activations of issue 19: must type-check with
// `tsc --noEmit --strict` (tests/js/nn_activations_more.test.mjs). The lines marked
// ts-expect-error must stay errors.
import { init } from 'kiln-dl';
import type { Kiln, Layer, SequentialSpec, Tensor } from 'kiln-dl';

export async function main(): Promise<number> {
  const kiln: Kiln = await init();
  const spec: SequentialSpec = {
    layers: [
      { type: 'linear', dInput: 4, dOutput: 8 },
      { type: 'selu' }, { type: 'mish' }, { type: 'hardSigmoid' }, { type: 'hardSwish' },
      { type: 'elu', alpha: 0.5 }, { type: 'celu' },
      { type: 'prelu', numParameters: 8, alpha: 0.1 },
      { type: 'glu', dim: -1 },
      { type: 'swiGlu', dInput: 4, dOutput: 2, bias: true },
    ],
  };
  const layers: Layer[] = [kiln.nn.selu(), kiln.nn.mish(), kiln.nn.hardSigmoid(), kiln.nn.hardSwish(),
    kiln.nn.elu({ alpha: 2 }), kiln.nn.celu(), kiln.nn.prelu({ numParameters: 3 }), kiln.nn.glu({ dim: 1 }),
    kiln.nn.swiGlu({ dInput: 4, dOutput: 4 }, { seed: 1 })];
  const x: Tensor = kiln.Tensor.zeros([2, 4]);
  const ys: Tensor[] = [x.selu(), x.mish(), x.hardSigmoid(), x.hardSwish(), x.elu(), x.elu(0.5), x.celu(2),
    x.glu(), x.glu(1), kiln.activation.prelu(x, kiln.Tensor.ones([1])), kiln.nn.functional.glu(x, -1),
    kiln.nn.functional.elu(x, 1), kiln.activation.hardSwish(x)];
  // @ts-expect-error swiGlu needs dInput and dOutput
  kiln.nn.swiGlu({ dInput: 4 });
  // @ts-expect-error alpha is a number
  x.elu('1');
  return spec.layers.length + layers.length + ys.length;
}
