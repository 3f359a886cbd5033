// kiln-dl's training API: kiln.loss (train/loss.ts), kiln.optim (train/optim.ts: optimizers
// and schedules), kiln.data (train/data.ts: datasets in WebAssembly memory) and kiln.Learner
// (train/learner.ts). Engine side: bindings/train_*.cpp. Option and log types: train_api.ts.
import type { Engine } from './tensor/engine.js';
import { installData } from './train/data.js';
import { installLearner } from './train/learner.js';
import { installLoss } from './train/loss.js';
import { installMetrics } from './train/metrics.js';
import { installOptim } from './train/optim.js';

export { Dataset } from './train/data.js';
export { Learner } from './train/learner.js';
export { Loss } from './train/loss.js';
export { Optimizer, Schedule, ReduceLROnPlateau } from './train/optim.js';
export { GradientsAccumulator } from './train/accumulator.js';
export { Metric, Accuracy, TopKAccuracy, Loss as LossMetric, LearningRate } from './train/metrics.js';

/** Installs kiln.loss, kiln.optim, kiln.data and kiln.Learner onto `kiln`. */
export function installTrain(kiln: Record<string, unknown>, e: Engine): void {
  installLoss(kiln, e);
  installOptim(kiln, e);
  installData(kiln, e);
  installLearner(kiln, e);
  installMetrics(kiln);
}
