// kiln-dl's models: kiln.nn.sequential(spec) and the single layers kiln.nn.linear(...), ...
// over the engine's RawModel (bindings/nn_sequential.cpp: nn::Sequential<Autodiff<Cpu>>).
// The package's spec is camelCase ({type: 'maxPool2d', kernelSize: [2, 2]}); the C++ spec is
// snake_case ({"type": "max_pool2d", "kernel_size": [2, 2]}): translated here, both ways,
// and back in error messages. Public types and docs: train_api.ts (Nn, Sequential, Layer).
import { KilnError } from './errors.js';
import { HandleOwner } from './handle.js';
import type { RawModel, RawModule } from './raw.js';
import type { TensorInternals } from './tensor/install.js';
import type { Tensor } from './tensor/tensor.js';
import type { Nn } from './train_api.js';

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
 * The layer types of Sequential specs, camelCase. The one list of them in the JS layer: to
 * be read from the engine (`raw.layerTypes().map((t) => snakeToCamel(t.type))`) once it
 * exports them.
 */
export function layerTypeNames(_raw: RawModule): string[] {
  return [
    'linear', 'conv2d', 'conv1d', 'maxPool2d', 'avgPool2d', 'adaptiveAvgPool2d', 'batchNorm',
    'layerNorm', 'dropout', 'relu', 'gelu', 'sigmoid', 'tanh', 'silu', 'leakyRelu', 'reshape',
    'flatten',
  ];
}

/** What installNn hands train.ts. */
export interface NnInternals {
  Sequential: new (token: symbol, handle: RawModel) => HandleOwner<RawModel>;
  unwrapModel(m: unknown, op: string): RawModel;
  camelErrors: typeof camelErrors;
  isPlainObject: typeof isPlainObject;
}

/** Installs kiln.nn onto `kiln`; returns the internals train.ts uses. */
export function installNn(kiln: Record<string, unknown>, raw: RawModule, internals: TensorInternals): NnInternals {
  const { wrap, unwrap, fail, checks } = internals;
  const { describe, checkOptions } = checks;


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
    return out;
  }

  /** The C++ spec's object -> the package's (camelCase keys and type). */
  function layerFromCpp(layer: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(layer)) {
      out[snakeToCamel(key)] = key === 'type' ? snakeToCamel(value as string) : value;
    }
    // type first, as users write it
    return { type: out.type, ...out };
  }

  function specToCppJson(spec: unknown, op: string): string {
    if (!isPlainObject(spec)) {
      throw fail('Config', `${op}: spec must be {layers: [...]} or an array of layers, got ${describe(spec)}`);
    }
    for (const key of Object.keys(spec)) {
      if (key !== 'layers') throw fail('Config', `${op}: unknown field "${key}" of the spec (fields: layers)`);
    }
    if (!Array.isArray(spec.layers)) {
      throw fail('Config', `${op}: spec.layers must be an array, got ${describe(spec.layers)}`);
    }
    const layers = spec.layers.map((l, i) => layerToCpp(l, `SequentialConfig: layers[${i}]`));
    return JSON.stringify({ layers });
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

  /** A model of layers applied in order (PyTorch's nn.Sequential). */
  class Sequential extends HandleOwner<RawModel> {
    constructor(token: symbol, handle: RawModel) {
      if (token !== TOKEN) {
        throw fail('Type', 'Sequential: use kiln.nn.sequential(spec) to create models (the constructor is internal)');
      }
      super(handle, 'model');
    }


    forward(x: Tensor): Tensor {
      const h = this._raw('Sequential.forward');
      const input = unwrap(x, 'Sequential.forward', 'x');
      return wrap(camelErrors(() => h.forward(input)));
    }

    get numParams() {
      return this._raw('Sequential.numParams').numParams();
    }

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

    get config(): unknown {
      const c = JSON.parse(this._raw('Sequential.config').configJson()) as { layers: Record<string, unknown>[] };
      return { layers: c.layers.map(layerFromCpp) };
    }

    toJSON(): unknown {
      return this.config;
    }

    /** The C++ spec (snake_case JSON text), as nn::SequentialConfig reads it. */
    configJson() {
      return this._raw('Sequential.configJson').configJson();
    }

    outputShape(inputShape: number[]): number[] {
      const op = 'Sequential.outputShape';
      checks.checkIntArray(inputShape, op, 'inputShape');
      const h = this._raw(op);
      return camelErrors(() => h.outputItemShape(inputShape));
    }

    saveSafetensors() {
      return this._raw('Sequential.saveSafetensors').saveSafetensors();
    }

    loadSafetensors(bytes: Uint8Array): this {
      const op = 'Sequential.loadSafetensors';
      const h = this._raw(op);
      if (!(bytes instanceof Uint8Array)) {
        throw fail('Type', `${op}: bytes must be a Uint8Array, got ${describe(bytes)}`);
      }
      camelErrors(() => h.loadSafetensors(bytes));
      return this;
    }

    namedParameters() {
      const params = this._raw('Sequential.namedParameters').parameters();
      const out: Record<string, Tensor> = {};
      for (const key of Object.keys(params)) out[key] = wrap(params[key]);
      return out;
    }

    train(mode: boolean = true): this {
      if (typeof mode !== 'boolean') throw fail('Type', `Sequential.train: mode must be a boolean, got ${describe(mode)}`);
      this._raw('Sequential.train').setTraining(mode);
      return this;
    }

    eval(): this {
      this._raw('Sequential.eval').setTraining(false);
      return this;
    }

    get training() {
      return this._raw('Sequential.training').training();
    }

    toString() {
      return this._raw('Sequential.toString').describe();
    }
  }

  /** One layer usable on its own: its records use the layer's keys ("weight", "bias"). */
  class Layer extends Sequential {
    get type(): unknown {
      return (this.config as { type: unknown }).type;
    }

    get config(): unknown {
      return (super.config as { layers: unknown[] }).layers[0];
    }
  }

  function create(specJson: string, seed: number, single: boolean): Sequential {
    const handle = camelErrors(() => raw.modelCreate(specJson, seed, single));
    return single ? new Layer(TOKEN, handle) : new Sequential(TOKEN, handle);
  }

  function sequential(spec: unknown, options?: unknown): Sequential {
    const op = 'nn.sequential';
    const seed = seedOf(options, op);
    if (Array.isArray(spec)) {
      if (spec.some((l) => l instanceof Sequential)) {
        // Layers and models made in code, maybe mixed with plain layer specs.
        if (seed >= 0) raw.seed(seed);
        const made: Sequential[] = [];
        const parts = spec.map((l: unknown, i: number) => {
          if (l instanceof Sequential) return l._raw(`${op}: layers[${i}]`);
          const m = create(JSON.stringify({ layers: [layerToCpp(l, `SequentialConfig: layers[${i}]`)] }), -1, false);
          made.push(m);
          return m._h as RawModel;
        });
        try {
          return new Sequential(TOKEN, camelErrors(() => raw.modelConcat(parts)));
        } finally {
          for (const m of made) m.dispose();
        }
      }
      return create(specToCppJson({ layers: spec }, op), seed, false);
    }
    return create(specToCppJson(spec, op), seed, false);
  }

  function layer(type: string) {
    return (config?: unknown, options?: unknown): Sequential => {
      const op = `nn.${type}`;
      const cfg = config === undefined ? {} : config;
      if (!isPlainObject(cfg)) throw fail('Config', `${op}: the config must be an object, got ${describe(cfg)}`);
      if (cfg.type !== undefined && cfg.type !== type) {
        throw fail('Config', `${op}: type is "${type}", got ${describe(cfg.type)}`);
      }
      const json = JSON.stringify({ layers: [layerToCpp({ ...cfg, type }, `SequentialConfig: layers[0]`)] });
      return create(json, seedOf(options, op), true);
    };
  }

  const TYPES = layerTypeNames(raw);
  const nn: Record<string, unknown> = { sequential, Sequential, Layer, layerTypes: Object.freeze([...TYPES]) };
  for (const t of TYPES) nn[t] = layer(t);
  kiln.nn = Object.freeze(nn) as unknown as Nn;

  function unwrapModel(m: unknown, op: string): RawModel {
    if (!(m instanceof Sequential)) {
      throw fail('Type', `${op}: model must be a kiln.nn Sequential or layer, got ${describe(m)}`);
    }
    return m._raw(op);
  }

  return { Sequential, unwrapModel, camelErrors, isPlainObject };
}
