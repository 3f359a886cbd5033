// Step 6 of the tutorial: a tour of the built-in layers, and a small CNN.
//
//   node examples/js/tutorial/06_layers.mjs
//
// Burn: `ThingConfig::new(required).with_option(v).init(&device)` gives a Thing with
// `forward`. Kiln C++: the same (`nn::Conv2dConfig({1, 32}, {3, 3}).with_padding(
// nn::PaddingConfig2d::same()).init<B>(device)`). kiln-dl: `kiln.nn.conv2d({channels: [1, 32],
// kernelSize: [3, 3], padding: 'same'})` — every option of the C++ config, in camelCase, with
// the same defaults — and `layer.forward(x)`. The functions behind the layers are in
// kiln.nn.functional (PyTorch's torch.nn.functional) for writing your own.
import { init } from 'kiln-dl';

const kiln = await init({ engine: 'full' }); // conv, norm, pool and embedding layers: the full engine
const { Tensor } = kiln;
const { nn } = kiln;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);

kiln.seed(5);
const layers = [];
const keep = (l) => (layers.push(l), l);
kiln.tidy(() => {
  // ---- Linear: [batch, 784] -> [batch, 128] ----
  const linear = keep(nn.linear({ dInput: 784, dOutput: 128, bias: true }));
  show('linear.out', linear.forward(Tensor.zeros([2, 784])).shape);

  // ---- Conv2d with 'same' padding: [batch, 1, 28, 28] -> [batch, 32, 28, 28] ----
  const conv = keep(nn.conv2d({ channels: [1, 32], kernelSize: [3, 3], padding: 'same', stride: [1, 1] }));
  const image = Tensor.random([2, 1, 28, 28], { normal: [0, 1] });
  show('conv2d.out', conv.forward(image).shape);
  // Stride 2, no padding: floor((28 - 3) / 2) + 1 = 13.
  const strided = keep(nn.conv2d({ channels: [1, 4], kernelSize: [3, 3], stride: [2, 2] }));
  show('conv2d.stride2.out', strided.forward(image).shape);

  // ---- BatchNorm: the same shape, each channel normalised over the batch ----
  const bn = keep(nn.batchNorm({ numFeatures: 32 }));
  const normed = bn.forward(conv.forward(image));
  show('batchNorm.out', normed.shape);
  // In training mode each channel of the output has mean 0 and variance 1 over (batch, h, w).
  const channelMean = normed.mean(0).mean(2).mean(3).abs().max().item();
  show('batchNorm.channelMeanNearZero', channelMean < 1e-4);

  // ---- Dropout: zeroes elements with probability prob in training, scales the rest by 1/(1-prob) ----
  const dropout = keep(nn.dropout({ prob: 0.5 }));
  const dropped = Array.from(dropout.forward(Tensor.ones([1, 1000])).dataSync());
  show('dropout.values', [...new Set(dropped)].sort());
  dropout.eval();                                       // off in inference mode
  show('dropout.eval.identity', dropout.forward(Tensor.ones([1, 4])).toArray());

  // ---- Pooling ----
  const maxPool = keep(nn.maxPool2d({ kernelSize: [2, 2], stride: [2, 2] }));
  show('maxPool2d.out', maxPool.forward(image).shape);   // halves h and w
  const adaptive = keep(nn.adaptiveAvgPool2d({ outputSize: [1, 1] }));
  show('adaptiveAvgPool2d.out', adaptive.forward(image).shape);
  const grid = Tensor.fromData([[[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]]]]);
  show('maxPool2d.values', maxPool.forward(grid).toArray());
  show('adaptiveAvgPool2d.value', adaptive.forward(grid).toArray());
  const pool1d = keep(nn.maxPool1d({ kernelSize: 2 }));
  show('maxPool1d.values', pool1d.forward(Tensor.fromData([[[1, 5, 2, 4, 3, 0]]])).toArray());

  // ---- Embedding: int32 token ids [batch, seq] -> [batch, seq, dModel] ----
  const embed = keep(nn.embedding({ nEmbedding: 10000, dModel: 256 }));
  const tokens = Tensor.fromData([[1, 2, 3], [4, 5, 6]], { dtype: 'int32' });
  show('embedding.out', embed.forward(tokens).shape);
  const withPadding = keep(nn.embedding({ nEmbedding: 5, dModel: 3, paddingIdx: 0 }));
  show('embedding.paddingRow', withPadding.forward(Tensor.fromData([[0]], { dtype: 'int32' })).toArray());

  // ---- Norms over the last dims ----
  const ln = keep(nn.layerNorm({ dModel: 4 }));
  const row = ln.forward(Tensor.fromData([[1, 2, 3, 4]]));
  show('layerNorm.row', Array.from(row.dataSync()).map((v) => Number(v.toFixed(4))));
  show('rmsNorm.out', keep(nn.rmsNorm({ dModel: 4 })).forward(Tensor.fromData([[1, 2, 3, 4]])).shape);

  // ---- Activations: functions on tensors, or layers ----
  const x = Tensor.fromData([[-2, -0.5, 0, 0.5, 2]]);
  show('relu', x.relu().toArray()[0]);
  show('sigmoid', Array.from(x.sigmoid().dataSync()).map((v) => Number(v.toFixed(4))));
  show('gelu', Array.from(x.gelu().dataSync()).map((v) => Number(v.toFixed(4))));
  show('softmax.sum', Number(kiln.activation.softmax(x, 1).sum().item().toFixed(5)));
  show('reluLayer', keep(nn.relu()).forward(x).toArray()[0]);

  // ---- kiln.nn.functional: the same computations on your own tensors ----
  const weight = Tensor.fromData([[[[0, 0, 0], [0, 1, 0], [0, 0, 0]]]]);   // an identity kernel
  show('functional.conv2d.identity', kiln.nn.functional.conv2d(grid, weight, null, { padding: [1, 1] }).toArray());
});

// ---- Exercise 6 ----
// A CNN for 1x28x28 images: conv 1->16 (3x3, same) -> ReLU -> maxPool 2x2 ->
// conv 16->32 (3x3, same) -> ReLU -> adaptiveAvgPool 1x1 -> flatten -> linear 32->10.
const cnn = kiln.nn.sequential([
  { type: 'conv2d', channels: [1, 16], kernelSize: [3, 3], padding: 'same' },
  { type: 'relu' },
  { type: 'maxPool2d', kernelSize: [2, 2] },
  { type: 'conv2d', channels: [16, 32], kernelSize: [3, 3], padding: 'same' },
  { type: 'relu' },
  { type: 'adaptiveAvgPool2d', outputSize: [1, 1] },
  { type: 'flatten' },
  { type: 'linear', dInput: 32, dOutput: 10 },
]);
kiln.tidy(() => show('exercise6.out', cnn.forward(Tensor.random([4, 1, 28, 28], { normal: [0, 1] })).shape));
show('exercise6.numParams', cnn.numParams);
console.log(cnn.summary({ inputShape: [1, 28, 28] }));
cnn.dispose();
for (const l of layers) l.dispose();
show('liveTensors', kiln.memory().tensors);
