// The one place where the playground talks to kiln-dl (runs in the Web Worker).
// Everything the playground needs from the engine goes through this adapter, written
// against the JS API contract of BRIEF6.md (kiln.nn.sequential, kiln.optim.*, kiln.Learner,
// model.saveSafetensors / loadSafetensors). If the package's spelling differs, fix it here.
import { init } from 'kiln-dl';
import { paramLayerMap, isIdentity, renamer, rewriteSafetensors, withConstantLr } from './live-optim.js';

const OPT_NAMES = { sgd: 'SGD', adam: 'Adam', adamw: 'AdamW' };

/** Wraps a KilnError (or any error) into a plain object that survives postMessage. */
export function errorInfo(e) {
  return { message: e?.message ?? String(e), code: e?.code ?? 'Internal' };
}

/**
 * Loads the WebAssembly engine.
 * @returns {Promise<Engine>}
 */
export async function loadEngine() {
  // The full engine: the playground's CNN mode uses convolutions and pools (its MLP mode
  // would fit in the core engine, but one session switches between the two).
  const kiln = await init({ engine: 'full' });
  // The rest of the single-thread engine (what init() leaves out to load fast: the inside
  // view, saving, regularisation, ...) is fetched in the background now, so that no later
  // action waits on a synchronous request for it; a failure here shows up, as a KilnError
  // `Io`, on the first call that needs it.
  kiln.loadDeferred().catch(() => {});
  return new Engine(kiln);
}

/**
 * Loads the webgpu engine (issue 21: the backend switch): `init({ backend: 'webgpu' })` on the
 * browser's GPU. Kiln allows one webgpu instance per page (beside the cpu one), so the worker
 * loads it once and keeps it.
 * @returns {Promise<Engine>}
 * @throws KilnError `Device` when there is no GPU (no navigator.gpu, no adapter, requestDevice
 *   failing: the message says which).
 */
export async function loadGpuEngine() {
  return new Engine(await init({ backend: 'webgpu' }));
}

/**
 * Why a set-up cannot train on the GPU backend, or null (the built-in loss path runs there).
 * L1/L2 regularisation runs a user trainStep (the Learner's general path, which reads the loss
 * synchronously): the webgpu engine does not run it.
 */
export function gpuTrainBlocker(s) {
  if ((s.reg ?? 'none') !== 'none' && s.regRate > 0) {
    return 'L1/L2 regularisation trains with a custom step (the Learner\'s general path), which the GPU backend does not run';
  }
  return null;
}

export class Engine {
  constructor(kiln) {
    this.kiln = kiln;
    /** Whether this is the webgpu engine (its reads are asynchronous: Session.predictAsync). */
    this.gpu = typeof kiln.backendInfo === 'function' && kiln.backendInfo().engine === 'webgpu';
  }

  /**
   * The SafeTensors bytes stored in IndexedDB under `name` (kiln.io: database "kiln-dl",
   * store "safetensors").
   * @throws KilnError `Io` if nothing is stored under name; `State` without IndexedDB.
   */
  loadBytesFromIndexedDB(name) {
    return this.kiln.io.loadBytesFromIndexedDB(name);
  }

  /** {simd, threads, arch, build} as the package reports it, or {} if it has no such call. */
  info() {
    return typeof this.kiln.backendInfo === 'function' ? this.kiln.backendInfo() : {};
  }

  /**
   * A training session: model + optimizer + learner.
   * @param {{layers: object[]}} spec kiln.nn.sequential spec (modelspec.js builds it)
   * @param {{opt: 'sgd'|'adam'|'adamw', lr: number, momentum: number, wd: number, seed: number,
   *   reg?: 'none'|'l1'|'l2', regRate?: number}} s
   * @param {'classification'|'regression'} [task] cross-entropy on class labels, or MSE
   *   (torch.nn.MSELoss, mean) on one float target per item
   */
  createSession(spec, s, task = 'classification') {
    const { kiln } = this;
    const model = kiln.nn.sequential(spec, { seed: s.seed });
    if (this.gpu) return this.createGpuSession(model, spec, s, task);
    let optimizer = null;
    try {
      optimizer = makeOptimizer(kiln, s);
      const learner = makeLearner(kiln, model, optimizer, s, task);
      const session = new Session(kiln, model, optimizer, learner);
      session.task = task;
      session.spec = spec;
      session.settings = { ...s };
      if ((s.reg ?? 'none') !== 'none' && s.regRate > 0) session.regularize(s.reg, s.regRate, s.seed);
      return session;
    } catch (e) {
      optimizer?.dispose?.();
      model.dispose();
      throw e;
    }
  }

  /**
   * createSession on the webgpu engine: the model always (forward passes, predictions, the
   * decision boundary: Session.predictAsync); the optimizer and the Learner's built-in loss
   * path when this build has them on webgpu (Session.fit trains with them). Where it has
   * not (KilnError `State`), or for a set-up the GPU cannot train (gpuTrainBlocker), the
   * session says why in `trainBlocked` and the page offers the CPU.
   */
  createGpuSession(model, spec, s, task) {
    const { kiln } = this;
    let optimizer = null;
    let learner = null;
    let trainBlocked = gpuTrainBlocker(s);
    if (!trainBlocked) {
      try {
        optimizer = makeOptimizer(kiln, s);
        learner = makeLearner(kiln, model, optimizer, s, task);
      } catch (e) {
        optimizer?.dispose?.();
        optimizer = null;
        if (e?.code !== 'State') {
          model.dispose();
          throw e;
        }
        trainBlocked = `training needs kiln.Learner and the optimizers on the GPU backend, which this build of kiln-dl does not have yet (${String(e.message).split(' (')[0]})`;
      }
    }
    const session = new Session(kiln, model, optimizer, learner);
    Object.assign(session, { task, spec, settings: { ...s }, gpu: true, trainBlocked });
    return session;
  }
}

/**
 * The optimizer of a set-up.
 * @param {{opt: 'sgd'|'adam'|'adamw', lr: number, momentum: number, wd: number}} s
 */
function makeOptimizer(kiln, s) {
  if (s.opt === 'sgd') return kiln.optim.sgd({ lr: s.lr, momentum: s.momentum, weightDecay: s.wd });
  if (s.opt === 'adam') return kiln.optim.adam({ lr: s.lr, weightDecay: s.wd });
  // weightDecay given explicitly: kiln's AdamW default is 0.01 (PyTorch's); the
  // playground's weight-decay field (default 0) is the setting.
  return kiln.optim.adamW({ lr: s.lr, weightDecay: s.wd });
}

/**
 * The learner of a set-up: the model, the optimizer and the loss (cross-entropy, or MSE
 * for a regression task), whole steps in the engine.
 */
function makeLearner(kiln, model, optimizer, s, task = 'classification') {
  return new kiln.Learner(model, { optimizer, loss: task === 'regression' ? 'mse' : 'crossEntropy', seed: s.seed });
}

export class Session {
  constructor(kiln, model, optimizer, learner) {
    this.kiln = kiln;
    this.model = model;
    this.optimizer = optimizer;
    this.learner = learner;
    this.task = 'classification';
    this.reg = null; // {kind, rate, seed} when a penalty is on (see regularize)
    this.regLearner = null; // the regularised step's learner (trainStep), when reg is on
    this.lastStep = null;
    /** On the webgpu engine (reads are asynchronous: predictAsync, fit). */
    this.gpu = false;
    /** Why this session cannot train (the GPU backend), or null. */
    this.trainBlocked = null;
  }

  /**
   * Trains with a penalty on the weights from now on (TF Playground's regularisation): the
   * loss of a step is data loss + rate · Σ penalty(w) over the weight tensors of the linear
   * and conv layers (parameters named "*.weight", not biases), with penalty |w| (L1) or ½w²
   * (L2), composed from kiln-dl ops in a Learner trainStep and applied by the engine's
   * guarded step (Learner.trainOnBatch). The page's loss figures stay the data loss.
   * May be called again to change the penalty ('none' or rate 0: the built-in step again).
   * @param {'none'|'l1'|'l2'} kind
   * @param {number} rate >= 0
   */
  regularize(kind, rate, seed = 0) {
    this.regLearner?.dispose();
    this.regLearner = null;
    this.reg = kind !== 'none' && rate > 0 ? { kind, rate, seed } : null;
    if (this.reg) this.regLearner = this.makeRegLearner();
  }

  /** The regularised step's Learner over the current model and optimizer. */
  makeRegLearner() {
    const { kiln } = this;
    const { kind, rate, seed } = this.reg;
    const dataLoss = this.task === 'regression' ? kiln.loss.mse() : kiln.loss.crossEntropy();
    const trainStep = (model, batch) => {
      const output = model.forward(batch.x);
      const data = dataLoss.forward(output, batch.y);
      let penalty = null;
      for (const [name, w] of Object.entries(model.namedParameters())) {
        if (!name.endsWith('.weight')) continue;
        const p = kind === 'l1' ? w.abs().sum() : w.mul(w).sum().mul(0.5);
        penalty = penalty === null ? p : penalty.add(p);
      }
      const loss = penalty === null ? data : data.add(penalty.mul(rate));
      // Read while the step's tensors live (the learner disposes them after the step).
      this.lastStep = { dataLoss: data.item(), output: output.dataSync() };
      return { loss, output, targets: batch.y };
    };
    return new kiln.Learner(this.model, { optimizer: this.optimizer, trainStep, seed });
  }

  get numParams() {
    return this.model.numParams;
  }

  summary() {
    return this.model.summary();
  }

  /** The model's JS spec as the package reports it (saved next to the weights). */
  config() {
    return this.model.config;
  }

  /**
   * One optimizer step on a batch.
   * @param {Float32Array} x [n, ...itemShape] row-major
   * @param {Int32Array | Float32Array} y [n] class indices, or targets (regression)
   * @param {number} n items in the batch
   * @param {{epoch?: number, batch?: number}} [position] the step's epoch (from 1: seeds
   *   dropout on the regularised path) and batch (names a refused step)
   * @returns {{loss: number, accuracy: number}} the batch's mean loss and accuracy (0..1)
   */
  trainBatch(x, y, n, position) {
    if (!this.reg) return this.learner.trainBatch(x, y, n);
    // A model or optimizer replaced since (e.g. new settings taking the old state over).
    if (this.regLearner.optimizer !== this.optimizer || this.regLearner.model !== this.model) {
      this.regLearner.dispose();
      this.regLearner = this.makeRegLearner();
    }
    return this.trainRegularized(x, y, n, position);
  }

  /** trainBatch with the penalty (see regularize): the data loss and accuracy of the batch. */
  trainRegularized(x, y, n, position = {}) {
    const { kiln } = this;
    const d = x.length / n;
    const regression = this.task === 'regression';
    const xt = kiln.Tensor.fromData(x, { shape: [n, d] });
    const yt = regression ? kiln.Tensor.fromData(y, { shape: [n, 1] }) : kiln.Tensor.fromData(y, { dtype: 'int32' });
    try {
      this.regLearner.trainOnBatch({ x: xt, y: yt }, position);
    } finally {
      xt.dispose();
      yt.dispose();
    }
    const { dataLoss, output } = this.lastStep;
    const k = output.length / n;
    let correct = 0;
    for (let i = 0; i < n; i++) {
      if (regression) {
        if (Math.abs(output[i] - y[i]) < 0.5) correct++;
        continue;
      }
      let best = 0;
      for (let c = 1; c < k; c++) if (output[i * k + c] > output[i * k + best]) best = c;
      if (best === y[i]) correct++;
    }
    return { loss: dataLoss, accuracy: correct / n };
  }

  /**
   * Class probabilities in evaluation mode (dropout off); regression: the raw outputs.
   * @param {Float32Array} x [n, ...itemShape]
   * @returns {Float32Array} [n, classes] row-major ([n, 1] for regression)
   */
  predict(x, batchSize = 500) {
    if (this.gpu) throw Object.assign(new Error('predict reads synchronously: on the GPU backend use predictAsync'), { code: 'State' });
    return this.learner.predict(x, { batchSize }); // the package predicts in inference mode
  }

  /**
   * predict() with asynchronous reads, for both backends: on the cpu engine it is predict()
   * (same speed); on the webgpu engine the model's forward pass in evaluation mode without
   * autodiff (softmax for classification), read with `await tensor.data()` (the webgpu
   * backend has no synchronous reads), `chunk` items per forward pass.
   * @param {Float32Array} x [n, itemSize] row-major
   * @param {number} n items in x
   * @returns {Promise<Float32Array>} [n, classes] probabilities ([n, 1] for regression)
   */
  async predictAsync(x, n, chunk = 4096) {
    if (!this.gpu) return this.predict(x, chunk);
    const { kiln, model } = this;
    const d = x.length / n;
    let out = null;
    for (let start = 0; start < n; start += chunk) {
      const count = Math.min(chunk, n - start);
      // The forward pass is recorded synchronously (the mode restored before any await:
      // a training loop may run between two reads).
      const wasTraining = model.training;
      model.eval();
      let result;
      try {
        result = kiln.noGrad(() => kiln.tidy(() => {
          const y = model.forward(kiln.Tensor.fromData(x.subarray(start * d, (start + count) * d), { shape: [count, d] }));
          return this.task === 'regression' ? y : y.softmax(1);
        }));
      } finally {
        model.train(wasTraining);
      }
      try {
        const values = await result.data();
        out ??= new Float32Array(n * (values.length / count));
        out.set(values, start * (values.length / count));
      } finally {
        result.dispose();
      }
    }
    return out;
  }

  /**
   * Training with the Learner's built-in loss path, `await learner.fit(...)`: the way the GPU
   * backend trains (no synchronous reads), `epochs` epochs over `dataset` (a kiln.data Dataset:
   * Session.dataset), `batchesPerCall` batches per call into the engine, the callbacks and the
   * abort signal as fit's.
   * @param {object} dataset
   * @param {{epochs: number, batchSize: number, batchesPerCall?: number, onBatchEnd?: Function,
   *   onEpochEnd?: Function, signal?: AbortSignal}} opts
   * @throws KilnError `State` with the reason when this session cannot train (trainBlocked).
   */
  async fit(dataset, { epochs, batchSize, batchesPerCall = 4, onBatchEnd, onEpochEnd, signal }) {
    if (this.trainBlocked) throw Object.assign(new Error(this.trainBlocked), { code: 'State' });
    return this.learner.fit(dataset, { epochs, batchSize, batchesPerCall, onBatchEnd, onEpochEnd, signal });
  }

  /**
   * The training items as a kiln.data Dataset of this session's engine (for fit).
   * @param {Float32Array} x [n, itemSize]
   * @param {Int32Array | Float32Array} y labels, or regression targets
   */
  dataset(x, y, itemSize, classes) {
    const regression = this.task === 'regression';
    return this.kiln.data.fromArrays(x, y, regression ? { itemShape: [itemSize], targetShape: [1] } : { itemShape: [itemSize], numClasses: classes });
  }

  /**
   * Every layer's output for a batch, in evaluation mode (dropout off), from one engine call
   * (kiln-dl's Sequential.forwardAll): what the "Look inside" views show.
   * @param {Float32Array} x [n, ...itemShape] row-major
   * @param {number} n items in x
   * @returns {{shape: number[], data: Float32Array}[]} one entry per layer of the spec
   */
  layerOutputs(x, n) {
    const { kiln, model } = this;
    const wasTraining = model.training;
    const input = kiln.Tensor.fromData(x, { shape: [n, x.length / n] });
    model.eval();
    try {
      const outs = model.forwardAll(input);
      try {
        return outs.map((t) => ({ shape: t.shape, data: t.dataSync() }));
      } finally {
        for (const t of outs) t.dispose();
      }
    } finally {
      input.dispose();
      model.train(wasTraining);
    }
  }

  /**
   * layerOutputs with asynchronous reads (`await tensor.data()`, both backends; the GPU's
   * "Look inside"): the forward pass is recorded synchronously, in evaluation mode.
   * @returns {Promise<{shape: number[], data: Float32Array}[]>}
   */
  async layerOutputsAsync(x, n) {
    const { kiln, model } = this;
    const wasTraining = model.training;
    let outs;
    model.eval();
    try {
      outs = kiln.noGrad(() => kiln.tidy(() => model.forwardAll(kiln.Tensor.fromData(x, { shape: [n, x.length / n] }))));
    } finally {
      model.train(wasTraining);
    }
    try {
      return await Promise.all(outs.map(async (t) => ({ shape: t.shape, data: await t.data() })));
    } finally {
      for (const t of outs) t.dispose();
    }
  }

  /** parameters with asynchronous reads (both backends; the GPU's "Look inside"). */
  async parametersAsync(want = () => true) {
    const dict = this.model.stateDict();
    try {
      const out = {};
      for (const [k, t] of Object.entries(dict)) if (want(k)) out[k] = { shape: t.shape, data: await t.data() };
      return out;
    } finally {
      for (const t of Object.values(dict)) t.dispose();
    }
  }

  /**
   * Copies of parameters by key ("0.weight", "0.bias", ...: PyTorch's nn.Sequential keys).
   * @param {(key: string) => boolean} want which keys to copy
   * @returns {Record<string, {shape: number[], data: Float32Array}>}
   */
  parameters(want = () => true) {
    const dict = this.model.stateDict();
    const out = {};
    try {
      for (const [k, t] of Object.entries(dict)) if (want(k)) out[k] = { shape: t.shape, data: t.dataSync() };
    } finally {
      for (const t of Object.values(dict)) t.dispose();
    }
    return out;
  }

  /**
   * Saliency of one input: |∂ logit_c / ∂ x| for the predicted class c (Simonyan et al.,
   * 2013), by kiln-dl's autodiff, with dropout off (a copy of the model whose dropout
   * layers have probability 0, when it has any).
   * @param {Float32Array} x [1, ...itemShape] row-major
   * @returns {{predicted: number, logits: Float32Array, map: Float32Array}} map: |gradient|, like x
   */
  saliency(x) {
    const { kiln } = this;
    const layers = this.model.config.layers;
    let model = this.model;
    let copy = null;
    if (layers.some((l) => l.type === 'dropout')) {
      copy = kiln.nn.sequential({ layers: layers.map((l) => (l.type === 'dropout' ? { ...l, prob: 0 } : l)) });
      const dict = this.model.stateDict();
      try {
        copy.loadStateDict(dict);
      } finally {
        for (const t of Object.values(dict)) t.dispose();
      }
      model = copy;
    }
    const wasTraining = model.training;
    const input = kiln.Tensor.fromData(x, { shape: [1, x.length] }).requireGrad();
    const temps = [input];
    try {
      model.train(); // the graph is recorded in training mode (no dropout here, no batchNorm in the playground)
      const logits = model.forward(input);
      temps.push(logits);
      const values = logits.dataSync();
      let predicted = 0;
      for (let c = 1; c < values.length; c++) if (values[c] > values[predicted]) predicted = c;
      const picked = logits.narrow(1, predicted, 1).sum();
      temps.push(picked);
      const grads = picked.backward();
      temps.push(grads);
      const grad = input.grad(grads);
      temps.push(grad);
      const abs = grad.abs();
      temps.push(abs);
      return { predicted, logits: values, map: abs.dataSync() };
    } finally {
      for (const t of temps) t?.dispose();
      model.train(wasTraining);
      copy?.dispose();
    }
  }

  /** @returns {Uint8Array} the weights in SafeTensors format */
  save() {
    return this.model.saveSafetensors();
  }

  /** @param {Uint8Array} bytes SafeTensors written by save() for the same spec */
  load(bytes) {
    this.model.loadSafetensors(bytes);
  }

  /**
   * Loads weights for the current layers from a file the user chose: SafeTensors, or a
   * PyTorch checkpoint (`torch.save(model.state_dict(), "m.pt")` of the equivalent
   * `nn.Sequential`, whose keys "0.weight", "2.bias", ... are the playground's). Strict:
   * every key and shape must match; on any error the model is unchanged.
   * @param {Uint8Array} bytes the file's contents
   * @param {'safetensors' | 'pytorch'} format
   * @returns {number} the number of tensors loaded
   * @throws KilnError `Format` for a malformed file; `Shape` / `DType` / `Value` when the
   *   tensors do not fit these layers (loadStateDict's report).
   */
  loadWeights(bytes, format) {
    const dict = format === 'pytorch' ? this.kiln.io.loadPytorch(bytes) : this.kiln.io.readSafetensors(bytes);
    try {
      this.model.loadStateDict(dict);
      return Object.keys(dict).length;
    } finally {
      for (const t of Object.values(dict)) t.dispose();
    }
  }

  /**
   * Takes new training settings without losing the model (live.js): a new optimizer with
   * the new settings takes over the old one's state (moments, step count: Optimizer.saveState
   * and loadState, the rate set to the new one), a new learner the new loss settings; a new
   * spec that differs only in its dropout layers rebuilds the model and loads the same
   * weights into it (the layers' indices mapped). Everything new is built before anything
   * old is freed, so on an error the session is unchanged.
   * @param {{layers: object[]}} spec the model spec for the new settings
   * @param {object} s the new set-up (opt, lr, momentum, wd, ... as createSession)
   * @returns {{optimizerState: 'kept' | 'fresh', why?: string, modelRebuilt: boolean}}
   * @throws Error if the spec's parameter layers differ (that needs a new session).
   */
  retune(spec, s) {
    const { kiln } = this;
    const map = paramLayerMap(this.spec, spec);
    if (!map) throw new Error('retune: the layers differ beyond dropout; a new model is needed');
    const rebuild = JSON.stringify(this.spec) !== JSON.stringify(spec);
    const rename = isIdentity(map) ? undefined : renamer(map);
    let model = this.model;
    let optimizer = null;
    try {
      if (rebuild) {
        model = kiln.nn.sequential(spec, { seed: s.seed });
        const weights = this.model.saveSafetensors();
        model.loadSafetensors(rename ? rewriteSafetensors(weights, { rename }) : weights);
      }
      optimizer = makeOptimizer(kiln, s);
      let optimizerState = 'kept';
      let why;
      if (s.opt !== this.settings.opt) {
        optimizerState = 'fresh';
        why = `the ${OPT_NAMES[s.opt] ?? s.opt} optimizer's state starts from zero (the old one's does not carry over)`;
      } else {
        const bytes = withConstantLr(this.optimizer.saveState(this.model), s.lr, rename);
        try {
          optimizer.loadState(model, bytes);
        } catch (e) {
          // e.g. SGD momentum 0.9 -> 0: the momentum buffers have no place in the new one.
          optimizer.dispose();
          optimizer = makeOptimizer(kiln, s);
          optimizerState = 'fresh';
          why = `the optimizer's state starts from zero (${e?.message ?? e})`;
        }
      }
      const learner = makeLearner(kiln, model, optimizer, s, this.task);
      for (const k of ['regLearner', 'learner', 'optimizer']) this[k]?.dispose?.();
      if (rebuild) this.model.dispose();
      Object.assign(this, { model, optimizer, learner, regLearner: null, spec, settings: { ...s } });
      // The regularised step (its learner holds the model and the optimizer) with the new
      // ones and the new penalty, or none.
      this.regularize(s.reg ?? 'none', s.regRate ?? 0, s.seed);
      return { optimizerState, why, modelRebuilt: rebuild };
    } catch (e) {
      optimizer?.dispose?.();
      if (model !== this.model) model.dispose();
      throw e;
    }
  }

  /** The rate of the optimizer's last step (NaN before the first). */
  get learningRate() {
    return this.optimizer.learningRate;
  }

  /** Frees the learner, the optimizer and the model (the learner owns neither). */
  dispose() {
    for (const k of ['regLearner', 'learner', 'optimizer', 'model']) {
      try {
        this[k]?.dispose?.();
      } catch {
        // already freed
      }
      this[k] = null;
    }
  }
}
