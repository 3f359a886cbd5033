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
  const kiln = await init();
  return new Engine(kiln);
}

export class Engine {
  constructor(kiln) {
    this.kiln = kiln;
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
   * @param {{opt: 'sgd'|'adam'|'adamw', lr: number, momentum: number, wd: number, seed: number}} s
   */
  createSession(spec, s) {
    const { kiln } = this;
    const model = kiln.nn.sequential(spec, { seed: s.seed });
    let optimizer = null;
    try {
      optimizer = makeOptimizer(kiln, s);
      const learner = makeLearner(kiln, model, optimizer, s);
      const session = new Session(kiln, model, optimizer, learner);
      session.spec = spec;
      session.settings = { ...s };
      return session;
    } catch (e) {
      optimizer?.dispose?.();
      model.dispose();
      throw e;
    }
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
   * @param {Int32Array} y [n] class indices
   * @param {number} n items in the batch
   * @returns {{loss: number, accuracy: number}} the batch's mean loss and accuracy (0..1)
   */
  trainBatch(x, y, n) {
    return this.learner.trainBatch(x, y, n);
  }

  /**
   * Class probabilities in evaluation mode (dropout off).
   * @param {Float32Array} x [n, ...itemShape]
   * @returns {Float32Array} [n, classes] row-major
   */
  predict(x, batchSize = 500) {
    return this.learner.predict(x, { batchSize }); // the package predicts in inference mode
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
      // The regularised step (its learner holds the model and the optimizer) with the new ones.
      if ((s.reg ?? 'none') !== 'none' && s.regRate > 0 && typeof this.regularize === 'function') this.regularize(s.reg, s.regRate, s.seed);
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
    for (const k of ['learner', 'optimizer', 'model']) {
      try {
        this[k]?.dispose?.();
      } catch {
        // already freed
      }
      this[k] = null;
    }
  }
}
