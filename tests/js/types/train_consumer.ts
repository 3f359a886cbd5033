// A TypeScript consumer of kiln-dl's models and training API: must type-check with
// `tsc --noEmit --strict` (tests/js/train_types.test.mjs). The @ts-expect-error lines must
// stay errors: if the declarations became too loose, tsc would report them as unused.
import { init } from 'kiln-dl';
import type { Dataset, EpochLog, History, Kiln, Layer, LayerSpec, Learner, Optimizer, Sequential, SequentialSpec, Tensor } from 'kiln-dl';

export async function main(): Promise<number> {
  const kiln: Kiln = await init();
  const spec: SequentialSpec = {
    layers: [
      { type: 'reshape', shape: [1, 28, 28] },
      { type: 'conv2d', channels: [1, 8], kernelSize: [3, 3], padding: 'same' },
      { type: 'batchNorm', numFeatures: 8 },
      { type: 'relu' },
      { type: 'maxPool2d', kernelSize: 2 },
      { type: 'flatten' },
      { type: 'dropout', prob: 0.2 },
      { type: 'linear', dInput: 1568, dOutput: 10 },
    ],
  };
  const model: Sequential = kiln.nn.sequential(spec, { seed: 42 });
  const x: Tensor = kiln.Tensor.zeros([2, 784]);
  const y: Tensor = model.eval().train().forward(x);
  const bytes: Uint8Array = model.saveSafetensors();
  model.loadSafetensors(bytes);
  const summary: string = model.summary({ inputShape: [784] });
  const params: Record<string, Tensor> = model.namedParameters();
  const fc = kiln.nn.linear({ dInput: 4, dOutput: 2, bias: false });
  const both: Sequential = kiln.nn.sequential([fc, { type: 'relu' }]);
  const layerSpec: LayerSpec = (fc as Layer).config;
  const specAgain: SequentialSpec = both.config;

  const ce = kiln.loss.crossEntropy({ labelSmoothing: 0.1 });
  const l: Tensor = ce.forward(y, kiln.Tensor.fromData([1, 2], { dtype: 'int32' }));
  const optimizer: Optimizer = kiln.optim.adam({ lr: kiln.optim.schedule.cosine({ initialLr: 1e-3, numIters: 100 }) });
  optimizer.step(model, l.backward());
  const sgd = kiln.optim.sgd({ lr: 0.1, momentum: 0.9, nesterov: true, gradClipping: { norm: 1 } });

  const data: Dataset = kiln.data.fromArrays(new Float32Array(784 * 4), new Int32Array(4), { itemShape: [784], numClasses: 10 });
  const [train, valid] = data.shuffle(1).split(0.75);
  const learner: Learner = new kiln.Learner(model, { optimizer, loss: 'crossEntropy', seed: 0 });
  const step: { loss: number; accuracy: number } = learner.trainBatch(new Float32Array(784), new Int32Array(1));
  const signal = { aborted: false };
  const history: History = await learner.fit(train, {
    epochs: 1, batchSize: 2, validationData: valid, batchesPerCall: 2, signal,
    onBatchEnd: async ({ loss, itemsPerSecond }) => { if (loss + itemsPerSecond < 0) throw new Error('negative'); },
    onEpochEnd: (e: EpochLog) => { if (e.validAccuracy === undefined) throw new Error('no validation'); },
  });
  const probs: Float32Array = learner.predict(valid, { batchSize: 16 });
  const ev = learner.evaluate(valid);

  // @ts-expect-error an unknown layer type
  kiln.nn.sequential({ layers: [{ type: 'lineer' }] });
  // @ts-expect-error dInput is a number
  kiln.nn.linear({ dInput: '2', dOutput: 1 });
  // @ts-expect-error an optimizer is required
  new kiln.Learner(model, { loss: 'mse' });
  // @ts-expect-error labels are Int32Array or Float32Array
  learner.trainBatch(new Float32Array(784), [1]);

  kiln.dispose([x, y, l, params]);
  for (const o of [learner, optimizer, sgd, model, fc, both, data, train, valid]) o.dispose();
  return layerSpec.type.length + specAgain.layers.length + bytes.length + summary.length + step.loss + history.loss.length + probs.length + ev.accuracy;
}
