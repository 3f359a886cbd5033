// kiln.Module and kiln.Param: models written in JS (PyTorch's nn.Module / nn.Parameter,
// Burn's Module / Param), and what every module shares with the built-in layers
// (kiln.nn.Sequential and its single layers, nn.ts, which extend Module).
//
//   class Net extends kiln.Module {
//     constructor() {
//       super();
//       this.fc1 = kiln.nn.linear({dInput: 784, dOutput: 128});     // a submodule
//       this.scale = this.param('scale', kiln.Tensor.ones([128]));   // a parameter
//     }
//     forward(x) { return this.fc1.forward(x).mul(this.scale).relu(); }
//   }
//
// Registration is by assignment: a module's own enumerable properties, in insertion order,
// whose values are Modules, Params, arrays of Modules / of Params (named "layers.0", as
// PyTorch's ModuleList) or plain objects of them (named "heads.a", as PyTorch's
// ModuleDict) are its children; nothing else is (plain
// tensors are constants, as in PyTorch). The walk is lazy: a forward call costs nothing.
// Names and their order are PyTorch's state_dict's: a module's own Params first (in
// assignment order), then each child's, depth first.
//
// The parameters of a JS module live in C++ module::Param objects (RawParam,
// bindings/module_params.cpp) with their ParamIds, so optimizer.step(module, grads) runs the
// engine's one optimizer over them (state keyed by ParamId) and swaps each Param's value in
// place; built-in layers keep theirs in their RawModel, stepped in the same engine call.
import { engineBusy } from './boundary.js';
import type { RawLoadOptions, RawModel, RawOptimizer, RawParam, RawParamList, RawTensor } from './raw.js';
import { checkOptions, describe, fail } from './tensor/checks.js';
import { bindClass, type Engine } from './tensor/engine.js';
import type { Gradients } from './tensor/gradients.js';
import type { Tensor } from './tensor/tensor.js';
import type { Param } from './module_param.js';

/**
 * What loadStateDict reports (PyTorch's `_IncompatibleKeys`, burn-store's ApplyResult):
 * every list in the module's order, or the entries' key order for `unexpected`.
 */
export interface LoadReport {
  /** The module's keys that were set from the state dict. */
  applied: string[];
  /** Keys the module has that the state dict lacks (their values are unchanged). */
  missing: string[];
  /** Keys of the state dict (after remapping) that the module does not have (ignored). */
  unexpected: string[];
  /** Keys whose shape or dtype differs (always an error: never in a returned report). */
  mismatched: string[];
  /** [key in the state dict, key after remapping and the adapter], for each key that changed. */
  remapped: [string, string][];
  /** Keys (after remapping) that the Burn adapter transposed ([dInput, dOutput] -> [dOutput, dInput]). */
  transposed: string[];
}

/**
 * Options of loadStateDict / loadSafetensors (burn-store's `with_key_remapping`,
 * `allow_partial` and adapters; PyTorch's `strict`). The engine decides (C++
 * kiln::record::LoadOptions, kiln/record/load_options.hpp): each key goes through every
 * `remap` rule in order, then the adapter, then is matched to the module's keys. Nothing is
 * set unless every check passes.
 */
export interface LoadOptions {
  /**
   * true (default): missing or unexpected keys are an error (PyTorch's strict); false:
   * both are reported and skipped. Shape and dtype mismatches are errors either way.
   */
  strict?: boolean;
  /**
   * true: keys the module has and the state dict lacks keep their values (burn-store's
   * allow_partial); unexpected keys are still an error unless strict is false.
   */
  allowPartial?: boolean;
  /**
   * Rules `[pattern, replacement]` applied in order to every key, each replacing ALL matches
   * (also of a RegExp without the `g` flag): `[[/^model\./, '']]` turns "model.fc1.weight"
   * into "fc1.weight". A pattern is a RegExp or its source text, run by the engine's
   * std::regex (ECMAScript grammar: no lookbehind, no named groups; of a RegExp's flags `i`
   * is honoured, `y` refused, the others ignore nothing keys contain). The replacement
   * uses `$1`..`$99`, `$&` and `$$`. Use patterns that match at least one character:
   * empty matches (`x*`, `$`, `\b`) do not rename as String.prototype.replace would. A
   * pattern that backtracks too far is a `Value` error naming it and the key.
   */
  remap?: [RegExp | string, string][];
  /**
   * Loads a state stored in Burn's conventions (burn-store's BurnToPyTorchAdapter): a last
   * key segment `gamma` / `beta` becomes `weight` / `bias`, and each rank-2 entry whose key
   * (after remapping) matches one of `linearWeights` is a Burn Linear weight [dInput,
   * dOutput], transposed to [dOutput, dInput]. Name the Linear weights explicitly: neither
   * the keys nor a square weight's shape tell them from an Embedding's.
   * Example: `{ from: 'burn', linearWeights: [/^fc\d+\.weight$/] }`.
   */
  adapter?: { from: 'burn'; linearWeights?: (RegExp | string)[] };
}

/** [source, ignoreCase] of a pattern option. @throws KilnError `Type`, `Value` naming it. */
function keyPattern(p: unknown, op: string, what: string): [string, boolean] {
  if (typeof p === 'string') return [p, false];
  if (p instanceof RegExp) {
    if (p.flags.includes('y')) throw fail('Value', `${op}: ${what} ${String(p)} is sticky (flag y); every match of a key is replaced`);
    return [p.source, p.flags.includes('i')];
  }
  throw fail('Type', `${op}: ${what} must be a RegExp or a string, got ${describe(p)}`);
}

/**
 * The checked options of loadStateDict / loadSafetensors, as the engine takes them.
 * @throws KilnError `Type` for an unknown option or a wrong type, naming it.
 * @internal
 */
export function loadOptions(options: unknown, op: string): RawLoadOptions {
  const opts = checkOptions<LoadOptions>(options, op) as Record<string, unknown>;
  const known = ['strict', 'allowPartial', 'remap', 'adapter'];
  for (const key of Object.keys(opts)) {
    if (!known.includes(key)) throw fail('Type', `${op}: unknown option "${key}" (options: ${known.join(', ')})`);
  }
  const flag = (name: string, dflt: boolean): boolean => {
    const v = opts[name];
    if (v === undefined) return dflt;
    if (typeof v !== 'boolean') throw fail('Type', `${op}: ${name} must be a boolean, got ${describe(v)}`);
    return v;
  };
  const out: RawLoadOptions = { strict: flag('strict', true), allowPartial: flag('allowPartial', false), remap: [], linearWeights: null };
  if (opts.remap !== undefined) {
    if (!Array.isArray(opts.remap)) throw fail('Type', `${op}: remap must be an array of [pattern, replacement] pairs, got ${describe(opts.remap)}`);
    opts.remap.forEach((rule: unknown, i: number) => {
      if (!Array.isArray(rule) || rule.length !== 2) throw fail('Type', `${op}: remap[${i}] must be a [pattern, replacement] pair, got ${describe(rule)}`);
      const [source, icase] = keyPattern(rule[0], op, `remap[${i}][0]`);
      if (typeof rule[1] !== 'string') throw fail('Type', `${op}: remap[${i}][1] (the replacement) must be a string, got ${describe(rule[1])}`);
      out.remap.push([source, rule[1], icase]);
    });
  }
  if (opts.adapter !== undefined) {
    const a = opts.adapter as Record<string, unknown> | null;
    if (a === null || typeof a !== 'object' || Array.isArray(a) || a.from !== 'burn') {
      throw fail('Type', `${op}: adapter must be {from: 'burn', linearWeights?: [...]}, got ${describe(a)}`);
    }
    for (const key of Object.keys(a)) {
      if (key !== 'from' && key !== 'linearWeights') throw fail('Type', `${op}: unknown adapter option "${key}" (from, linearWeights)`);
    }
    const lw = a.linearWeights ?? [];
    if (!Array.isArray(lw)) throw fail('Type', `${op}: adapter.linearWeights must be an array of patterns, got ${describe(lw)}`);
    out.linearWeights = Array.from(lw as unknown[], (p: unknown, i: number) => keyPattern(p, op, `adapter.linearWeights[${i}]`));
  }
  return out;
}

/** Options of saveSafetensors. */
export interface SaveOptions {
  /**
   * How float32 values are stored: 'float32' (default, exact), 'float16' or 'bfloat16'
   * (rounded to nearest even; loads back as float32). Integer buffers (batchNorm's
   * num_batches_tracked) are stored as I64, as PyTorch's.
   */
  dtype?: 'float32' | 'float16' | 'bfloat16';
  /** The older spelling: 'full' is dtype 'float32', 'half' is 'float16'. */
  precision?: 'full' | 'half';
}

/** Options of the Param constructor. */
export interface ParamOptions {
  /** Whether optimizers update it and backward computes its gradient (default true). */
  requiresGrad?: boolean;
}

/**
 * One trainable value of a module, as the optimizer and the Learner see it
 * (Module._paramSlots()).
 * @internal
 */
export interface ParamSlot {
  /** The dotted name, as in stateDict() ("fc1.weight", "layers.0.bias"). */
  readonly name: string;
  /**
   * The current value: the Param itself (a JS module's; do not dispose it) or a new tensor
   * sharing a built-in layer's value (disposed by release(), or by the enclosing tidy).
   * Either is the graph leaf the forward pass used: `slot.tensor.grad(grads)` works.
   */
  readonly tensor: Tensor;
  /** The C++ ParamId's value: the key of the optimizer's state. */
  readonly paramId: number;
  /** false for a frozen parameter (and for batchNorm's running statistics). */
  readonly requiresGrad: boolean;
  /** Writes an updated value back (same shape, float32), keeping the ParamId. */
  set(value: Tensor): void;
  /** Disposes `tensor` when it was made for this slot (built-in layers); else nothing. */
  release(): void;
}

/** A leaf of the module tree: a JS Param, or a built-in layer (its parameters in C++). @internal */
export type ModuleLeaf =
  | { kind: 'param'; name: string; param: Param }
  | { kind: 'layer'; name: string; module: Module; model: RawModel };

const isMap = (v: unknown): v is Map<unknown, unknown> => v instanceof Map;
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

/** "a.b" or "b". */
function join(prefix: string, name: string): string {
  return prefix === '' ? name : `${prefix}.${name}`;
}

/** The handle of t swapped for `next` (the old one deleted), FinalizationRegistry kept. @internal */
export function swapHandle(t: Tensor, next: RawTensor): void {
  const e = t._e;
  const old = t._h;
  if (e.registry) {
    e.registry.unregister(t);
    e.registry.register(t, next, t);
  }
  t._h = next;
  t._shape = undefined;
  if (old !== null && old !== next) old.delete();
}

/** The key of this instance's Param class in Engine.classes (module_param.ts installs it). @internal */
export const PARAM_KEY = Symbol('kiln.Param');

/** This instance's Param class (for instanceof and construction). @internal */
export function paramClass(e: Engine): (new (value: Tensor, options?: ParamOptions) => Param) & { _fromRaw(rp: RawParam): Param } {
  return e.bound(PARAM_KEY as unknown as object) as never;
}

// ---------------------------------------------------------------- Module

interface ModuleState {
  training: boolean;
  disposed: boolean;
}

/** Each module's mode and lifetime (kept off the instance: its own properties are its members). */
const STATES = new WeakMap<object, ModuleState>();

/** The state of m, or `Type` when super() was not called. */
function stateOf(m: Module, op: string): ModuleState {
  const s = STATES.get(m);
  if (s === undefined) {
    throw fail('Type', `${op}: the module was not constructed (call super() in the constructor of a kiln.Module subclass)`);
  }
  return s;
}

/**
 * Checks an assignment `module[key] = value` as PyTorch's nn.Module.__setattr__ does: over a
 * property that holds a registered Param only a Param, a Module, null or undefined may be
 * assigned; over one that holds a submodule only a Module, a Param, null or undefined.
 * @throws KilnError `Type` naming the module, the property and what was given.
 */
function checkAssignment(target: Module, key: string, value: unknown): void {
  const d = Object.getOwnPropertyDescriptor(target, key);
  if (d === undefined || !('value' in d)) return;
  const old: unknown = d.value;
  if (old === value || value === null || value === undefined || value instanceof Module) return;
  const P = paramClass(target._e);
  if (value instanceof P) return;
  if (old instanceof P) {
    throw fail('Type', `${target._typeName()}: cannot assign ${describe(value)} as parameter "${key}" (a kiln.Param, a Module, null or undefined expected, as PyTorch's "cannot assign ... as parameter"): ` +
      `to change its value use this.${key}.assign(tensor); to make it a plain property, delete this.${key} first`);
  }
  if (old instanceof Module) {
    throw fail('Type', `${target._typeName()}: cannot assign ${describe(value)} as child module "${key}" (a kiln Module, a Param, null or undefined expected, as PyTorch's "cannot assign ... as child module"): ` +
      `to make it a plain property, delete this.${key} first`);
  }
}

/**
 * Every Module is seen through this proxy (the constructor returns it): assignments and
 * Object.defineProperty over a registered Param or submodule are checked (checkAssignment).
 * Reading properties goes straight to the module.
 */
const GUARD: ProxyHandler<Module> = {
  defineProperty(target, key, desc) {
    if (typeof key === 'string' && 'value' in desc) checkAssignment(target, key, desc.value);
    return Reflect.defineProperty(target, key, desc);
  },
};

/**
 * The base class of models (PyTorch's nn.Module, Burn's Module): extend it, assign
 * submodules and parameters in the constructor, write `forward`. kiln.nn.sequential and
 * every kiln.nn layer are Modules too, and each kind composes with the other.
 *
 * Names are PyTorch's state_dict keys: "fc1.weight" for a submodule's parameter,
 * "layers.0.bias" for an array of modules, "0.weight" inside a Sequential.
 *
 * Assignment follows PyTorch's nn.Module.__setattr__:
 * - assigning a Module or Param registers it (a Module or Param assigned over another one
 *   replaces it; the old one is NOT disposed, as PyTorch leaves it to the garbage collector:
 *   dispose it yourself when nothing else uses it, or let the FinalizationRegistry free it);
 * - assigning a plain Tensor (or any other value but null/undefined) over a registered
 *   Param or submodule throws KilnError `Type` ("cannot assign a Tensor as parameter "w"");
 *   change a Param's value with `this.w.assign(t)`, or `delete this.w` first;
 * - plain Tensors on other properties are constants (not parameters), as in PyTorch;
 * - `this.training = false` sets this module's flag only (PyTorch's `self.training`);
 *   train(mode) / eval() set it on the whole tree.
 */
export class Module {
  /** The engine instance (on the per-instance subclass's prototype). @internal */
  declare readonly _e: Engine;

  constructor() {
    if (!((this as { _e?: unknown })._e)) {
      throw fail('Type', 'Module: extend kiln.Module of a loaded kiln instance (const kiln = await init())');
    }
    // `this` in the subclass's constructor (and everywhere after) is the proxy.
    const self = new Proxy(this, GUARD);
    STATES.set(self, { training: true, disposed: false });
    return self;
  }

  /** The class name, for messages and toString(). @internal */
  _typeName(): string {
    return (this.constructor as { name?: string }).name || 'Module';
  }

  // ---- forward

  /**
   * The computation: subclasses define it (any arguments; typically `forward(x: Tensor): Tensor`).
   * @throws KilnError `Type` when the class defines none.
   */
  forward(...inputs: unknown[]): unknown {
    void inputs;
    throw fail('Type', `${this._typeName()}.forward: the module defines no forward (write forward(x) { ... } in class ${this._typeName()})`);
  }

  /** forward(...inputs) (PyTorch's `module(x)`). @throws KilnError `Disposed` after dispose(). */
  call(...inputs: Parameters<this['forward']>): ReturnType<this['forward']> {
    this._live(`${this._typeName()}.call`);
    return (this.forward as (...a: unknown[]) => unknown)(...inputs) as ReturnType<this['forward']>;
  }

  // ---- registration

  /**
   * Registers a new Param made from `value` (copied) under `name` (`this[name] = param`) and
   * returns it: `this.w = this.param('w', kiln.Tensor.randn([4, 3]))`.
   * @throws KilnError `Type` for a name that is not an identifier-like string, as Param's constructor.
   */
  param(name: string, value: Tensor, options?: ParamOptions): Param {
    if (typeof name !== 'string' || name === '' || name.includes('.')) {
      throw fail('Type', `${this._typeName()}.param: name must be a non-empty string without '.', got ${describe(name)}`);
    }
    const P = paramClass(this._e);
    const p = new P(value, options);
    (this as unknown as Record<string, unknown>)[name] = p;
    return p;
  }

  /** The named children (submodules and Params), in registration order. @internal */
  _members(): [string, Module | Param][] {
    const out: [string, Module | Param][] = [];
    const P = paramClass(this._e);
    const own = this as unknown as Record<string, unknown>;
    for (const key of Object.keys(own)) {
      const v = own[key];
      if (v instanceof Module || v instanceof P) {
        out.push([key, this._checkMember(v, key)]);
      } else if (Array.isArray(v) && v.some((x) => x instanceof Module || x instanceof P)) {
        v.forEach((x: unknown, i: number) => {
          if (!(x instanceof Module || x instanceof P)) {
            throw fail('Type', `${this._typeName()}.${key}[${i}]: expected a kiln Module or Param (an array holding modules or parameters is a list of them), got ${describe(x)}`);
          }
          out.push([`${key}.${i}`, this._checkMember(x, `${key}[${i}]`)]);
        });
      } else if (isPlainObject(v) && Object.values(v).some((x) => x instanceof Module || x instanceof P)) {
        // A plain object of modules / parameters: PyTorch's ModuleDict / ParameterDict.
        for (const [k, x] of Object.entries(v)) {
          if (!(x instanceof Module || x instanceof P)) {
            throw fail('Type', `${this._typeName()}.${key}.${k}: expected a kiln Module or Param (an object holding modules or parameters is a dict of them), got ${describe(x)}`);
          }
          if (k === '' || k.includes('.')) throw fail('Type', `${this._typeName()}.${key}: the key ${JSON.stringify(k)} is not a name (no '.', not empty)`);
          out.push([`${key}.${k}`, this._checkMember(x, `${key}.${k}`)]);
        }
      } else if (isMap(v) && [...v.values()].some((x) => x instanceof Module)) {
        throw fail('Type', `${this._typeName()}.${key}: a Map of modules is not registered; use an object property per module or an array`);
      }
    }
    return out;
  }

  private _checkMember<T extends Module | Param>(v: T, key: string): T {
    if (v._e !== this._e) {
      throw fail('Type', `${this._typeName()}.${key}: the ${v instanceof Module ? 'module' : 'parameter'} belongs to another kiln instance`);
    }
    return v;
  }

  /** The leaves under `prefix` (Params and built-in layers), shared ones once. @internal */
  _leaves(prefix = '', out: ModuleLeaf[] = [], seen: Set<unknown> = new Set(), path: Set<Module> = new Set()): ModuleLeaf[] {
    if (stateOf(this, `${this._typeName()}._leaves`).disposed) {
      throw fail('Disposed', prefix === '' ? `${this._typeName()}: the module was disposed` : `Module: the submodule "${prefix}" (${this._typeName()}) was disposed`);
    }
    if (path.has(this)) throw fail('Value', `${this._typeName()}: the module contains itself (at "${prefix}")`);
    path.add(this);
    // PyTorch's order: the module's own parameters first, then its children's.
    const members = this._members();
    const own = members.filter(([key, v]) => !(v instanceof Module) && !key.includes('.'));
    const rest = members.filter(([key, v]) => v instanceof Module || key.includes('.'));
    for (const [key, v] of [...own, ...rest]) {
      const name = join(prefix, key);
      if (v instanceof Module) {
        v._leaves(name, out, seen, path);
      } else {
        if (seen.has(v)) continue;
        seen.add(v);
        if (v._h === null) throw fail('Disposed', `${this._typeName()}: the parameter "${name}" was disposed`);
        out.push({ kind: 'param', name, param: v });
      }
    }
    path.delete(this);
    return out;
  }

  /** The direct submodules with their names (PyTorch's named_children). */
  namedChildren(): [string, Module][] {
    return this._members().filter((m): m is [string, Module] => m[1] instanceof Module);
  }

  /** Every module of the tree with its dotted name, this one first as "" (PyTorch's named_modules). */
  namedModules(): [string, Module][] {
    const out: [string, Module][] = [['', this]];
    const seen = new Set<Module>([this]);
    const walk = (m: Module, prefix: string) => {
      for (const [key, c] of m.namedChildren()) {
        if (seen.has(c)) continue;
        seen.add(c);
        out.push([join(prefix, key), c]);
        walk(c, join(prefix, key));
      }
    };
    walk(this, '');
    return out;
  }

  // ---- parameters

  /**
   * Every parameter (and built-in layers' buffers: batchNorm's running statistics, and
   * num_batches_tracked as int32) keyed by its dotted name, in registration order, as NEW
   * Tensors sharing the current values (float32 ones are the graph leaves the forward pass
   * uses: `t.grad(grads)` works on them). Dispose them (or use kiln.tidy). To step the
   * module, pass the module to the optimizer (`optimizer.step(model, grads)`), not these.
   * @throws KilnError `Disposed` naming a disposed submodule or parameter.
   */
  namedParameters(): Record<string, Tensor> {
    const out: Record<string, Tensor> = {};
    const made: Tensor[] = [];
    try {
      for (const leaf of this._leaves()) {
        if (leaf.kind === 'param') {
          const t = leaf.param.clone();
          made.push(t);
          out[leaf.name] = t;
        } else {
          const params = leaf.model.parameters();
          for (const key of Object.keys(params)) {
            const t = this._e.wrap(params[key]);
            made.push(t);
            out[join(leaf.name, key)] = t;
          }
        }
      }
    } catch (err) {
      for (const t of made) t.dispose();
      throw err;
    }
    return out;
  }

  /** The values of namedParameters() in order (new Tensors: dispose them or use kiln.tidy). */
  parameters(): Tensor[] {
    return Object.values(this.namedParameters());
  }

  /** Number of parameter elements (built-in layers' running statistics included, as their numParams). */
  get numParams(): number {
    let n = 0;
    for (const leaf of this._leaves()) n += leaf.kind === 'param' ? leaf.param.numel : leaf.model.numParams();
    return n;
  }

  /**
   * The trainable values as the optimizer sees them (float32 parameters, frozen ones with
   * requiresGrad false; built-in layers' running statistics included as frozen). See
   * ParamSlot.
   * @internal
   */
  _paramSlots(): ParamSlot[] {
    const out: ParamSlot[] = [];
    const op = `${this._typeName()}._paramSlots`;
    for (const leaf of this._leaves()) {
      if (leaf.kind === 'param') {
        const p = leaf.param;
        out.push({
          name: leaf.name,
          tensor: p,
          get paramId() { return p.paramId; },
          get requiresGrad() { return p.requiresGrad; },
          set: (v: Tensor) => { p.assign(v); },
          release: () => {},
        });
      } else {
        const model = leaf.model;
        const info = model.parameterInfo();
        const params = model.parameters();
        for (const key of Object.keys(params)) {
          const t = this._e.wrap(params[key]);
          if (!info[key].float) {
            t.dispose();
            continue;
          }
          out.push({
            name: join(leaf.name, key),
            tensor: t,
            paramId: info[key].id,
            requiresGrad: info[key].requiresGrad,
            set: (v: Tensor) => { model.setParameters({ [key]: this._e.unwrap(v, `${op}: set`, 'value') }, `${join(leaf.name, key)}: set`); },
            release: () => { t.dispose(); },
          });
        }
      }
    }
    return out;
  }

  /**
   * Freezes (false) or unfreezes (true) every parameter of the tree (PyTorch's
   * requires_grad_). Returns this. @throws KilnError `Type` for a non-boolean.
   */
  requiresGrad(require: boolean = true): this {
    if (typeof require !== 'boolean') throw fail('Type', `${this._typeName()}.requiresGrad: expected a boolean, got ${describe(require)}`);
    for (const leaf of this._leaves()) {
      if (leaf.kind === 'param') leaf.param.requiresGrad = require;
      else leaf.model.setRequireGrad('', require);
    }
    return this;
  }

  // ---- modes

  /** Training mode (default) for this module and every submodule (dropout active, batchNorm on batch statistics). Returns this. */
  train(mode: boolean = true): this {
    if (typeof mode !== 'boolean') throw fail('Type', `${this._typeName()}.train: mode must be a boolean, got ${describe(mode)}`);
    this._live(`${this._typeName()}.train`);
    stateOf(this, `${this._typeName()}.train`).training = mode;
    for (const [, c] of this.namedChildren()) c.train(mode);
    return this;
  }

  /** Inference mode for the whole tree (train(false)). Returns this. */
  eval(): this {
    return this.train(false);
  }

  /** Whether this module is in training mode. */
  get training(): boolean {
    return stateOf(this, `${this._typeName()}.training`).training;
  }

  /**
   * Sets this module's training flag only (PyTorch's `self.training = mode`, e.g. in a
   * constructor); train(mode) / eval() set the whole tree.
   * @throws KilnError `Type` for a non-boolean, `Disposed`.
   */
  set training(mode: boolean) {
    const op = `${this._typeName()}.training`;
    if (typeof mode !== 'boolean') throw fail('Type', `${op}: expected a boolean, got ${describe(mode)}`);
    this._live(op);
    stateOf(this, op).training = mode;
  }

  // ---- state dict

  /**
   * The state (parameters and buffers) keyed as namedParameters(), as NEW untracked
   * Tensors (PyTorch's state_dict(): detached). Dispose them (or use kiln.tidy).
   */
  stateDict(): Record<string, Tensor> {
    const named = this.namedParameters();
    const out: Record<string, Tensor> = {};
    for (const key of Object.keys(named)) {
      out[key] = named[key].detach();
      named[key].dispose();
    }
    return out;
  }

  /**
   * Sets the parameters and buffers from `dict` (`{name: Tensor}` or a Map; values are
   * copied, ParamIds kept, so optimizer state stays attached), under `options`: key
   * remapping, partial loading, Burn's conventions (LoadOptions). Every entry is checked
   * (by the engine) before anything is set: on error the module is unchanged.
   * Returns the report (PyTorch's load_state_dict, burn-store's ApplyResult): what was
   * applied, missing, unexpected, remapped and transposed.
   * @throws KilnError `Shape` / `DType` listing every entry whose shape or dtype differs
   *   from the module's (also with strict false, as PyTorch), with the other problems;
   *   `Value` listing the missing and unexpected keys the options refuse, or two keys
   *   remapped to one, or an invalid pattern; `Type` for a non-Tensor value or a bad option;
   *   `Disposed`.
   */
  loadStateDict(dict: Record<string, Tensor> | Map<string, Tensor>, options?: LoadOptions): LoadReport {
    const op = `${this._typeName()}.loadStateDict`;
    const opts = loadOptions(options, op);
    const given: [string, RawTensor][] = [];
    const entries: [unknown, unknown][] = isMap(dict) ? [...dict.entries()]
      : dict !== null && typeof dict === 'object' && !Array.isArray(dict) ? Object.entries(dict)
        : (() => { throw fail('Type', `${op}: expected an object {name: Tensor} or a Map, got ${describe(dict)}`); })();
    for (const [k, v] of entries) {
      if (typeof k !== 'string') throw fail('Type', `${op}: keys must be strings, got ${describe(k)}`);
      given.push([k, this._e.unwrap(v, op, `"${k}"`)]);
    }
    return this._loadRaw(given, opts, op);
  }

  /**
   * Loads `source` (SafeTensors bytes, or named engine handles: the caller's) as the engine
   * decides (raw.loadPlan), then sets what it returns. @internal
   */
  _loadRaw(source: Uint8Array | [string, RawTensor][], options: RawLoadOptions, op: string): LoadReport {
    // What the module has: name -> {shape, dtype}, and how to set it.
    type Target = { shape: number[]; dtype: number; leaf: ModuleLeaf; key: string };
    const expected = new Map<string, Target>();
    for (const leaf of this._leaves()) {
      if (leaf.kind === 'param') {
        const h = leaf.param._raw(op);
        expected.set(leaf.name, { shape: h.shape(), dtype: 0, leaf, key: leaf.name });
      } else {
        const params = leaf.model.parameters();
        for (const key of Object.keys(params)) {
          const h = params[key];
          expected.set(join(leaf.name, key), { shape: h.shape(), dtype: h.dtype(), leaf, key });
          h.delete();
        }
      }
    }
    const plan = this._e.raw.loadPlan([...expected].map(([name, t]) => [name, t.shape, t.dtype]), source, options, op);
    try {
      // Apply: built-in layers one call each (checked again, atomically, by the engine).
      const byLayer = new Map<RawModel, Record<string, RawTensor>>();
      const refreshed: Param[] = [];
      for (const [name, h] of plan.assign) {
        const t = expected.get(name) as Target;
        if (t.leaf.kind === 'param') {
          t.leaf.param._param(op).assign(h, op);
          refreshed.push(t.leaf.param);
        } else {
          const rec = byLayer.get(t.leaf.model) ?? {};
          rec[t.key] = h;
          byLayer.set(t.leaf.model, rec);
        }
      }
      for (const p of refreshed) p._refresh();
      for (const [model, rec] of byLayer) model.setParameters(rec, op);
    } finally {
      for (const [, h] of plan.assign) h.delete();
    }
    const r = plan.report;
    return { applied: r.applied, missing: r.missing, unexpected: r.unexpected, mismatched: r.mismatched, remapped: r.remapped, transposed: r.transposed };
  }

  // ---- records

  /**
   * The state as SafeTensors bytes keyed as stateDict() (PyTorch's state_dict keys: the
   * file loads into the equivalent torch module with load_state_dict(strict=True) via
   * safetensors.torch.load). Float values as options.dtype (default float32).
   * @throws KilnError `Value` for another dtype, `Type` for an unknown option, `Disposed`;
   *   `State` on the webgpu backend, whose parameters are read asynchronously: use
   *   saveSafetensorsAsync there.
   */
  saveSafetensors(options?: SaveOptions): Uint8Array {
    const op = `${this._typeName()}.saveSafetensors`;
    this._e.requireSyncReads(op, '`await model.saveSafetensorsAsync()`');
    const dtype = saveDtype(options, op);
    const dict = this.stateDict();
    try {
      return this._e.raw.safetensorsEncode(Object.keys(dict).map((k) => [k, this._e.unwrap(dict[k], op)]), dtype);
    } finally {
      for (const k of Object.keys(dict)) dict[k].dispose();
    }
  }

  /**
   * saveSafetensors on every backend: the same bytes, resolved once each tensor of the state
   * has been read (`await tensor.data()`: on the webgpu backend the parameters live on the
   * GPU and a read is asynchronous; on the cpu backend this is saveSafetensors). Like TF.js's
   * `model.save()`, which is asynchronous for the same reason.
   * @throws (rejects with) as saveSafetensors; KilnError `Device` or `OutOfMemory` when a GPU
   *   read fails.
   */
  async saveSafetensorsAsync(options?: SaveOptions): Promise<Uint8Array> {
    const op = `${this._typeName()}.saveSafetensorsAsync`;
    const dtype = saveDtype(options, op);
    if (this._e.asyncRead === null) return this.saveSafetensors(options);
    const dict = this.stateDict();
    let host: Map<string, Tensor> | null = null;
    try {
      // Host copies of the values (io_store.ts, loaded on first use: only webgpu pages need it).
      host = await (await import('./io_store.js')).hostCopies(this._e, Object.entries(dict), op);
      return this._e.raw.safetensorsEncode([...host].map(([k, t]) => [k, this._e.unwrap(t, op)]), dtype);
    } finally {
      for (const k of Object.keys(dict)) dict[k].dispose();
      if (host !== null) for (const t of host.values()) t.dispose();
    }
  }

  /**
   * Loads SafeTensors bytes (from saveSafetensors, a Sequential's, or PyTorch's
   * safetensors.torch.save_file of the equivalent module; F32, F16 or BF16 floats, I64 /
   * I32 integers) under `options` as loadStateDict (remap, allowPartial, adapter, strict by
   * default), read and checked by the engine as the C++ SafetensorsRecorder does: nothing
   * half-applied. Returns this (as Sequential.loadSafetensors always has); for the report,
   * `m.loadStateDict(kiln.io.readSafetensors(bytes), options)`.
   * @throws KilnError `Format` for malformed bytes, and listing every missing, unexpected or
   *   mismatched entry the options refuse (`<Type>.loadSafetensors: bytes: 2 problems:
   *   missing "scale"; unexpected "weight"`); `Type` for a non-Uint8Array or a bad option;
   *   `Value` for an invalid pattern.
   */
  loadSafetensors(bytes: Uint8Array, options?: LoadOptions): this {
    const op = `${this._typeName()}.loadSafetensors`;
    if (!(bytes instanceof Uint8Array)) throw fail('Type', `${op}: bytes must be a Uint8Array, got ${describe(bytes)}`);
    this._live(op);
    this._loadRaw(bytes, loadOptions(options, op), op);
    return this;
  }

  // ---- copies, printing, lifetime

  /**
   * A deep copy: new parameters with the same values and flags and NEW ParamIds (an
   * optimizer's state does not follow it), submodules cloned (a module shared in the tree
   * stays shared in the copy), the training mode kept. Other properties are copied as they
   * are (shallow).
   * @throws KilnError `Disposed` naming a disposed submodule; `Value` for a module that
   *   contains itself (`m.self = m`), naming where.
   */
  clone(): this {
    checkAcyclic(this, `${this._typeName()}.clone`);
    return this._cloneWith(new Map()) as this;
  }

  /** @internal */
  _cloneWith(memo: Map<unknown, unknown>): Module {
    const done = memo.get(this);
    if (done) return done as Module;
    this._live(`${this._typeName()}.clone`);
    const out = new Proxy(Object.create(Object.getPrototypeOf(this)) as Module, GUARD);
    memo.set(this, out);
    STATES.set(out, { ...stateOf(this, `${this._typeName()}.clone`) });
    const P = paramClass(this._e);
    const copy = (v: unknown): unknown => {
      if (v instanceof Module) return v._cloneWith(memo);
      if (v instanceof P) {
        const seen = memo.get(v);
        if (seen) return seen;
        const c = cloneParam(v as Param);
        memo.set(v, c);
        return c;
      }
      return v;
    };
    for (const key of Reflect.ownKeys(this)) {
      const d = Object.getOwnPropertyDescriptor(this, key) as PropertyDescriptor;
      if ('value' in d) {
        const v = d.value as unknown;
        const holds = (xs: unknown[]) => xs.some((x) => x instanceof Module || x instanceof P);
        d.value = Array.isArray(v) && holds(v) ? v.map(copy)
          : isPlainObject(v) && holds(Object.values(v)) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]))
            : copy(v);
      }
      Object.defineProperty(out, key, d);
    }
    return out;
  }

  /**
   * PyTorch-like: `Net(\n  (fc1): Linear {dInput: 784, ...}\n  (w): Param [4, 3]\n)`.
   * @throws KilnError `Value` for a module that contains itself (`m.self = m`), naming where
   *   ("Net.toString: the module contains itself (at "self")"), as namedParameters().
   */
  toString(): string {
    if (STATES.get(this)?.disposed) return `${this._typeName()} { disposed }`;
    // A module that contains itself has no finite printout: Value, as namedParameters().
    if (printing === 0) checkAcyclic(this, `${this._typeName()}.toString`);
    printing++;
    try {
      const lines: string[] = [];
      for (const [key, v] of this._members()) {
        const text = v instanceof Module ? v._treeString() : `Param [${v.isDisposed ? 'disposed' : v.shape.join(', ')}]${v.isDisposed || v.requiresGrad ? '' : ' (frozen)'}`;
        lines.push(`  (${key}): ${text.split('\n').join('\n  ')}`);
      }
      return lines.length === 0 ? `${this._typeName()}()` : `${this._typeName()}(\n${lines.join('\n')}\n)`;
    } finally {
      printing--;
    }
  }

  /** Node's util.inspect shows toString(). @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  /** How this module prints inside a parent's toString(). @internal */
  _treeString(): string {
    return this.toString();
  }

  /** Whether dispose() was called. */
  get isDisposed(): boolean {
    return stateOf(this, `${this._typeName()}.isDisposed`).disposed;
  }

  /**
   * Frees every parameter and submodule of the tree (a second call does nothing).
   * @throws KilnError `Busy` when called from a getter or Proxy the engine is reading (the running call may hold it); nothing changes.
   */
  dispose(): void {
    const state = stateOf(this, `${this._typeName()}.dispose`);
    if (state.disposed) return;
    engineBusy(`${this._typeName()}.dispose`);
    let members: [string, Module | Param][] = [];
    try {
      members = this._members();
    } catch {
      /* a bad member: dispose what can be found */
    }
    state.disposed = true;
    for (const [, v] of members) v.dispose();
  }

  /** `using net = new Net()` disposes at the end of the block. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  /** `Disposed` naming op if this module was disposed. @internal */
  _live(op: string): void {
    if (stateOf(this, op).disposed) throw fail('Disposed', `${op}: the module was disposed`);
  }
}

/** How many toString() calls are running (the outermost checks the tree for cycles). */
let printing = 0;

/**
 * Throws KilnError `Value` naming op and the dotted path at which the module tree of `root`
 * reaches a module already on the path (`c.self = c`), as namedParameters() does.
 */
function checkAcyclic(root: Module, op: string): void {
  const onPath = new Set<Module>();
  const done = new Set<Module>();
  const walk = (m: Module, prefix: string): void => {
    if (onPath.has(m)) throw fail('Value', `${op}: the module contains itself (at "${prefix}")`);
    if (done.has(m)) return;
    onPath.add(m);
    for (const [key, c] of m.namedChildren()) walk(c, join(prefix, key));
    onPath.delete(m);
    done.add(m);
  };
  walk(root, '');
}

function cloneParam(p: Param): Param {
  const e = p._e;
  const rp = p._param('Module.clone').cloneNew();
  return newParamFrom(e, rp);
}

/** A Param of `e` owning the C++ parameter `rp`. @internal */
export function newParamFrom(e: Engine, rp: RawParam): Param {
  const P = paramClass(e) as unknown as { _fromRaw(rp: RawParam): Param };
  return P._fromRaw(rp);
}

/** The dtype of saveSafetensors' options. @internal */
export function saveDtype(options: unknown, op: string): 'float32' | 'float16' | 'bfloat16' {
  const opts = checkOptions<{ dtype: unknown; precision: unknown }>(options, op);
  for (const key of Object.keys(opts)) {
    if (key !== 'dtype' && key !== 'precision') throw fail('Type', `${op}: unknown option "${key}" (options: dtype)`);
  }
  let dtype: unknown = opts.dtype;
  if (opts.precision !== undefined) {
    if (opts.precision !== 'full' && opts.precision !== 'half') {
      throw fail('Value', `${op}: precision must be 'full' or 'half' (or use dtype: 'float32' | 'float16' | 'bfloat16'), got ${describe(opts.precision)}`);
    }
    const implied = opts.precision === 'half' ? 'float16' : 'float32';
    if (dtype !== undefined && dtype !== implied) {
      throw fail('Value', `${op}: precision '${opts.precision}' contradicts dtype ${describe(dtype)}`);
    }
    dtype = implied;
  }
  if (dtype === undefined) return 'float32';
  if (dtype !== 'float32' && dtype !== 'float16' && dtype !== 'bfloat16') {
    throw fail('Value', `${op}: dtype must be 'float32', 'float16' or 'bfloat16', got ${describe(dtype)}`);
  }
  return dtype;
}

// ---------------------------------------------------------------- JS-side Sequential

/**
 * The Sequential of kiln.nn.sequential([...]) when a layer is a JS module (a user module,
 * or one holding one): applies its children in order (`0`, `1`, ...: PyTorch's keys). When
 * every layer is built in, kiln.nn.sequential builds the engine's Sequential instead.
 */
export class SequentialModule extends Module {
  /** forward of each layer in turn: `[batch, ...] -> [batch, ...]`. */
  forward(x: Tensor): Tensor {
    this._live('Sequential.forward');
    let h: unknown = x;
    for (const [, m] of this.namedChildren()) h = (m.forward as (a: unknown) => unknown)(h);
    return h as Tensor;
  }

  _typeName(): string {
    return 'Sequential';
  }
}

// ---------------------------------------------------------------- optimizer steps

/** Plain tensors stepped by an optimizer: each one's C++ id holder (its ParamId). */
const holders = new WeakMap<Tensor, RawParam>();
const holderRegistry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry<RawParam>((h) => {
    try {
      if (!h.isDeleted()) h.delete();
    } catch {
      /* gone */
    }
  })
  : null;

/**
 * Gathers the parameters of `target` (a Module, or an array of Tensors / Params) into a
 * RawParamList for one engine call. Returns the list (caller releases and deletes it) and
 * `refresh`, which swaps each JS value to its updated C++ value after the call.
 * @throws KilnError `Type` for anything else (naming op), `DType` for a non-float32 tensor
 *   in a list, `Disposed`.
 * @internal
 */
export function gatherParams(e: Engine, target: unknown, op: string): { list: RawParamList; refresh: () => void } {
  const list = e.raw.paramListCreate();
  let flags: boolean[] | null = null;
  const stepped = (): boolean[] => flags ?? (flags = list.stepped());
  // Per entry of the list (in order): what to do once the engine has stepped it.
  const refreshers: (() => void)[] = [];
  try {
    const P = paramClass(e);
    if (target instanceof Module) {
      if (target._e !== e) throw fail('Type', `${op}: the module belongs to another kiln instance`);
      for (const leaf of target._leaves()) {
        if (leaf.kind === 'param') {
          list.addParam(leaf.name, leaf.param._param(op));
          const p = leaf.param;
          refreshers.push(() => p._refresh());
        } else {
          list.addModel(leaf.name, leaf.model);
        }
      }
    } else if (Array.isArray(target)) {
      const seen = new Set<unknown>();
      target.forEach((t: unknown, i: number) => {
        if (seen.has(t)) return;
        seen.add(t);
        if (t instanceof P) {
          list.addParam(String(i), (t as Param)._param(op));
          refreshers.push(() => (t as Param)._refresh());
          return;
        }
        const h = e.unwrap(t, op, `params[${i}]`);
        if (h.dtype() !== 0) throw fail('DType', `${op}: params[${i}] must be a float32 tensor, got ${['float32', 'int32', 'bool'][h.dtype()]}`);
        const tensor = t as Tensor;
        let holder = holders.get(tensor);
        if (holder === undefined || holder.isDeleted()) {
          holder = e.raw.paramCreate(h, true);
          holders.set(tensor, holder);
          if (holderRegistry) holderRegistry.register(tensor, holder);
        }
        const hold = holder;
        list.addTensor(String(i), hold, h);
        const index = list.size() - 1;
        // Only a stepped tensor changes (an untracked one without a gradient stays as it is).
        refreshers.push(() => { if (tensor._h !== null && stepped()[index]) swapHandle(tensor, hold.tensor()); });
      });
    } else {
      throw fail('Type', `${op}: model must be a kiln.nn Sequential or layer, a kiln.Module, or an array of Tensors, got ${describe(target)}`);
    }
  } catch (err) {
    list.release();
    list.delete();
    throw err;
  }
  return { list, refresh: () => { for (const r of refreshers) r(); } };
}

/**
 * optimizer.step(moduleOrTensors, grads) for anything but a kiln.nn Sequential (which keeps
 * its own engine path): one engine call runs the optimizer over every parameter (schedule
 * stepped once; state keyed by ParamId), then each Param / tensor takes its new value.
 * With `guard` (the Learner's step), the step is checked as kiln::train::train_step's: a
 * non-finite gradient or update throws KilnError `NonFinite` naming guard.op, the epoch and
 * batch (epoch 0: the step) and the parameter; then nothing is applied, the schedule and
 * the optimizer's state are unchanged.
 * @internal
 */
export function stepParams(e: Engine, rawOptimizer: RawOptimizer, target: unknown, grads: Gradients, op: string,
  guard?: { op: string; epoch: number; batch: number }): void {
  const { list, refresh } = gatherParams(e, target, op);
  try {
    const g = e.unwrapGradients(grads, op);
    if (guard) e.raw.optimizerStepParamsGuarded(rawOptimizer, list, g, guard.op, guard.epoch, guard.batch);
    else e.raw.optimizerStepParams(rawOptimizer, list, g);
    refresh();
  } finally {
    list.release();
    list.delete();
  }
}

/** Installs kiln.Module (the per-instance class) and the JS-side Sequential onto `kiln`. @internal */
export function installModule(kiln: Record<string, unknown>, e: Engine): void {
  const M = bindClass(class Module extends ModuleBase {}, e);
  bindClass(class Sequential extends M {}, e, SequentialModule);
  kiln.Module = M;
}

const ModuleBase = Module;
