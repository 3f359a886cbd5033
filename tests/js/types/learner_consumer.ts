// A TypeScript consumer of kiln-dl's training additions (issue 15: the Learner for any model,
// kiln.metrics, OneCycle and ReduceLROnPlateau, clipGradNorm/clipGradValue,
// GradientsAccumulator, optimizer saveState/loadState and config): must type-check with
// `tsc --noEmit --strict` (tests/js/learner_types.test.mjs). @ts-expect-error lines must stay errors.
import { init } from 'kiln-dl';
import type {
  CheckpointStore, GeneralEpochLog, IndexedDBStore, GeneralHistory, Kiln, Metric, MetricInfo, ReduceLROnPlateauState, StepFn, Tensor,
} from 'kiln-dl';

export async function main(): Promise<number> {
  const kiln: Kiln = await init();

  class Net extends kiln.Module {
    fc = kiln.nn.linear({ dInput: 4, dOutput: 3 });
    forward(x: Tensor): Tensor {
      return this.fc.forward(x);
    }
  }
  const net = new Net();
  const optimizer = kiln.optim.adam({ lr: 1e-3 });
  const defaults: Readonly<Record<string, unknown>> = optimizer.config;

  // schedules and clipping
  const oneCycle = kiln.optim.schedule.oneCycle({ maxLr: 0.1, totalSteps: 100, annealStrategy: 'linear', threePhase: true });
  const rates: Float64Array = oneCycle.values(10);
  const momenta: Float64Array = oneCycle.momentumValues(10);
  const plateau = new kiln.optim.ReduceLROnPlateau(optimizer, { mode: 'min', patience: 2, thresholdMode: 'abs' });
  const lr: number = plateau.step(0.5);
  const state: ReduceLROnPlateauState = plateau.state();
  plateau.loadState(state);
  const g = kiln.Tensor.ones([3]);
  const total: number = kiln.optim.clipGradNorm([g], 1, { normType: Infinity, errorIfNonfinite: true });
  kiln.optim.clipGradValue([g], 0.5);
  const totalAsync: Promise<number> = kiln.optim.clipGradNormAsync([g], 1, { normType: 2 });

  // optimizer state and accumulation
  const bytes: Uint8Array = optimizer.saveState(net);
  optimizer.loadState(net, bytes);
  const acc = new kiln.optim.GradientsAccumulator();
  acc.accumulate(net, net.forward(kiln.Tensor.ones([2, 4])).sum().backward());
  optimizer.step(net, acc.grads());

  // metrics, standalone and custom
  const accuracy = new kiln.metrics.Accuracy();
  accuracy.update(kiln.Tensor.ones([2, 3]), kiln.Tensor.fromData([0, 1], { dtype: 'int32' }));
  const value: number = accuracy.value();
  class Rows extends kiln.metrics.Metric {
    readonly name = 'rows';
    n = 0;
    update(output: Tensor | undefined, _targets: unknown, _info?: MetricInfo): void {
      this.n += output ? output.shape[0] : 0;
    }
    value(): number {
      return this.n;
    }
    reset(): void {
      this.n = 0;
    }
  }
  const metrics: Metric[] = [accuracy, new kiln.metrics.TopKAccuracy({ k: 2 }), new Rows(), new kiln.metrics.LearningRate()];

  // the Learner for any model
  const step: StepFn = (model, batch) => {
    const { x, y } = batch as { x: Tensor; y: Tensor };
    const output = (model as Net).forward(x);
    return { loss: kiln.loss.crossEntropy().forward(output, y), output, targets: y };
  };
  const files = new Map<string, Uint8Array | string>();
  const store: CheckpointStore = { save: (name, data) => void files.set(name, data), load: (name) => files.get(name) };
  // the browser's store: kiln.io.indexedDBStore is a CheckpointStore
  const idbStore: IndexedDBStore = kiln.io.indexedDBStore('net/');
  const asCheckpointStore: CheckpointStore = idbStore;
  const stored: Uint8Array | string | undefined = await idbStore.load('latest.json');
  const storedNames: string[] = await idbStore.list();
  void [asCheckpointStore, stored, storedNames];
  // @ts-expect-error the prefix is a string
  kiln.io.indexedDBStore(3);
  const learner = new kiln.Learner(net, {
    optimizer, trainStep: step, metrics, lrScheduler: { scheduler: plateau, monitor: 'train.loss' },
    gradientAccumulation: 2, checkpointer: { store, every: 1 }, earlyStopping: { patience: 3, minDelta: 1e-4, mode: 'min' },
  });
  const batches = [{ x: kiln.Tensor.ones([2, 4]), y: kiln.Tensor.fromData([0, 1], { dtype: 'int32' }) }];
  const history: GeneralHistory = await learner.fit(batches, {
    epochs: 2, progress: false,
    callbacks: { onEpochEnd: (log: GeneralEpochLog) => void log.train.loss, onBatchEnd: (b) => void b.itemsPerSecond },
  });
  const last: GeneralEpochLog | undefined = history.epochs.at(-1);

  // @ts-expect-error gradientAccumulation is a number
  new kiln.Learner(net, { optimizer, trainStep: step, gradientAccumulation: '2' });
  // @ts-expect-error clipGradNorm takes an array of tensors
  kiln.optim.clipGradNorm(g, 1);
  // @ts-expect-error mode is 'min' | 'max'
  new kiln.optim.ReduceLROnPlateau(optimizer, { mode: 'lowest' });

  void [defaults, rates, momenta, lr, total, totalAsync, value, last];
  return history.epochs.length;
}
