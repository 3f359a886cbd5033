// kiln-dl's models: kiln.nn.sequential(spec) and the single layers kiln.nn.linear(...), ...
// over the engine's RawModel (bindings/nn_sequential.cpp: nn::Sequential<Autodiff<Cpu>>).
// The package's spec is camelCase ({type: 'maxPool2d', kernelSize: [2, 2]}); the C++ spec is
// snake_case ({"type": "max_pool2d", "kernel_size": [2, 2]}): translated here, both ways,
// and back in error messages. The layer specs' types: train_api.ts.
import { KilnError } from './errors.js';
import { loadOptions, Module, saveDtype, SequentialModule, type LoadOptions, type ModuleLeaf, type SaveOptions } from './module_class.js';
import type { RawModel, RawModule } from './raw.js';
import { adoptHandle, liveHandle, releaseHandle } from './handle.js';
import { checkIntArray, checkOptions, describe, engineJson, engineValue, fail, type EngineValue } from './tensor/checks.js';
import { bindClass, type Engine } from './tensor/engine.js';
import type { Tensor } from './tensor/tensor.js';
import type { LayerSpec, Nn, SequentialSpec } from './train_api.js';
import { functionalApi } from './nn_functional.js';
import { layerClassMakers, type LayerClass } from './nn_layer_classes.js';

const TOKEN = Symbol('kiln.nn.internal');

/** 'maxPool2d' -> 'max_pool2d', 'dInput' -> 'd_input' (snake_case passes unchanged). */
export function camelToSnake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** 'max_pool2d' -> 'maxPool2d', 'd_input' -> 'dInput'. */
export function snakeToCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** A C++ message with its snake_case names (types, fields) in the package's camelCase. */
export function camelMessage(message: string): string {
  // batch_size is the engine's name of a dim in shape descriptions, not a field: kept.
  return message.replace(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g, (w) => (w === 'batch_size' ? w : snakeToCamel(w)));
}

/** "1,234,567". */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Runs f; a KilnError from the engine gets its message in camelCase. */
export function camelErrors<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof KilnError) {
      const translated = camelMessage(e.message);
      if (translated !== e.message) {
        const out = new KilnError(e.code, translated);
        throw out;
      }
    }
    throw e;
  }
}

/** A plain object (a spec, a layer, options). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) &&
    (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);
}

/**
 * The layer types of Sequential specs, camelCase, in the engine's registry order: read from
 * the engine (C++ `nn::SequentialRegistry`, each layer header's `KILN_REGISTER_LAYER` line), so
 * a layer registered in C++ is a `kiln.nn` factory with no JS edit.
 */
export function layerTypeNames(raw: RawModule): string[] {
  return raw.layerTypes().map((t) => snakeToCamel(t.type));
}

/** One layer of the package's spec -> the C++ spec's object. */
function layerToCpp(layer: unknown, where: string): Record<string, unknown> {
  if (!isPlainObject(layer)) {
    throw fail('Config', `${where}: expected an object such as {type: 'relu'}, got ${describe(layer)}`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(layer)) {
    if (value === undefined) continue;
    const k = camelToSnake(key);
    if (Object.prototype.hasOwnProperty.call(out, k)) {
      throw fail('Config', `${where}: the field ${key} is given twice (as ${snakeToCamel(k)} and ${k})`);
    }
    out[k] = key === 'type' && typeof value === 'string' ? camelToSnake(value) : value;
  }
  // JSON cannot carry NaN or ±Infinity: name the field here rather than let it arrive as null.
  engineJson(out, `${where}${typeof layer.type === 'string' ? ` (${layer.type})` : ''}`);
  return out;
}

/** The C++ spec's object -> the package's (camelCase keys and type). */
function layerFromCpp(layer: Record<string, unknown>): LayerSpec {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(layer)) {
    out[snakeToCamel(key)] = key === 'type' ? snakeToCamel(value as string) : value;
  }
  // type first, as users write it
  return { type: out.type, ...out } as LayerSpec;
}

function specToCpp(spec: unknown, op: string): EngineValue {
  if (!isPlainObject(spec)) {
    throw fail('Config', `${op}: spec must be {layers: [...]} or an array of layers, got ${describe(spec)}`);
  }
  for (const key of Object.keys(spec)) {
    if (key !== 'layers') throw fail('Config', `${op}: unknown field "${key}" of the spec (fields: layers)`);
  }
  if (!Array.isArray(spec.layers)) {
    throw fail('Config', `${op}: spec.layers must be an array, got ${describe(spec.layers)}`);
  }
  const layers = spec.layers.map((l: unknown, i: number) => layerToCpp(l, `SequentialConfig: layers[${i}]`));
  return engineValue({ layers }, op);
}

function seedOf(options: unknown, op: string): number {
  const opts = checkOptions<{ seed: unknown }>(options, op);
  for (const key of Object.keys(opts)) {
    if (key !== 'seed') throw fail('Type', `${op}: unknown option "${key}" (options: seed)`);
  }
  if (opts.seed === undefined) return -1;
  if (typeof opts.seed !== 'number' || !Number.isSafeInteger(opts.seed) || opts.seed < 0) {
    throw fail('Type', `${op}: seed must be an integer >= 0, got ${describe(opts.seed)}`);
  }
  return opts.seed;
}

/** What `config` returns: the spec of a model, or of one layer (`Layer`). */
export type ModelSpec = SequentialSpec | LayerSpec;


/**
 * A model of layers applied in order (PyTorch's nn.Sequential), built from a spec by
 * kiln.nn.sequential; records keyed "0.weight", ... Parameters live in WebAssembly memory
 * until dispose(). New models are in training mode (dropout active, batchNorm on batch
 * statistics), as PyTorch's. `Spec` is the type of `config`: SequentialSpec, or LayerSpec
 * for a single `Layer`.
 *
 * A kiln.Module: it composes with modules written in JS (as a member of one, or in
 * kiln.nn.sequential([...]) with them), and has Module's interface (stateDict,
 * loadStateDict, clone, requiresGrad, _paramSlots, ...); its forward is one engine call and
 * its parameters stay in the engine (their ParamIds kept by optimizer steps and loads).
 */
export class Sequential<Spec extends ModelSpec = SequentialSpec> extends Module {
  /** The engine model owned, null once disposed. @internal */
  declare _h: RawModel | null;
  /** @internal */
  declare readonly _what: string;

  /** Internal: models come from kiln.nn.sequential(spec), kiln.nn.linear(...), ... */
  protected constructor(token: never, handle: never) {
    super();
    this._init(token, handle);
  }

  /** The constructor's work (the per-instance class, installNn, calls it). @internal */
  _init(token: unknown, handle: unknown): void {
    if (token !== TOKEN) {
      throw fail('Type', 'Sequential: use kiln.nn.sequential(spec) to create models (the constructor is internal)');
    }
    Object.defineProperty(this, '_h', { value: handle as RawModel, writable: true, enumerable: false });
    Object.defineProperty(this, '_what', { value: 'model', enumerable: false });
    adoptHandle(this, handle as RawModel);
  }

  /** The handle, or KilnError `Disposed` naming `op`. @internal */
  _raw(op: string): RawModel {
    return liveHandle(this, op);
  }

  /** Whether dispose() was called. */
  get isDisposed(): boolean {
    return this._h === null;
  }

  /**
   * Frees the engine's memory; a second call does nothing.
   * @throws KilnError `Busy` when called from a getter or Proxy the engine is reading (the running call may hold it); nothing changes.
   */
  dispose(): void {
    releaseHandle(this);
  }

  /** @internal */
  _typeName(): string {
    return (this.constructor as { name?: string }).name || 'Sequential';
  }

  /** @internal */
  _live(op: string): void {
    this._raw(op);
  }

  /** The engine's printout, camelCase, inside a module's toString(). @internal */
  _treeString(): string {
    return this._h === null ? `${this._typeName()} { disposed }` : camelMessage(this._h.describe());
  }

  /** No JS members: the layers live in the engine. @internal */
  _members(): [string, Module][] {
    return [];
  }

  /** One leaf: this model (its parameters in the engine). @internal */
  _leaves(prefix = '', out: ModuleLeaf[] = [], seen: Set<unknown> = new Set()): ModuleLeaf[] {
    if (this._h === null) {
      throw new KilnError('Disposed', prefix === '' ? `${this._typeName()}: the model was disposed` : `Module: the layer "${prefix}" was disposed`);
    }
    if (!seen.has(this)) {
      seen.add(this);
      out.push({ kind: 'layer', name: prefix, module: this, model: this._h });
    }
    return out;
  }

  /**
   * Applies every layer: `[batch, ...] -> [batch, ...]`, input rank 2 to 5, e.g.
   * `[batch, 784] -> [batch, 10]`. In training mode the output carries the graph (backward()
   * reaches the parameters; batchNorm's running statistics move); in eval() mode and inside
   * kiln.noGrad it carries none.
   * @throws KilnError `Shape` naming the layer whose input does not fit
   *   (`Sequential::forward: layer 1 (conv2d): expected input [batch_size, channels, height, width] (rank 4), got [64, 784]`),
   *   `DType` for a non-float32 input, `Type` for a non-Tensor, `Disposed`.
   */
  forward(x: Tensor): Tensor {
    const h = this._raw('Sequential.forward');
    const input = this._e.unwrap(x, 'Sequential.forward', 'x');
    return this._e.wrap(camelErrors(() => h.forward(input)));
  }

  /**
   * Every layer's output in one call (Keras' `Model(inputs, [l.output for l in layers])`,
   * torchvision's feature extraction): `[output of layer 0, ..., output of the last layer]`,
   * one Tensor per layer of the spec (activations and dropout included), the last equal to
   * forward(x). The engine applies the layers once (bindings/nn_inspect.cpp). In eval() mode
   * (and inside kiln.noGrad) the outputs carry no graph; in training mode they are tracked
   * on one graph (a backward from any reaches the parameters and a tracked x).
   * Example: `model.eval(); const [h1, a1, out] = model.forwardAll(x); // linear, tanh, linear`
   * @throws KilnError `Shape` naming the layer whose input does not fit, `DType` for a
   *   non-float32 input (an embedding's int32 indices: use forward), `Type`, `Disposed`.
   */
  forwardAll(x: Tensor): Tensor[] {
    const op = 'Sequential.forwardAll';
    const h = this._raw(op);
    const input = this._e.unwrap(x, op, 'x');
    const handles = camelErrors(() => this._e.raw.modelForwardAll(h, input));
    return handles.map((t) => this._e.wrap(t));
  }

  /** Number of parameter elements (batchNorm's running statistics included). */
  get numParams(): number {
    return this._raw('Sequential.numParams').numParams();
  }

  /**
   * A table: layer index, type, output shape (as far as the spec determines it, from
   * `inputShape` (per item) when given), parameters; and the totals.
   * @throws KilnError `Config` if inputShape does not fit the first layers.
   */
  summary(options?: { inputShape?: number[] }): string {
    const op = 'Sequential.summary';
    const opts = checkOptions<{ inputShape: number[] }>(options, op);
    const h = this._raw(op);
    const data = camelErrors(() => h.summary(opts.inputShape ?? null));
    const rows: string[][] = [['#', 'layer', 'output shape', 'params']];
    if (data.input !== null) rows.push(['', 'input', data.input, '']);
    for (const [i, type, shape, params] of data.rows) rows.push([String(i), snakeToCamel(type), shape, grouped(params)]);
    const width = [0, 1, 2, 3].map((c) => Math.max(...rows.map((r) => r[c].length)));
    const lines = rows.map((r) => `${r[0].padEnd(width[0])}  ${r[1].padEnd(width[1])}  ${r[2].padEnd(width[2])}  ${r[3].padStart(width[3])}`.trimEnd());
    return `Sequential: ${data.rows.length} layers, ${grouped(data.total)} parameters (${grouped(data.trainable)} trainable)\n${lines.join('\n')}\n`;
  }

  /** The spec (camelCase, every default filled in): kiln.nn.sequential(model.config) builds the same architecture. */
  get config(): Spec {
    const c = this._raw('Sequential.config').configValue();
    return { layers: c.layers.map(layerFromCpp) } as Spec;
  }

  /** JSON.stringify(model) gives the spec. */
  toJSON(): Spec {
    return this.config;
  }

  /** The C++ spec (snake_case JSON text, {"layers": [...]}) that nn::SequentialConfig reads. */
  configJson(): string {
    return this._raw('Sequential.configJson').configJson();
  }

  /** The per-item output shape for items of `inputShape`, e.g. `[784] -> [10]`. @throws KilnError `Config` naming the layer. */
  outputShape(inputShape: number[]): number[] {
    const op = 'Sequential.outputShape';
    const shape = checkIntArray(inputShape, op, 'inputShape');
    const h = this._raw(op);
    return camelErrors(() => h.outputItemShape(shape));
  }

  /**
   * The parameters as SafeTensors bytes with PyTorch nn.Sequential's keys ("0.weight",
   * "0.bias", "2.running_mean", ...; a Layer: "weight", "bias"; F32, num_batches_tracked
   * I64): the same bytes as the C++
   * nn::Sequential of the same spec; loads in torch with load_state_dict(strict=True).
   * @throws KilnError `State` on the webgpu backend (its parameters are read asynchronously:
   *   `await model.saveSafetensorsAsync()`, Module's, gives these keys and values there).
   */
  saveSafetensors(options?: SaveOptions): Uint8Array {
    const op = 'Sequential.saveSafetensors';
    const dtype = saveDtype(options, op);
    const h = this._raw(op);
    this._e.requireSyncReads(op, '`await model.saveSafetensorsAsync()`');
    return dtype === 'float32' ? h.saveSafetensors() : camelErrors(() => h.saveSafetensorsAs(dtype));
  }

  /**
   * Replaces the parameters by those of SafeTensors bytes (from saveSafetensors, C++ or
   * PyTorch), under `options` as Module.loadSafetensors (remap, allowPartial, adapter,
   * strict; LoadOptions). Returns this.
   * @throws KilnError `Format` for malformed bytes or missing, unexpected or mis-shaped
   *   entries the options refuse (all listed); the model is then unchanged. `Type` for a
   *   non-Uint8Array or a bad option.
   */
  loadSafetensors(bytes: Uint8Array, options?: LoadOptions): this {
    const op = 'Sequential.loadSafetensors';
    const h = this._raw(op);
    if (!(bytes instanceof Uint8Array)) {
      throw fail('Type', `${op}: bytes must be a Uint8Array, got ${describe(bytes)}`);
    }
    const opts = loadOptions(options, op);
    if (!opts.strict || opts.allowPartial || opts.remap.length > 0 || opts.linearWeights !== null) {
      return super.loadSafetensors(bytes, options);
    }
    // The default: one engine call (the C++ SafetensorsRecorder's strict load).
    camelErrors(() => h.loadSafetensors(bytes));
    return this;
  }

  /**
   * A deep copy (same spec, values and mode; new ParamIds, so an optimizer's state does not
   * follow it; the values are shared copy-on-write). @throws KilnError `Disposed`.
   */
  clone(): this {
    const h = this._raw('Sequential.clone');
    const C = this.constructor as unknown as new (token: symbol, handle: RawModel) => this;
    return new C(TOKEN, h.cloneNew());
  }

  /** @internal */
  _cloneWith(memo: Map<unknown, unknown>): Module {
    const done = memo.get(this);
    if (done) return done as Module;
    const c = this.clone();
    memo.set(this, c);
    return c;
  }

  /**
   * The parameters, keyed as in the records ("0.weight", ...): new Tensors sharing the
   * model's current values (float32 ones are tracked leaves: x.grad(grads) works on them;
   * num_batches_tracked is int32). Dispose them (or use kiln.tidy).
   */
  namedParameters(): Record<string, Tensor> {
    const params = this._raw('Sequential.namedParameters').parameters();
    const out: Record<string, Tensor> = {};
    for (const key of Object.keys(params)) out[key] = this._e.wrap(params[key]);
    return out;
  }

  /** Training mode (default): dropout active, batchNorm on batch statistics. Returns this. */
  train(mode: boolean = true): this {
    if (typeof mode !== 'boolean') throw fail('Type', `Sequential.train: mode must be a boolean, got ${describe(mode)}`);
    this._raw('Sequential.train').setTraining(mode);
    return this;
  }

  /** Inference mode: dropout off, batchNorm on running statistics, outputs untracked. Returns this. */
  eval(): this {
    this._raw('Sequential.eval').setTraining(false);
    return this;
  }

  /** Whether the model is in training mode. */
  get training(): boolean {
    return this._raw('Sequential.training').training();
  }

  /**
   * Sets the training mode (as train(mode): every layer of the model is in the engine).
   * @throws KilnError `Type` for a non-boolean, `Disposed`.
   */
  set training(mode: boolean) {
    if (typeof mode !== 'boolean') throw fail('Type', `Sequential.training: expected a boolean, got ${describe(mode)}`);
    this._raw('Sequential.training').setTraining(mode);
  }

  /** `Sequential {0: Linear {d_input: 784, ...}, ...}` (the C++ module's printout). */
  toString(): string {
    return this._raw('Sequential.toString').describe();
  }
}

/** A single layer (kiln.nn.linear(...)); its records use the layer's keys ("weight", "bias"). */
export class Layer extends Sequential<LayerSpec> {
  /** `Linear {dInput: 3, dOutput: 4, bias: true, params: 16}` inside a module's toString(). @internal */
  _treeString(): string {
    if (this._h === null) return `${this._typeName()} { disposed }`;
    const text = camelMessage(this._h.describe());
    const head = 'Sequential {0: ';
    const tail = text.lastIndexOf(', params: ');
    return text.startsWith(head) && tail > head.length ? text.slice(head.length, tail) : text;
  }

  /** The layer's type ('linear', ...). */
  get type(): LayerSpec['type'] {
    return this.config.type;
  }

  /** The layer's spec ({type: 'linear', dInput: 2, ...}). */
  get config(): LayerSpec {
    return (super.config as unknown as SequentialSpec).layers[0];
  }
}

/** What models and single layers share: a Sequential or a Layer (PyTorch's nn.Module). */
export type Model = Sequential<ModelSpec>;

type ModelCtor<M> = new (token: symbol, handle: RawModel) => M;

/** The engine's model of `m` (a Sequential or Layer of this instance), or `Type` naming op. */
export function unwrapModel(e: Engine, m: unknown, op: string): RawModel {
  if (!(m instanceof e.bound(Sequential))) {
    throw fail('Type', `${op}: model must be a kiln.nn Sequential or layer, got ${describe(m)}`);
  }
  return m._raw(op);
}

const SequentialBase = Sequential;
const LayerBase = Layer;

/** Installs kiln.nn onto `kiln`. */
export function installNn(kiln: Record<string, unknown>, raw: RawModule, e: Engine): void {
  // Sequential is a kiln.Module: it extends this instance's Module (installModule ran
  // first), with Sequential's own members copied from SequentialBase.
  const M = e.bound(Module) as unknown as new () => Module;
  const SB = class Sequential extends M {
    constructor(token: never, handle: never) {
      super();
      (this as unknown as { _init(t: unknown, h: unknown): void })._init(token, handle);
    }
  };
  const S = bindClass(SB, e, SequentialBase) as unknown as ModelCtor<Sequential> & typeof Sequential;
  const SM = e.bound(SequentialModule) as unknown as new () => SequentialModule;
  const L = bindClass(class Layer extends S {}, e, LayerBase) as unknown as ModelCtor<Layer> & typeof Layer;

  // Layer types with methods of their own (nn_layer_classes.ts): their subclasses of L.
  const layerClasses = new Map<string, ModelCtor<Layer>>();
  for (const [t, make] of Object.entries(layerClassMakers)) {
    layerClasses.set(t, make(L as unknown as LayerClass, raw, e) as unknown as ModelCtor<Layer>);
  }

  function create(spec: EngineValue, seed: number, single: boolean, type?: string): Sequential | Layer {
    const handle = camelErrors(() => raw.modelCreate(spec, seed, single));
    if (!single) return new S(TOKEN, handle);
    const C = (type !== undefined ? layerClasses.get(type) : undefined) ?? L;
    return new C(TOKEN, handle);
  }

  function sequential(spec: unknown, options?: unknown): Sequential {
    const op = 'nn.sequential';
    const seed = seedOf(options, op);
    if (Array.isArray(spec)) {
      if (spec.some((l) => l instanceof M && !(l instanceof S))) {
        // A JS module among the layers: a JS-side Sequential whose forward chains the
        // layers (shared, not copied, as PyTorch's nn.Sequential(*modules)); plain specs
        // become built-in layers.
        if (seed >= 0) raw.seed(seed);
        const out = new SM();
        const made: Sequential[] = [];
        try {
          spec.forEach((l: unknown, i: number) => {
            if (l instanceof M) {
              (l as Module)._live(`${op}: layers[${i}]`);
              if ((l as Module)._e !== e) throw fail('Type', `${op}: layers[${i}] belongs to another kiln instance`);
              (out as unknown as Record<string, unknown>)[String(i)] = l;
            } else {
              const t = isPlainObject(l) && typeof l.type === 'string' ? l.type : undefined;
              const m = create(engineValue({ layers: [layerToCpp(l, `SequentialConfig: layers[${i}]`)] }, op), -1, true, t);
              made.push(m as unknown as Sequential);
              (out as unknown as Record<string, unknown>)[String(i)] = m;
            }
          });
        } catch (err) {
          for (const m of made) m.dispose();
          throw err;
        }
        return out as unknown as Sequential;
      }
      if (spec.some((l) => l instanceof S)) {
        // Layers and models made in code, maybe mixed with plain layer specs.
        if (seed >= 0) raw.seed(seed);
        const made: Sequential[] = [];
        const parts = Array.from(spec as unknown[], (l: unknown, i: number) => {
          if (l instanceof S) return l._raw(`${op}: layers[${i}]`);
          const m = create(engineValue({ layers: [layerToCpp(l, `SequentialConfig: layers[${i}]`)] }, op), -1, false) as Sequential;
          made.push(m);
          return m._h as RawModel;
        });
        try {
          return new S(TOKEN, camelErrors(() => raw.modelConcat(parts)));
        } finally {
          for (const m of made) m.dispose();
        }
      }
      return create(specToCpp({ layers: spec }, op), seed, false) as Sequential;
    }
    return create(specToCpp(spec, op), seed, false) as Sequential;
  }

  function layer(type: string) {
    return (config?: unknown, options?: unknown): Layer => {
      const op = `nn.${type}`;
      const cfg = config === undefined ? {} : config;
      if (!isPlainObject(cfg)) throw fail('Config', `${op}: the config must be an object, got ${describe(cfg)}`);
      if (cfg.type !== undefined && cfg.type !== type) {
        throw fail('Config', `${op}: type is "${type}", got ${describe(cfg.type)}`);
      }
      const spec = engineValue({ layers: [layerToCpp({ ...cfg, type }, `SequentialConfig: layers[0]`)] }, op);
      return create(spec, seedOf(options, op), true, type) as Layer;
    };
  }

  const TYPES = layerTypeNames(raw);
  const nn: Record<string, unknown> = { sequential, Sequential: S, Layer: L, layerTypes: Object.freeze([...TYPES]) };
  // kiln.nn.functional (nn_functional.ts): the layers as functions of tensors.
  nn.functional = functionalApi(e);
  for (const t of TYPES) nn[t] = layer(t);
  kiln.nn = Object.freeze(nn) as unknown as Nn;
}
