// Sequential.forwardAll (bindings/nn_inspect.cpp): every layer's output in one engine call,
// against values computed by hand; eval mode (no graph) and training mode (one graph: the
// gradient of an output with respect to the input, by hand); a conv model's feature maps;
// errors naming the layer.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose, knownMlp, safetensorsBytes } from './support/train_helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

const smallMlp = () => knownMlp(kiln);

describe('Sequential.forwardAll', () => {
  it('gives every layer output of an MLP: values by hand', () => {
    const model = smallMlp();
    model.eval();
    // [1, 2]: W1·x + b1 = [-1, 4, 1] + [0, -1, 0.5] = [-1, 3, 1.5] -> relu [0, 3, 1.5] -> 6 - 1.5 + 0.25
    // [3, -1]: [4, -2, -4] + b1 = [4, -3, -3.5] -> relu [4, 0, 0] -> 4 + 0.25
    const x = kiln.Tensor.fromData([[1, 2], [3, -1]]);
    const outs = model.forwardAll(x);
    expect(outs.map((t) => t.shape)).toEqual([[2, 3], [2, 3], [2, 1]]);
    expectClose(outs[0].dataSync(), [-1, 3, 1.5, 4, -3, -3.5], { abs: 0, rel: 0 });
    expectClose(outs[1].dataSync(), [0, 3, 1.5, 4, 0, 0], { abs: 0, rel: 0 });
    expectClose(outs[2].dataSync(), [4.75, 4.25], { abs: 0, rel: 0 });
    // The last output is forward(x).
    const y = model.forward(x);
    expect(Array.from(y.dataSync())).toEqual(Array.from(outs[2].dataSync()));
    for (const t of [x, y, ...outs]) t.dispose();
    model.dispose();
  });

  it('in training mode the outputs share one graph: d out / d x by hand', () => {
    const model = smallMlp();
    model.train();
    const x = kiln.Tensor.fromData([[1, 2]]).requireGrad();
    const outs = model.forwardAll(x);
    const grads = outs[2].sum().backward();
    const g = x.grad(grads);
    // Active units (relu > 0): 1 and 2. d out/d x = Σ_j w2[j] · W1[j, :] over active j
    //   = 2·[0, 2] + (-1)·[-1, 1] = [1, 3].
    expectClose(g.dataSync(), [1, 3], { abs: 1e-6, rel: 0 });
    // The hidden layer's own gradient: d Σ relu / d x = W1[1] + W1[2] = [-1, 3].
    // (a graph is back-propagated once: a second forwardAll for the second backward)
    const again = model.forwardAll(x);
    const g2 = x.grad(again[1].sum().backward());
    expectClose(g2.dataSync(), [-1, 3], { abs: 1e-6, rel: 0 });
    for (const t of [x, g, g2, ...outs, ...again]) t.dispose();
    model.dispose();
  });

  it('in eval mode the outputs carry no graph', () => {
    const model = smallMlp();
    model.eval();
    const x = kiln.Tensor.fromData([[1, 2]]).requireGrad();
    const outs = model.forwardAll(x);
    expect(outs.every((t) => !t.isRequireGrad)).toBe(true);
    for (const t of [x, ...outs]) t.dispose();
    model.dispose();
  });

  it('gives the feature maps of a convolution model: values by hand', () => {
    // 1 -> 1 channel, 2x2 kernel of ones, no bias, on a 3x3 image 1..9; then a 2x2 max pool.
    const model = kiln.nn.sequential({
      layers: [
        { type: 'reshape', shape: [1, 3, 3] },
        { type: 'conv2d', channels: [1, 1], kernelSize: [2, 2], bias: false },
        { type: 'relu' },
        { type: 'maxPool2d', kernelSize: [2, 2], stride: [1, 1] },
        { type: 'flatten' },
      ],
    });
    model.loadSafetensors(safetensorsBytes({
      '1.weight': { dtype: 'F32', shape: [1, 1, 2, 2], data: [1, 1, 1, -1] },
    }));
    model.eval();
    const x = kiln.Tensor.fromData([[1, 2, 3, 4, 5, 6, 7, 8, 9]]);
    const outs = model.forwardAll(x);
    expect(outs.map((t) => t.shape)).toEqual([[1, 1, 3, 3], [1, 1, 2, 2], [1, 1, 2, 2], [1, 1, 1, 1], [1, 1]]);
    // windows [1 2; 4 5] -> 1+2+4-5 = 2; [2 3; 5 6] -> 4; [4 5; 7 8] -> 8; [5 6; 8 9] -> 10
    expectClose(outs[1].dataSync(), [2, 4, 8, 10], { abs: 0, rel: 0 });
    expectClose(outs[3].dataSync(), [10], { abs: 0, rel: 0 });
    for (const t of [x, ...outs]) t.dispose();
    model.dispose();
  });

  it('names the layer whose input does not fit, and refuses a disposed model', () => {
    const model = smallMlp();
    const x = kiln.Tensor.zeros([2, 5]);
    let error;
    try {
      model.forwardAll(x);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(kiln.KilnError);
    expect(error.code).toBe('Shape');
    expect(error.message).toContain('layer 0 (linear)');
    model.dispose();
    expect(() => model.forwardAll(x)).toThrow(/disposed/);
    x.dispose();
  });
});
