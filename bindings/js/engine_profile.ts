// Internal: what the loaded engine profile lacks (DESIGN.md "Engines"; README "Core and full
// engine"). The core engine (kiln-core.wasm) links a subset of the engine's entry points and
// registers only the dense layers; the JS layer is the same for both engines. Which entry
// points and layer types the full engine has is generated at build time from the built
// engines (scripts/gen_engines.mjs -> generated/engines.ts), so nothing here restates a list.
// In the core engine:
//   - each full-engine entry point it lacks is a stub throwing KilnError `State`;
//   - a Sequential spec naming a full-engine layer type is refused by name before the engine
//     sees it, and kiln.nn has a factory for each full-engine layer type that throws;
//   - kiln.nn's, kiln.nn.functional's and kiln.io's functions name themselves in that error
//     (`nn.functional.conv2d is not in the core engine ...`), not the entry point behind them.
import { KilnError } from './errors.js';
import { CORE_ONLY_FUNCTIONS, FULL_ONLY_FUNCTIONS, FULL_ONLY_LAYER_TYPES } from './generated/engines.js';
import { snakeToCamel } from './nn.js';
import type { EngineValue, RawModule } from './raw.js';
import type { EngineName } from './select.js';

/** Marks a State error of a missing part, so that an enclosing public function renames it. */
const MISSING = Symbol('kiln.notInEngine');

/**
 * The engine a JS layer runs on: kiln-dl's `core` or `full`, `inference`, kiln-dl/inference's
 * engine (the core engine without training), which cannot load the full one itself, or
 * `webgpu` (init({ backend: 'webgpu' }): every entry point and layer type of the full engine,
 * on the Wgpu backend; scripts/gen_engines.mjs fails the build otherwise).
 */
export type LoadedEngine = EngineName | 'inference' | 'webgpu';

/**
 * The error of a part the loaded engine does not have: KilnError `State`, "<name> is not in
 * the core engine that init() loaded; load the full engine with `await init({ engine: 'full' })`"
 * (under kiln-dl/inference: "... is not in kiln-dl/inference's engine; the full engine is
 * kiln-dl's: ...").
 * @param name what the user called or asked for (`nn.conv2d`, `layer type conv2d`)
 * @param engine the loaded engine
 */
export function notInEngine(name: string, engine: LoadedEngine, renamable = false): KilnError {
  const err = new KilnError('State', engine === 'inference'
    ? `${name} is not in kiln-dl/inference's engine, which runs dense models; the full engine is kiln-dl's: \`import { init } from 'kiln-dl'; await init({ engine: 'full' })\``
    : `${name} is not in the ${engine} engine that init() loaded; load the full engine with \`await init({ engine: 'full' })\``);
  // Only an entry point's stub is renamed by the public function around it; a layer type
  // (or a kiln.nn factory) already names what the user asked for.
  if (renamable) Object.defineProperty(err, MISSING, { value: true });
  return err;
}

function isMissing(err: unknown): boolean {
  return err instanceof KilnError && (err as unknown as Record<symbol, unknown>)[MISSING] === true;
}

type AnyFn = (...args: unknown[]) => unknown;

/**
 * Before the API is installed: stubs for the full-engine entry points the raw module lacks,
 * and the layer-type check of model specs (modelCreate). Nothing for the full and webgpu
 * engines (which have every entry point and layer type).
 */
export function installEngineGaps(raw: RawModule, engine: LoadedEngine): void {
  if (engine === 'full' || engine === 'webgpu') return;
  const m = raw as unknown as Record<string, unknown>;
  // The core engine has every entry point of CORE_FUNCTIONS (gen_engines.mjs reads both
  // lists from the built engines): only the full engine's others can be missing, and only
  // what the raw module lacks is stubbed.
  for (const name of FULL_ONLY_FUNCTIONS) {
    if (typeof m[name] === 'function') continue;
    m[name] = () => {
      throw notInEngine(`the engine function ${name}`, engine, true);
    };
  }
  const have = new Set(raw.layerTypes().map((t) => t.type));
  const full = new Set(FULL_ONLY_LAYER_TYPES);
  const modelCreate = raw.modelCreate;
  raw.modelCreate = function (spec: EngineValue, seed: number, single: boolean) {
    const layers = (spec as { layers?: unknown } | null)?.layers;
    if (Array.isArray(layers)) {
      layers.forEach((l: unknown, i: number) => {
        const type = (l as { type?: unknown } | null)?.type;
        if (typeof type === 'string' && !have.has(type) && full.has(type)) {
          throw notInEngine(`SequentialConfig: layers[${i}]: layer type ${snakeToCamel(type)}`, engine);
        }
      });
    }
    return modelCreate.call(this, spec, seed, single);
  };
}

/**
 * kiln-dl/inference's engine (kiln-core-inference.wasm) is the core engine without the binding
 * TUs only training calls (CMakeLists.txt KILN_TRAIN_BINDINGS) and without autodiff (no tGrad,
 * tGradRemove, tGradReplace: Tensor.grad and its kin reach them only with a Gradients, which
 * that engine never makes). Should a call ever reach one, it is a stub throwing KilnError
 * `State` that points to kiln-dl rather than a TypeError. Call after installEngineGaps.
 */
export function installInferenceGaps(raw: RawModule): void {
  const m = raw as unknown as Record<string, unknown>;
  for (const name of CORE_ONLY_FUNCTIONS) {
    if (typeof m[name] === 'function') continue;
    m[name] = () => {
      throw new KilnError('State',
        `the engine function ${name} is not in kiln-dl/inference's engine, which runs models; training is kiln-dl's: \`import { init } from 'kiln-dl'\``);
    };
  }
}

/** fn, with a missing-part error thrown inside it renamed to `name` (also for a rejected promise). */
function named(fn: AnyFn, name: string, engine: LoadedEngine): AnyFn {
  const rename = (err: unknown): never => {
    throw isMissing(err) ? notInEngine(name, engine, true) : err;
  };
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    let out: unknown;
    try {
      out = fn.apply(this, args);
    } catch (err) {
      rename(err);
    }
    if (out instanceof Promise) return out.catch(rename);
    return out;
  };
  Object.defineProperty(wrapped, 'name', { value: fn.name });
  Object.defineProperty(wrapped, 'length', { value: fn.length });
  return wrapped;
}

/** Whether v is a class (kiln.nn.Sequential, ...): left as it is. */
function isClass(v: unknown): boolean {
  return typeof v === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(v));
}

/** A frozen copy of namespace `ns` whose plain functions name themselves `${path}.${key}`. */
function namedNamespace(ns: Record<string, unknown>, path: string, engine: LoadedEngine,
  extra: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, d] of Object.entries(Object.getOwnPropertyDescriptors(ns))) {
    const v = d.value;
    if (typeof v === 'function' && !isClass(v)) d.value = named(v as AnyFn, `${path}.${key}`, engine);
    Object.defineProperty(out, key, d);
  }
  for (const [key, v] of Object.entries(extra)) {
    if (!(key in out)) out[key] = v;
  }
  return Object.isFrozen(ns) ? Object.freeze(out) : out;
}

/**
 * After the API is installed: kiln.nn gets a factory for each full-engine layer type the
 * engine lacks (throwing `State`), and the functions of kiln.nn, kiln.nn.functional and
 * kiln.io name themselves in a missing-part error. Nothing for the full engine.
 */
export function installEngineNames(kiln: Record<string, unknown>, raw: RawModule, engine: LoadedEngine): void {
  if (engine === 'full') return;
  const have = new Set(raw.layerTypes().map((t) => t.type));
  const nn = kiln.nn as Record<string, unknown>;
  const missingLayers: Record<string, unknown> = {};
  for (const type of FULL_ONLY_LAYER_TYPES) {
    if (have.has(type)) continue;
    const name = `nn.${snakeToCamel(type)}`;
    missingLayers[snakeToCamel(type)] = () => {
      throw notInEngine(name, engine);
    };
  }
  const functional = namedNamespace(nn.functional as Record<string, unknown>, 'nn.functional', engine);
  const withFunctional = namedNamespace({ ...nn, functional }, 'nn', engine, missingLayers);
  kiln.nn = Object.isFrozen(nn) ? Object.freeze(withFunctional) : withFunctional;
  if (kiln.io !== undefined) kiln.io = namedNamespace(kiln.io as Record<string, unknown>, 'io', engine);
}
