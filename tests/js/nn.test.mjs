// kiln.nn in Node: Sequential from a camelCase spec and from code, forward values by hand,
// the spec's translation to the C++ snake_case and back, errors (Config naming the layer and
// field in camelCase, Shape naming the layer, Type, Disposed), train/eval, parameters,
// summary, single layers, SafeTensors save/load (bad bytes: Format, model unchanged).
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose, knownMlp, safetensorsBytes, safetensorsHeader } from './support/train_helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

/** Expects f to throw a KilnError with `code` whose message contains every `parts`. */
function expectKilnError(f, code, ...parts) {
  let error;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error, 'expected a KilnError').toBeInstanceOf(kiln.KilnError);
  expect(error.code, error.message).toBe(code);
  for (const p of parts) expect(error.message).toContain(p);
  return error;
}

const smallMlp = () => knownMlp(kiln);

/** A small conv net's spec (8 layer types); `batchNorm` adds fields to its batch norm. */
const convLayers = (batchNorm = {}) => [
  { type: 'reshape', shape: [1, 6, 6] },
  { type: 'conv2d', channels: [1, 4], kernelSize: [3, 3], padding: 'same' },
  { type: 'batchNorm', numFeatures: 4, ...batchNorm },
  { type: 'leakyRelu', negativeSlope: 0.2 },
  { type: 'maxPool2d', kernelSize: [2, 2] },
  { type: 'flatten' },
  { type: 'dropout', prob: 0.1 },
  { type: 'linear', dInput: 36, dOutput: 10, bias: false },
];

describe('kiln.nn.sequential', () => {
  it('runs an MLP with known weights: values by hand', () => {
    const model = smallMlp();
    // [1, 2]: W1·x + b1 = [-1, 4, 1] + [0, -1, 0.5] -> relu [0, 3, 1.5] -> 6 - 1.5 + 0.25 = 4.75
    // [3, -1]: [4, -2, -4] + b1 = [4, -3, -3.5] -> relu [4, 0, 0] -> 4 + 0.25 = 4.25
    const x = kiln.Tensor.fromData([[1, 2], [3, -1]]);
    const y = model.forward(x);
    expect(y.shape).toEqual([2, 1]);
    expectClose(y.dataSync(), [4.75, 4.25], { abs: 0, rel: 0 });
    expect(model.numParams).toBe(6 + 3 + 3 + 1);
    x.dispose();
    y.dispose();
    model.dispose();
  });

  it('translates the camelCase spec to the C++ spec and back (config, configJson)', () => {
    const model = kiln.nn.sequential({ layers: convLayers() });
    const cpp = JSON.parse(model.configJson());
    expect(cpp.layers.map((l) => l.type)).toEqual([
      'reshape', 'conv2d', 'batch_norm', 'leaky_relu', 'max_pool2d', 'flatten', 'dropout', 'linear',
    ]);
    expect(cpp.layers[1].kernel_size).toEqual([3, 3]);
    expect(cpp.layers[2].num_features).toBe(4);
    const config = model.config;
    expect(config.layers[1]).toMatchObject({ type: 'conv2d', channels: [1, 4], kernelSize: [3, 3], padding: 'same', stride: [1, 1] });
    expect(config.layers[4]).toMatchObject({ type: 'maxPool2d', kernelSize: [2, 2], stride: [2, 2], ceilMode: false });
    expect(config.layers[7]).toMatchObject({ type: 'linear', dInput: 36, dOutput: 10, bias: false });
    // The config builds the same model again.
    const again = kiln.nn.sequential(config);
    expect(again.configJson()).toBe(model.configJson());
    expect(JSON.parse(JSON.stringify(model))).toEqual(config);
    const y = model.forward(kiln.Tensor.zeros([2, 36]));
    expect(y.shape).toEqual([2, 10]);
    y.dispose();
    model.dispose();
    again.dispose();
  });

  it('builds config as the value of configJson() without JSON text: same values, same key order', () => {
    // The engine's configValue (bindings/config_js.cpp config_to_js) against nlohmann's text
    // of the same config parsed by JSON.parse: floats (0.1, 1e-7, 2/3), booleans, strings,
    // nested arrays, every default written out.
    const model = kiln.nn.sequential({ layers: convLayers({ epsilon: 1e-7, momentum: 2 / 3 }) });
    const viaText = JSON.parse(model.configJson());
    const direct = model._raw('test').configValue();
    expect(JSON.stringify(direct)).toBe(JSON.stringify(viaText));
    expect(direct).toStrictEqual(viaText);
    expect(direct.layers[2].epsilon).toBe(1e-7);
    expect(direct.layers[2].momentum).toBe(2 / 3);
    expect(direct.layers[6].prob).toBe(0.1);
    model.dispose();
  });

  it('accepts an array of layer specs, layers made in code and models', () => {
    const fc = kiln.nn.linear({ dInput: 2, dOutput: 3 });
    const head = smallMlp();
    const model = kiln.nn.sequential([fc, { type: 'tanh' }, kiln.nn.linear({ dInput: 3, dOutput: 2 }), { type: 'relu' }, kiln.nn.linear({ dInput: 2, dOutput: 2 })]);
    expect(model.config.layers.map((l) => l.type)).toEqual(['linear', 'tanh', 'linear', 'relu', 'linear']);
    const keys = model.namedParameters();
    expect(Object.keys(keys)).toEqual(['0.weight', '0.bias', '2.weight', '2.bias', '4.weight', '4.bias']);
    kiln.dispose(keys);
    // The parts keep working and their values are shared at the time of the call.
    const params = model.namedParameters();
    const fcParams = fc.namedParameters();
    expect(Array.from(params['0.weight'].dataSync())).toEqual(Array.from(fcParams.weight.dataSync()));
    kiln.dispose([params, fcParams]);
    const plain = kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 1 }]);
    expect(plain.numParams).toBe(3);
    expectKilnError(() => kiln.nn.sequential([fc, kiln.nn.linear({ dInput: 4, dOutput: 1 })]), 'Config',
      'layers[1] (linear): dInput is 4 but the previous layer outputs 3');
    for (const m of [fc, head, model, plain]) m.dispose();
  });

  it('is deterministic for a seed', () => {
    const spec = { layers: [{ type: 'linear', dInput: 4, dOutput: 3 }] };
    const a = kiln.nn.sequential(spec, { seed: 7 });
    const b = kiln.nn.sequential(spec, { seed: 7 });
    const c = kiln.nn.sequential(spec, { seed: 8 });
    expect(a.saveSafetensors()).toEqual(b.saveSafetensors());
    expect(a.saveSafetensors()).not.toEqual(c.saveSafetensors());
    // PyTorch's default init: U(-1/sqrt(d_input), 1/sqrt(d_input)) = U(-0.5, 0.5).
    const w = a.namedParameters();
    for (const v of w['0.weight'].dataSync()) expect(Math.abs(v)).toBeLessThanOrEqual(0.5);
    kiln.dispose(w);
    for (const m of [a, b, c]) m.dispose();
  });

  it('reports spec errors as Config naming the layer index, type and field in camelCase', () => {
    expectKilnError(() => kiln.nn.sequential({ layers: [{ type: 'lineer' }] }), 'Config',
      'SequentialConfig: layers[0]: unknown layer type "lineer"', 'maxPool2d', 'batchNorm');
    expectKilnError(() => kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 2 }] }), 'Config',
      'layers[0] (linear): missing required field "dOutput"');
    expectKilnError(() => kiln.nn.sequential({ layers: [
      { type: 'linear', dInput: 2, dOutput: 16 }, { type: 'relu' }, { type: 'linear', dInput: 32, dOutput: 2 }] }), 'Config',
    'SequentialConfig: layers[2] (linear): dInput is 32 but the previous layer outputs 16');
    expectKilnError(() => kiln.nn.sequential({ layers: [
      { type: 'reshape', shape: [1, 28, 28] }, { type: 'conv2d', channels: [3, 8], kernelSize: [3, 3] }] }), 'Config',
    'layers[1] (conv2d): channels[0] is 3 but the previous layer outputs items [1, 28, 28]');
    expectKilnError(() => kiln.nn.sequential({ layers: [{ type: 'maxPool2d', kernelSize: [2, 2], ceilMode: 1 }] }), 'Config',
      'layers[0] (maxPool2d): ceilMode: expected a boolean');
    expectKilnError(() => kiln.nn.sequential({ layers: [{ type: 'conv2d', channels: [1, 8], kernelSize: 3, padding: 'full' }] }), 'Config',
      'layers[0] (conv2d): padding: expected "valid", "same" or [height, width]');
    expectKilnError(() => kiln.nn.sequential({ layers: [{ type: 'relu', inplace: true }] }), 'Config',
      'layers[0] (relu): unknown field "inplace"');
    expectKilnError(() => kiln.nn.sequential({ layers: ['relu'] }), 'Config',
      'layers[0]: expected an object such as {type: \'relu\'}, got the string "relu"');
    expectKilnError(() => kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 2, d_input: 2, dOutput: 1 }] }), 'Config',
      'the field d_input is given twice');
    expectKilnError(() => kiln.nn.sequential({ layer: [] }), 'Config', 'unknown field "layer"');
    expectKilnError(() => kiln.nn.sequential(42), 'Config', 'spec must be {layers: [...]}');
    expectKilnError(() => kiln.nn.sequential({ layers: [] }, { seed: -1 }), 'Type', 'seed must be an integer >= 0');
    expectKilnError(() => kiln.nn.sequential({ layers: [] }, { sed: 1 }), 'Type', 'unknown option "sed"');
  });

  it('names the layer in Shape errors of forward, and the model keeps working', () => {
    const model = kiln.nn.sequential({ layers: [{ type: 'relu' }, { type: 'conv2d', channels: [1, 2], kernelSize: 3 }] });
    const flat = kiln.Tensor.zeros([2, 36]);
    expectKilnError(() => model.forward(flat), 'Shape',
      'Sequential::forward: layer 1 (conv2d): expected input [batch_size, channels, height, width] (rank 4), got [2, 36]; add a reshape layer before it');
    const images = kiln.Tensor.zeros([2, 1, 5, 5]);
    const y = model.forward(images);
    expect(y.shape).toEqual([2, 2, 3, 3]);
    expectKilnError(() => model.forward(kiln.Tensor.zeros([4])), 'Shape', 'rank 2 to 5');
    expectKilnError(() => model.forward(kiln.Tensor.zeros([2, 2], { dtype: 'int32' })), 'DType', 'expected a float32 tensor, got int32');
    expectKilnError(() => model.forward([[1, 2]]), 'Type', 'Sequential.forward: x must be a kiln Tensor');
    kiln.dispose([flat, images, y]);
    model.dispose();
  });

  it('switches dropout and batchNorm between train() and eval()', () => {
    const model = kiln.nn.sequential({ layers: [{ type: 'dropout', prob: 0.5 }] }, { seed: 1 });
    expect(model.training).toBe(true);
    const x = kiln.Tensor.ones([4, 64]);
    const train = model.forward(x).dataSync();
    // Inverted dropout: every element is 0 or 1 / (1 - 0.5) = 2, and both occur.
    expect(train.every((v) => v === 0 || v === 2)).toBe(true);
    expect(train.some((v) => v === 0) && train.some((v) => v === 2)).toBe(true);
    expect(model.eval()).toBe(model);
    expect(model.training).toBe(false);
    const evalOut = model.forward(x);
    expect(Array.from(evalOut.dataSync()).every((v) => v === 1)).toBe(true);
    expect(evalOut.isRequireGrad).toBe(false);
    model.train();
    expect(model.training).toBe(true);
    expectKilnError(() => model.train('yes'), 'Type', 'mode must be a boolean');
    evalOut.dispose();
    x.dispose();

    // batchNorm: batch statistics in training (and the running ones move), running ones in eval.
    const bn = kiln.nn.batchNorm({ numFeatures: 2, momentum: 0.5 });
    const xb = kiln.Tensor.fromData([[1, -2], [3, 2]]);
    const yb = bn.forward(xb);
    expectClose(yb.dataSync(), [-1, -1, 1, 1], { abs: 1e-4, rel: 1e-4 });
    const p = bn.namedParameters();
    expectClose(p.running_mean.dataSync(), [1, 0], { abs: 0, rel: 0 });
    expectClose(p.running_var.dataSync(), [1.5, 4.5], { abs: 0, rel: 0 });
    expect(Array.from(p.num_batches_tracked.dataSync())).toEqual([1]);
    bn.eval();
    const ye = bn.forward(kiln.Tensor.fromData([[1, 4.5]]));
    expectClose(ye.dataSync(), [0, Math.sqrt(4.5)], { abs: 1e-4, rel: 1e-4 });
    kiln.dispose([xb, yb, p, ye]);
    bn.dispose();
    model.dispose();
  });

  it('gives gradients of the parameters through backward() in train mode', () => {
    const model = smallMlp();
    const x = kiln.Tensor.fromData([[1, 2], [3, -1]]);
    const y = model.forward(x);
    const loss = y.sum();
    const grads = loss.backward();
    const p = model.namedParameters();
    // d sum(y)/d b2 = 2 rows; d/d W2 = Σ_rows relu(h) = [0 + 4, 3 + 0, 1.5 + 0].
    expectClose(p['2.bias'].grad(grads).dataSync(), [2], { abs: 0, rel: 0 });
    expectClose(p['2.weight'].grad(grads).dataSync(), [4, 3, 1.5], { abs: 0, rel: 0 });
    // In noGrad the output has no graph.
    const z = kiln.noGrad(() => model.forward(x));
    expect(z.isRequireGrad).toBe(false);
    kiln.dispose([x, y, loss, grads, p, z]);
    model.dispose();
  });

  it('prints a summary with output shapes and parameter counts', () => {
    const model = kiln.nn.sequential({
      layers: [
        { type: 'reshape', shape: [1, 28, 28] },
        { type: 'conv2d', channels: [1, 8], kernelSize: [3, 3] },
        { type: 'relu' },
        { type: 'maxPool2d', kernelSize: [2, 2] },
        { type: 'flatten' },
        { type: 'linear', dInput: 1352, dOutput: 10 },
      ],
    });
    const s = model.summary();
    expect(s).toContain('Sequential: 6 layers, 13,610 parameters (13,610 trainable)');
    expect(s).toMatch(/1\s+conv2d\s+\[batch_size, 8, 26, 26\]\s+80/);
    expect(s).toMatch(/5\s+linear\s+\[batch_size, 10\]\s+13,530/);
    const withInput = model.summary({ inputShape: [784] });
    expect(withInput).toMatch(/1\s+conv2d\s+\[batch_size, 8, 26, 26\]/);
    expect(withInput).toMatch(/3\s+maxPool2d\s+\[batch_size, 8, 13, 13\]/);
    expectKilnError(() => model.summary({ inputShape: [100] }), 'Config', 'layers[0] (reshape)');
    expect(model.outputShape([784])).toEqual([10]);
    expect(String(model)).toContain('1: Conv2d {ch_in: 1, ch_out: 8');
    model.dispose();
    // Without a reshape first, the spec does not fix the height and width.
    const conv = kiln.nn.sequential({ layers: [{ type: 'conv2d', channels: [1, 8], kernelSize: 3 }] });
    expect(conv.summary()).toMatch(/0\s+conv2d\s+\[batch_size, 8, \?, \?\]\s+80/);
    expect(conv.summary({ inputShape: [1, 5, 5] })).toMatch(/0\s+conv2d\s+\[batch_size, 8, 3, 3\]\s+80/);
    conv.dispose();
  });

  it('throws Disposed after dispose(), which is idempotent', () => {
    const model = kiln.nn.sequential({ layers: [{ type: 'relu' }] });
    model.dispose();
    model.dispose();
    expect(model.isDisposed).toBe(true);
    const x = kiln.Tensor.zeros([1, 2]);
    expectKilnError(() => model.forward(x), 'Disposed', 'Sequential.forward: the model was disposed');
    expectKilnError(() => model.numParams, 'Disposed');
    expectKilnError(() => model.saveSafetensors(), 'Disposed');
    x.dispose();
    expectKilnError(() => new kiln.nn.Sequential(), 'Type', 'use kiln.nn.sequential(spec)');
  });
});

describe('kiln.nn single layers', () => {
  it('build every layer type from its config', () => {
    const x4 = kiln.Tensor.ones([2, 4, 6, 6]);
    const cases = [
      [kiln.nn.conv2d({ channels: [4, 2], kernelSize: 3, padding: [1, 1] }), x4, [2, 2, 6, 6]],
      [kiln.nn.maxPool2d({ kernelSize: [2, 2] }), x4, [2, 4, 3, 3]],
      [kiln.nn.avgPool2d({ kernelSize: 3, stride: 3 }), x4, [2, 4, 2, 2]],
      [kiln.nn.adaptiveAvgPool2d({ outputSize: [1, 1] }), x4, [2, 4, 1, 1]],
      [kiln.nn.batchNorm({ numFeatures: 4 }), x4, [2, 4, 6, 6]],
      [kiln.nn.layerNorm({ dModel: 6 }), x4, [2, 4, 6, 6]],
      [kiln.nn.flatten(), x4, [2, 144]],
      [kiln.nn.reshape({ shape: [16, -1] }), x4, [2, 16, 9]],
      [kiln.nn.relu(), x4, [2, 4, 6, 6]],
      [kiln.nn.gelu({ approximate: true }), x4, [2, 4, 6, 6]],
      [kiln.nn.sigmoid(), x4, [2, 4, 6, 6]],
      [kiln.nn.tanh(), x4, [2, 4, 6, 6]],
      [kiln.nn.silu(), x4, [2, 4, 6, 6]],
      [kiln.nn.leakyRelu({ negativeSlope: 0.1 }), x4, [2, 4, 6, 6]],
      [kiln.nn.dropout({ prob: 0 }), x4, [2, 4, 6, 6]],
      [kiln.nn.linear({ dInput: 6, dOutput: 3 }), x4, [2, 4, 6, 3]],
    ];
    const x3 = kiln.Tensor.ones([2, 4, 10]);
    cases.push([kiln.nn.conv1d({ channels: [4, 2], kernelSize: 3, padding: 'same' }), x3, [2, 2, 10]]);
    for (const [layer, x, shape] of cases) {
      const y = layer.forward(x);
      expect(y.shape, layer.type).toEqual(shape);
      y.dispose();
      expect(kiln.nn.layerTypes).toContain(layer.type);
      layer.dispose();
    }
    kiln.dispose([x4, x3]);
    expectKilnError(() => kiln.nn.linear({ dInput: 2 }), 'Config', 'layers[0] (linear): missing required field "dOutput"');
    expectKilnError(() => kiln.nn.conv2d({ type: 'linear' }), 'Config', 'nn.conv2d: type is "conv2d"');
    expectKilnError(() => kiln.nn.relu('x'), 'Config', 'nn.relu: the config must be an object');
  });

  it('record the layer\'s own keys and values by hand (conv2d)', () => {
    const conv = kiln.nn.conv2d({ channels: [1, 1], kernelSize: [2, 2] });
    expect(Object.keys(safetensorsHeader(conv.saveSafetensors())).filter((k) => k !== '__metadata__').sort()).toEqual(['bias', 'weight']);
    conv.loadSafetensors(safetensorsBytes({
      weight: { dtype: 'F32', shape: [1, 1, 2, 2], data: [1, 1, 1, 1] },
      bias: { dtype: 'F32', shape: [1], data: [1] },
    }));
    // 3x3 image 1..9: window sums + 1 = [[13, 17], [25, 29]].
    const y = conv.forward(kiln.Tensor.fromData([1, 2, 3, 4, 5, 6, 7, 8, 9], { shape: [1, 1, 3, 3] }));
    expectClose(y.dataSync(), [13, 17, 25, 29], { abs: 0, rel: 0 });
    y.dispose();
    conv.dispose();
  });
});

describe('Sequential SafeTensors records', () => {
  it('saves PyTorch nn.Sequential keys and loads them back', () => {
    const spec = { layers: [
      { type: 'linear', dInput: 4, dOutput: 8 }, { type: 'relu' },
      { type: 'batchNorm', numFeatures: 8 }, { type: 'linear', dInput: 8, dOutput: 2 }] };
    const a = kiln.nn.sequential(spec, { seed: 1 });
    const bytes = a.saveSafetensors();
    expect(bytes).toBeInstanceOf(Uint8Array);
    const header = safetensorsHeader(bytes);
    expect(Object.keys(header).filter((k) => k !== '__metadata__').sort()).toEqual([
      '0.bias', '0.weight', '2.bias', '2.num_batches_tracked', '2.running_mean', '2.running_var',
      '2.weight', '3.bias', '3.weight']);
    expect(header['0.weight']).toMatchObject({ dtype: 'F32', shape: [8, 4] });
    expect(header['2.num_batches_tracked'].dtype).toBe('I64');
    const b = kiln.nn.sequential(spec, { seed: 2 });
    expect(b.saveSafetensors()).not.toEqual(bytes);
    expect(b.loadSafetensors(bytes)).toBe(b);
    expect(b.saveSafetensors()).toEqual(bytes);
    a.dispose();
    b.dispose();
  });

  it('rejects bad bytes with Format and leaves the model unchanged', () => {
    const model = smallMlp();
    const before = model.saveSafetensors();
    expectKilnError(() => model.loadSafetensors(new Uint8Array([1, 2, 3])), 'Format');
    expectKilnError(() => model.loadSafetensors(before.subarray(0, before.length - 4)), 'Format');
    // Wrong shape: names the key and both shapes; nothing of the file is applied.
    expectKilnError(() => model.loadSafetensors(safetensorsBytes({
      '0.weight': { dtype: 'F32', shape: [3, 2], data: [9, 9, 9, 9, 9, 9] },
      '0.bias': { dtype: 'F32', shape: [3], data: [9, 9, 9] },
      '2.weight': { dtype: 'F32', shape: [3, 1], data: [9, 9, 9] },
      '2.bias': { dtype: 'F32', shape: [1], data: [9] },
    })), 'Format', '"2.weight" has shape [3, 1], module expects [1, 3]');
    expectKilnError(() => model.loadSafetensors(safetensorsBytes({
      '0.weight': { dtype: 'F32', shape: [3, 2], data: [9, 9, 9, 9, 9, 9] },
    })), 'Format', 'missing');
    expect(model.saveSafetensors()).toEqual(before);
    expectKilnError(() => model.loadSafetensors([1, 2]), 'Type', 'bytes must be a Uint8Array');
    model.dispose();
  });
});
