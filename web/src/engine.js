// The one place where the playground talks to kiln-dl (runs in the Web Worker).
// Everything the playground needs from the engine goes through this adapter, written
// against the JS API contract of BRIEF6.md (kiln.nn.sequential, kiln.optim.*, kiln.Learner,
// model.saveSafetensors / loadSafetensors). If the package's spelling differs, fix it here.
import { init } from 'kiln-dl';

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
      if (s.opt === 'sgd') {
        optimizer = kiln.optim.sgd({ lr: s.lr, momentum: s.momentum, weightDecay: s.wd });
      } else if (s.opt === 'adam') {
        optimizer = kiln.optim.adam({ lr: s.lr, weightDecay: s.wd });
      } else {
        // weightDecay given explicitly: kiln's AdamW default is 0.01 (PyTorch's); the
        // playground's weight-decay field (default 0) is the setting.
        optimizer = kiln.optim.adamW({ lr: s.lr, weightDecay: s.wd });
      }
      const learner = new kiln.Learner(model, { optimizer, loss: 'crossEntropy', seed: s.seed });
      return new Session(kiln, model, optimizer, learner);
    } catch (e) {
      optimizer?.dispose?.();
      model.dispose();
      throw e;
    }
  }
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
