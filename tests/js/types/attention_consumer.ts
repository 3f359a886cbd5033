// A TypeScript consumer of the attention layers (kiln.nn.multiHeadAttention,
// transformerEncoder, transformerDecoder, positionalEncoding, rotaryEncoding,
// positionWiseFeedForward): must type-check with `tsc --noEmit --strict`
// (tests/js/nn_attention.test.mjs). Lines marked ts-expect-error must stay errors.
import { init } from 'kiln-dl';
import type { Kiln, MhaOutput, SequentialSpec, Tensor } from 'kiln-dl';

export async function main(): Promise<number> {
  const kiln: Kiln = await init();
  const spec: SequentialSpec = {
    layers: [
      { type: 'positionalEncoding', dModel: 8 },
      { type: 'rotaryEncoding', maxSequenceLength: 16, dModel: 8, theta: 500 },
      { type: 'multiHeadAttention', dModel: 8, nHeads: 2, dropout: 0 },
      { type: 'transformerEncoder', dModel: 8, dFf: 16, nHeads: 2, nLayers: 1, normFirst: true, activation: 'gelu' },
      { type: 'positionWiseFeedForward', dModel: 8, dFf: 4 },
    ],
  };
  const model = kiln.nn.sequential(spec);
  const mha = kiln.nn.multiHeadAttention({ dModel: 8, nHeads: 2 });
  const x: Tensor = kiln.Tensor.zeros([2, 5, 8]);
  const out: MhaOutput = mha.attend({ query: x, maskAttn: mha.autoregressiveMask(5) });
  const enc = kiln.nn.transformerEncoder({ dModel: 8, dFf: 16, nHeads: 2, nLayers: 2 });
  const y: Tensor = enc.forward(x, { maskPad: null });
  const dec = kiln.nn.transformerDecoder({ dModel: 8, dFf: 16, nHeads: 2, nLayers: 1 });
  const z: Tensor = dec.forward(x, y, { targetMaskAttn: dec.autoregressiveMask(5) });
  // @ts-expect-error activation is 'relu' | 'gelu'
  kiln.nn.transformerEncoder({ dModel: 8, dFf: 16, nHeads: 2, nLayers: 2, activation: 'tanh' });
  // @ts-expect-error nHeads is required
  kiln.nn.multiHeadAttention({ dModel: 8 });
  const n = out.context.shape.length + out.weights.shape.length + z.shape.length;
  for (const m of [model, mha, enc, dec]) m.dispose();
  return n;
}
