// A TypeScript consumer of kiln.nn's layers, kiln.nn.functional and the losses of issue 15:
// must type-check with `tsc --noEmit --strict` (tests/js/nn_types.test.mjs). The lines
// marked ts-expect-error must stay errors: if the declarations became too loose, tsc would
// report the markers as unused.
import { init } from 'kiln-dl';
import type { BatchNormResult, Kiln, Layer, LayerSpec, Loss, NnFunctional, Sequential, SequentialSpec, Tensor } from 'kiln-dl';

export async function main(): Promise<number> {
  const kiln: Kiln = await init();
  const spec: SequentialSpec = {
    layers: [
      { type: 'embedding', nEmbedding: 100, dModel: 8, paddingIdx: 0 },
      { type: 'layerNorm', normalizedShape: [5, 8] },
      { type: 'rmsNorm', dModel: 8 },
      { type: 'maxPool1d', kernelSize: 2, ceilMode: true },
      { type: 'avgPool1d', kernelSize: 3, stride: 1, padding: 1, countIncludePad: false },
      { type: 'adaptiveAvgPool1d', outputSize: 2 },
      { type: 'instanceNorm', numChannels: 5 },
      { type: 'batchNorm', numFeatures: 5, momentum: null },
    ],
  };
  const model: Sequential = kiln.nn.sequential(spec);
  const ids: Tensor = kiln.Tensor.fromData([[1, 2, 3, 4, 5]], { dtype: 'int32' });
  const h: Tensor = model.forward(ids);
  const up: Layer = kiln.nn.convTranspose2d({ channels: [4, 2], kernelSize: 3, stride: 2, padding: 1, paddingOut: 1 });
  const emb: Layer = kiln.nn.embedding({ nEmbedding: 10, dModel: 4, paddingIdx: -1 }, { seed: 1 });
  const ln: Layer = kiln.nn.layerNorm({ dModel: 4 });
  const layers: Layer[] = [kiln.nn.instanceNorm({ numChannels: 2 }), kiln.nn.rmsNorm({ dModel: 4, epsilon: 1e-6 }),
    kiln.nn.maxPool1d({ kernelSize: 2 }), kiln.nn.avgPool1d({ kernelSize: 2 }), kiln.nn.adaptiveAvgPool1d({ outputSize: 1 })];
  const type: LayerSpec['type'] = up.type;

  const F: NnFunctional = kiln.nn.functional;
  const x: Tensor = kiln.Tensor.zeros([1, 4, 5, 5]);
  const w: Tensor = kiln.Tensor.zeros([8, 4, 3, 3]);
  const y: Tensor = F.conv2d(x, w, null, { stride: [2, 1], padding: 1, dilation: 1, groups: 1 });
  const y1: Tensor = F.conv1d(kiln.Tensor.zeros([1, 2, 6]), kiln.Tensor.zeros([3, 2, 2]), undefined, { padding: 'valid' });
  const y2: Tensor = F.convTranspose2d(x, kiln.Tensor.zeros([4, 2, 3, 3]), kiln.Tensor.zeros([2]), { paddingOut: [1, 0], stride: 2 });
  const p: Tensor = F.maxPool2d(x, { kernelSize: 2, ceilMode: true });
  const p1: Tensor = F.avgPool1d(kiln.Tensor.zeros([1, 1, 6]), { kernelSize: 3, countIncludePad: false });
  const a: Tensor = F.adaptiveAvgPool2d(x, [2, 3]);
  const d: Tensor = F.dropout(x, { p: 0.5, mask: kiln.Tensor.ones([1, 4, 5, 5]) });
  const l: Tensor = F.linear(kiln.Tensor.zeros([2, 3]), kiln.Tensor.zeros([4, 3]), kiln.Tensor.zeros([4]));
  const e: Tensor = F.embedding(ids, kiln.Tensor.zeros([10, 3]), { paddingIdx: 0 });
  const n1: Tensor = F.layerNorm(x, [5, 5], { epsilon: 1e-5 });
  const n2: Tensor = F.groupNorm(x, 2, { weight: kiln.Tensor.ones([4]) });
  const bnEval: Tensor = F.batchNorm(x, kiln.Tensor.zeros([4]), kiln.Tensor.ones([4]));
  const bnTrain: BatchNormResult = F.batchNorm(x, null, null, { training: true, momentum: 0.1 });
  const r: Tensor = F.relu(F.gelu(x));
  const losses: Tensor[] = [
    F.crossEntropy(kiln.Tensor.zeros([2, 3]), kiln.Tensor.fromData([0, 1], { dtype: 'int32' }), { labelSmoothing: 0.1 }),
    F.huber(l, l, { delta: 0.5, reduction: 'none' }),
    F.smoothL1(l, l, { beta: 0 }),
    F.binaryCrossEntropyWithLogits(l, l, { posWeight: [1, 2, 3, 4], weight: l }),
    F.binaryCrossEntropy(l, l, { weight: l, reduction: 'sum' }),
  ];
  const huber: Loss = kiln.loss.huber({ delta: 1 });
  const sl1: Loss = kiln.loss.smoothL1({ beta: 0.5, reduction: 'sum' });
  const bce: Loss = kiln.loss.binaryCrossEntropy({ logits: true, posWeight: [2] });

  // @ts-expect-error: a layerNorm needs dModel or normalizedShape
  kiln.nn.layerNorm({ epsilon: 1e-5 });
  // @ts-expect-error: embedding needs nEmbedding
  kiln.nn.embedding({ dModel: 4 });
  // @ts-expect-error: maxPool1d takes a number, not a pair
  F.maxPool1d(kiln.Tensor.zeros([1, 1, 4]), { kernelSize: [2, 2] });
  // @ts-expect-error: batchNorm in training mode returns the statistics too
  const wrong: Tensor = F.batchNorm(x, null, null, { training: true });
  // @ts-expect-error: smoothL1 has beta, not delta
  kiln.loss.smoothL1({ delta: 1 });
  void [h, emb, ln, layers, type, y, y1, y2, p, p1, a, d, e, n1, n2, bnEval, bnTrain, r, losses, huber, sl1, bce, wrong];
  // Issue 19's 3-D and transposed 1-D convolutions.
  const v: Tensor = kiln.Tensor.zeros([1, 2, 4, 4, 4]);
  const c3: Layer = kiln.nn.conv3d({ channels: [2, 4], kernelSize: [3, 3, 1], padding: 'same', stride: 1 });
  const t3: Layer = kiln.nn.convTranspose3d({ channels: [2, 4], kernelSize: 2, stride: [2, 2, 1], paddingOut: [1, 1, 0] });
  const t1: Layer = kiln.nn.convTranspose1d({ channels: [2, 4], kernelSize: 3, stride: 2, paddingOut: 1 });
  const convs: Tensor[] = [F.conv3d(v, kiln.Tensor.zeros([4, 2, 3, 3, 3]), null, { padding: [1, 1, 0], groups: 2 }),
    F.convTranspose3d(v, kiln.Tensor.zeros([2, 4, 2, 2, 2]), undefined, { stride: 2, paddingOut: [1, 0, 0] }),
    F.convTranspose1d(kiln.Tensor.zeros([1, 2, 6]), kiln.Tensor.zeros([2, 4, 3]), null, { dilation: 2 })];
  const spec3: SequentialSpec = { layers: [{ type: 'conv3d', channels: [2, 4], kernelSize: 3 }, { type: 'convTranspose3d', channels: [4, 2], kernelSize: 2 }] };
  // @ts-expect-error: conv3d sizes have three entries
  F.conv3d(v, v, null, { stride: [1, 2] });
  // @ts-expect-error: convTranspose1d takes a number, not a pair
  kiln.nn.convTranspose1d({ channels: [2, 4], kernelSize: [3, 3] });
  void [c3, t3, t1, convs, spec3];
  return 0;
}

/** Issue 19: the 3-D pools, interpolate and upsample, as layers, specs and functions. */
export async function resample(): Promise<number> {
  const kiln: Kiln = await init();
  const F: NnFunctional = kiln.nn.functional;
  const spec: SequentialSpec = {
    layers: [
      { type: 'maxPool3d', kernelSize: 2, stride: [1, 2, 2], ceilMode: true },
      { type: 'avgPool3d', kernelSize: [1, 2, 2], countIncludePad: false },
      { type: 'adaptiveAvgPool3d', outputSize: [1, 2, 2] },
      { type: 'flatten', startDim: 2 },
      { type: 'upsample', scaleFactor: 2 },
    ],
  };
  const up: Layer = kiln.nn.upsample({ size: [8, 8], mode: 'bilinear', alignCorners: true });
  const x = kiln.Tensor.zeros([1, 1, 4, 4, 4]);
  const pooled: Tensor[] = [
    F.maxPool3d(x, { kernelSize: [2, 2, 2], dilation: 1 }),
    F.avgPool3d(x, { kernelSize: 2, padding: [1, 0, 0] }),
    F.adaptiveAvgPool3d(x, [1, 1, 1]),
    F.interpolate(kiln.Tensor.zeros([1, 1, 2, 2]), { scaleFactor: [2, 1.5], mode: 'bilinear' }),
  ];
  // @ts-expect-error: a 3-D kernel has three entries
  F.maxPool3d(x, { kernelSize: [2, 2] });
  // @ts-expect-error: interpolate's modes are nearest and bilinear
  F.interpolate(x, { size: 2, mode: 'bicubic' });
  // @ts-expect-error: upsample's scaleFactor is a number or numbers
  kiln.nn.upsample({ scaleFactor: '2' });
  void [spec, up, pooled];
  return 0;
}
