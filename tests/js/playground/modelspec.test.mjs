// The playground's model builder (web/src/modelspec.js): the kiln-dl spec it produces,
// parameter counts (computed by hand here), the summary, and the messages for bad models.
import { describe, it, expect } from 'vitest';
import { describeModel, summaryText, CNN_PRESET, DEFAULT_MNIST_LAYERS, DEFAULT_TOY_LAYERS } from '../../../web/src/modelspec.js';

const TOY = { features: 2, classes: 2 };
const MNIST = { features: 784, classes: 10, image: [1, 28, 28] };
const dense = (units, act = 'relu', dropout = 0) => ({ kind: 'dense', units, act, dropout });
const conv = (filters, kernel = 3, act = 'relu', pool = 'max', padding = 'valid') => ({ kind: 'conv', filters, kernel, act, pool, padding });

describe('valid models', () => {
  it('the default toy MLP: 2-8-8-2 with tanh', () => {
    const d = describeModel(DEFAULT_TOY_LAYERS, TOY);
    expect(d.ok).toBe(true);
    expect(d.errors).toEqual([]);
    expect(d.spec.layers).toEqual([
      { type: 'linear', dInput: 2, dOutput: 8, bias: true },
      { type: 'tanh' },
      { type: 'linear', dInput: 8, dOutput: 8, bias: true },
      { type: 'tanh' },
      { type: 'linear', dInput: 8, dOutput: 2, bias: true },
    ]);
    expect(d.numParams).toBe(2 * 8 + 8 + 8 * 8 + 8 + 8 * 2 + 2); // 114
  });

  it('the anchor MLP 784-128-64-10 has 109,386 parameters', () => {
    const d = describeModel(DEFAULT_MNIST_LAYERS, MNIST);
    expect(d.numParams).toBe(784 * 128 + 128 + 128 * 64 + 64 + 64 * 10 + 10);
    expect(d.numParams).toBe(109386);
    expect(d.spec.layers.map((l) => l.type)).toEqual(['linear', 'relu', 'linear', 'relu', 'linear']);
  });

  it('the CNN preset is the anchor CNN: reshape, conv 1->8, pool, conv 8->16, pool, flatten, linear 400->10', () => {
    const d = describeModel(CNN_PRESET, MNIST);
    expect(d.ok).toBe(true);
    expect(d.spec.layers).toEqual([
      { type: 'reshape', shape: [1, 28, 28] },
      { type: 'conv2d', channels: [1, 8], kernelSize: [3, 3], stride: [1, 1], padding: 'valid' },
      { type: 'relu' },
      { type: 'maxPool2d', kernelSize: [2, 2] },
      { type: 'conv2d', channels: [8, 16], kernelSize: [3, 3], stride: [1, 1], padding: 'valid' },
      { type: 'relu' },
      { type: 'maxPool2d', kernelSize: [2, 2] },
      { type: 'flatten' },
      { type: 'linear', dInput: 400, dOutput: 10, bias: true },
    ]);
    // 28 -> 26 -> 13 -> 11 -> 5: 16 * 5 * 5 = 400
    expect(d.numParams).toBe(1 * 8 * 9 + 8 + 8 * 16 * 9 + 16 + 400 * 10 + 10); // 5,258
    const outs = d.rows.map((r) => r.output);
    expect(outs).toContain('[batch, 8, 13, 13]');
    expect(outs).toContain('[batch, 16, 5, 5]');
  });

  it('"same" padding keeps the size, avg pooling and no pooling work', () => {
    const d = describeModel([conv(4, 5, 'gelu', 'avg', 'same'), conv(6, 3, 'linear', 'none'), dense(10, 'silu', 0.5)], MNIST);
    expect(d.ok).toBe(true);
    // 28 (same) -> pool 14 -> conv 3 valid 12 -> flatten 6*12*12 = 864
    const lin = d.spec.layers.filter((l) => l.type === 'linear');
    expect(lin[0]).toEqual({ type: 'linear', dInput: 864, dOutput: 10, bias: true });
    expect(d.spec.layers).toContainEqual({ type: 'avgPool2d', kernelSize: [2, 2] });
    expect(d.spec.layers).toContainEqual({ type: 'dropout', prob: 0.5 });
    expect(d.spec.layers).toContainEqual({ type: 'gelu' });
    expect(d.spec.layers.filter((l) => l.type === 'conv2d')[1]).toEqual({ type: 'conv2d', channels: [4, 6], kernelSize: [3, 3], stride: [1, 1], padding: 'valid' });
    expect(d.numParams).toBe(4 * 25 + 4 + 4 * 6 * 9 + 6 + 864 * 10 + 10 + 10 * 10 + 10);
  });

  it('no hidden layers: logistic regression', () => {
    const d = describeModel([], { features: 2, classes: 3 });
    expect(d.spec.layers).toEqual([{ type: 'linear', dInput: 2, dOutput: 3, bias: true }]);
    expect(d.numParams).toBe(9);
  });

  it('"linear" activation adds no layer; leakyRelu gets its slope', () => {
    const d = describeModel([dense(3, 'linear'), dense(3, 'leakyRelu')], TOY);
    expect(d.spec.layers.map((l) => l.type)).toEqual(['linear', 'linear', 'leakyRelu', 'linear']);
    expect(d.spec.layers[2]).toEqual({ type: 'leakyRelu', negativeSlope: 0.01 });
  });

  it('the summary lists every layer with its output shape and the total', () => {
    const d = describeModel(DEFAULT_TOY_LAYERS, TOY);
    const text = summaryText(d);
    expect(text.split('\n')).toHaveLength(d.rows.length + 1);
    expect(text).toMatch(/linear 2 → 8 +\[batch, 8\] +24/);
    expect(text).toMatch(/Total parameters: 114$/);
  });
});

describe('bad models get clear messages', () => {
  const errorsOf = (layers, input = MNIST) => {
    const d = describeModel(layers, input);
    expect(d.ok).toBe(false);
    expect(d.spec).toBe(null);
    expect(d.numParams).toBe(0);
    return d.errors;
  };

  it('units out of range or not integers', () => {
    expect(errorsOf([dense(64), dense(0)])).toEqual(['Layer 2 (dense): units must be an integer from 1 to 1024, got 0']);
    expect(errorsOf([dense(2.5)])).toEqual(['Layer 1 (dense): units must be an integer from 1 to 1024, got 2.5']);
    expect(errorsOf([dense(5000)])[0]).toMatch(/from 1 to 1024, got 5000/);
    expect(errorsOf([dense(NaN)])[0]).toMatch(/got null/);
  });

  it('unknown activation, dropout out of range', () => {
    expect(errorsOf([dense(8, 'swish')])).toEqual(['Layer 1 (dense): unknown activation "swish" (expected one of relu, tanh, sigmoid, gelu, leakyRelu, silu, linear)']);
    expect(errorsOf([dense(8, 'relu', 1)])).toEqual(['Layer 1 (dense): dropout must be a number from 0 to 0.9, got 1']);
  });

  it('convolutions need images and must come first', () => {
    expect(errorsOf([conv(8)], TOY)).toEqual(['Layer 1 (conv): convolution layers need image input; pick MNIST or remove this layer']);
    expect(errorsOf([dense(8), conv(8)])).toEqual(['Layer 2 (conv): a convolution cannot follow a dense layer; put the conv layers first']);
  });

  it('a kernel larger than its input, pooling of a 1x1 map', () => {
    // 28 -> conv 7: 22 -> pool 11 -> conv 7: 5 -> pool 2 -> conv 7 on 2x2. One message:
    // the layers after a shape error are not measured against a wrong shape.
    const errs = errorsOf([conv(4, 7), conv(4, 7), conv(4, 7), conv(4, 3)]);
    expect(errs).toEqual(['Layer 3 (conv): its 2×2 input is smaller than the 7×7 kernel; use a smaller kernel, padding "same" or fewer pooling layers']);
    // ... -> 2 -> conv 1: 2 -> pool 1 -> conv 1: 1 -> pool of 1x1
    expect(errorsOf([conv(4, 7), conv(4, 7), conv(4, 1), conv(4, 1)])).toEqual(['Layer 4 (conv): its 1×1 output is too small for 2×2 pooling; set pooling to none']);
    // but later layers' own settings are still checked
    expect(errorsOf([conv(4, 7), conv(4, 7), conv(4, 7), conv(0)])).toHaveLength(2);
  });

  it('bad conv settings', () => {
    expect(errorsOf([conv(0)])[0]).toBe('Layer 1 (conv): filters must be an integer from 1 to 64, got 0');
    expect(errorsOf([conv(8, 4)])[0]).toBe('Layer 1 (conv): kernel size must be one of 1, 3, 5, 7, got 4');
    expect(errorsOf([conv(8, 3, 'relu', 'median')])[0]).toMatch(/pooling must be one of max, avg, none/);
    expect(errorsOf([conv(8, 3, 'relu', 'max', 'full')])[0]).toMatch(/padding must be one of valid, same/);
  });

  it('unknown layer kinds, too many layers, too many parameters', () => {
    expect(errorsOf([{ kind: 'lstm', units: 4 }])).toEqual(['Layer 1 (lstm): unknown layer kind "lstm" (expected "dense" or "conv")']);
    expect(errorsOf([null])).toEqual(['Layer 1: unknown layer kind undefined (expected "dense" or "conv")']);
    expect(errorsOf(Array.from({ length: 9 }, () => dense(4)), TOY)[0]).toBe('The model has 9 hidden layers; the playground allows at most 8');
    const big = errorsOf([dense(1024), dense(1024), dense(1024), dense(1024), dense(1024), dense(1024)]);
    // 784*1024+1024 + 5*(1024*1024+1024) + 1024*10+10 = 803,840 + 5,248,000 + 10,250
    expect(big).toEqual(["The model has 6,062,090 parameters, above the playground's limit of 5,000,000"]);
    expect(describeModel('nope', TOY).errors).toEqual(['The model must be a list of layers']);
  });

  it('reports every bad layer, not only the first', () => {
    expect(errorsOf([dense(0), dense(8, 'nope')])).toHaveLength(2);
  });
});
