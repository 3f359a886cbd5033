// Internal: which engine build init() loads. Two builds ship in dist/:
//   'simd'          kiln.mjs + kiln.wasm: SIMD128, one thread (Node, and pages that are not
//                   cross-origin isolated)
//   'simd-threads'  kiln-mt.mjs + kiln-mt.wasm + kiln-mt.worker.js: SIMD128 + pthreads; its
//                   memory is a SharedArrayBuffer, which browsers give only to cross-origin
//                   isolated pages and their workers (COOP: same-origin + COEP: require-corp)
// and, orthogonal to the build, the engine profile (chooseEngineBuild): 'core'
// (kiln-core.mjs + kiln-core.wasm, the default, single-threaded only) or 'full' (the two
// builds above). The choice is a pure function of the options and of the environment, so
// it is tested in Node with made-up environments (tests/js/threads.test.mjs,
// tests/js/engine_core.test.mjs).
import { KilnError } from './errors.js';

/** The default thread count of the threaded build: the cores, at most this many. */
export const DEFAULT_MAX_THREADS = 4;
/** The most threads init({numThreads}) accepts (each is a Web Worker holding the module). */
export const MAX_THREADS = 64;

/** What the threaded build needs of the environment (detectEnvironment's result). */
export interface Environment {
  crossOriginIsolated: boolean;
  sharedMemory: boolean;
  workers: boolean;
  hardwareConcurrency: number;
  node: boolean;
}

/** The parts of a global scope detectEnvironment reads (browser, worker or Node). */
interface GlobalLike {
  SharedArrayBuffer?: unknown;
  WebAssembly?: { Memory: new (d: { initial: number; maximum: number; shared: boolean }) => { buffer: unknown } };
  navigator?: { hardwareConcurrency?: unknown };
  crossOriginIsolated?: unknown;
  Worker?: unknown;
  process?: { versions?: { node?: unknown } };
}

/** init()'s options that choose the build. */
export interface BuildOptions {
  threads?: unknown;
  numThreads?: unknown;
}

/**
 * What the threaded build needs, read from a browser or worker global scope.
 * @param g the global object
 */
export function detectEnvironment(g: object = globalThis): Environment {
  const scope = g as GlobalLike;
  let sharedMemory = false;
  const Shared = scope.SharedArrayBuffer;
  if (typeof Shared === 'function' && typeof scope.WebAssembly === 'object') {
    try {
      const memory = new scope.WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
      sharedMemory = memory.buffer instanceof Shared;
    } catch {
      sharedMemory = false;
    }
  }
  const cores = Number(scope.navigator?.hardwareConcurrency);
  return {
    crossOriginIsolated: scope.crossOriginIsolated === true,
    sharedMemory,
    workers: typeof scope.Worker === 'function',
    hardwareConcurrency: Number.isInteger(cores) && cores >= 1 ? cores : 1,
    node: typeof scope.process === 'object' && typeof scope.process?.versions?.node === 'string',
  };
}

/**
 * Picks the build from init()'s options `threads` (false | true | 'auto', default 'auto')
 * and `numThreads` (default: the cores, at most DEFAULT_MAX_THREADS).
 * 'auto' loads the threaded build when the environment allows it and more than one thread
 * is wanted; true requires it; false never loads it.
 * @param opts init()'s options
 * @param env what detectEnvironment found
 * @throws KilnError `Type` for a wrong option type, `Config` for a thread count out of
 *   range or threads: true where the threaded build cannot run (saying why).
 */
export function chooseBuild(opts: BuildOptions, env: Environment): { build: 'simd' | 'simd-threads'; threads: number } {
  const threads = opts.threads ?? 'auto';
  if (threads !== true && threads !== false && threads !== 'auto') {
    throw new KilnError('Type', `init: threads must be true, false or 'auto', got ${describe(threads)}`);
  }
  const given = opts.numThreads;
  let numThreads: number | undefined;
  if (given !== undefined) {
    if (typeof given !== 'number' || !Number.isInteger(given)) {
      throw new KilnError('Type', `init: numThreads must be an integer, got ${describe(given)}`);
    }
    numThreads = given;
    if (numThreads < 1 || numThreads > MAX_THREADS) {
      throw new KilnError('Config', `init: numThreads must be in [1, ${MAX_THREADS}], got ${numThreads}`);
    }
  }
  if (threads === false) {
    if (numThreads !== undefined && numThreads > 1) {
      throw new KilnError('Config', `init: numThreads ${numThreads} with threads: false (the single-threaded build has 1 thread)`);
    }
    return { build: 'simd', threads: 1 };
  }
  const missing: string[] = [];
  if (env.node) missing.push('Node loads the single-threaded build (kiln-dl\'s Node entry)');
  else {
    if (!env.crossOriginIsolated) {
      missing.push('the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)');
    }
    if (!env.sharedMemory) missing.push('SharedArrayBuffer / shared WebAssembly memory is unavailable');
    if (!env.workers) missing.push('Worker is unavailable here');
  }
  const wanted = numThreads ?? Math.min(env.hardwareConcurrency, DEFAULT_MAX_THREADS);
  if (threads === true) {
    if (missing.length) {
      throw new KilnError('Config', `init: threads: true, but the threaded build cannot run: ${missing.join('; ')}`);
    }
    return { build: 'simd-threads', threads: wanted };
  }
  // 'auto': the threaded build only pays off with more than one thread.
  if (missing.length || wanted <= 1) return { build: 'simd', threads: 1 };
  return { build: 'simd-threads', threads: wanted };
}

export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

// ---- relaxed SIMD (FMA): kiln-relaxed.wasm beside kiln.wasm (kiln-mt-relaxed.wasm beside kiln-mt.wasm) ----
// A relaxed build is the SIMD128 build whose GEMM and convolution kernels multiply-add
// with f32x4.relaxed_madd (engine/src/cpu/madd.hpp, scripts/relax_wasm.mjs); it shares the
// SIMD128 build's glue (kiln.mjs, kiln-core.mjs or kiln-mt.mjs). Engines without relaxed SIMD (Node 20 without
// --experimental-wasm-relaxed-simd, older browsers) reject the whole module, so init()
// first validates a tiny module holding that one instruction.

/**
 * `(module (func (param v128 v128 v128) (result v128)
 *   local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd))`: the final opcode 0xfd 0x105
 * (relaxed-simd Overview.md, "Binary format").
 */
export const RELAXED_SIMD_PROBE: Uint8Array = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
  0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b, // type: (v128 v128 v128) -> v128
  0x03, 0x02, 0x01, 0x00, // one function of type 0
  0x0a, 0x0d, 0x01, 0x0b, 0x00, // code: one body of 11 bytes, no locals
  0x20, 0x00, 0x20, 0x01, 0x20, 0x02, // local.get 0, 1, 2
  0xfd, 0x85, 0x02, // f32x4.relaxed_madd
  0x0b, // end
]);

/**
 * Whether this WebAssembly engine accepts relaxed SIMD (WebAssembly.validate of
 * RELAXED_SIMD_PROBE; false where WebAssembly is missing or throws).
 * @param g the global object
 */
export function detectRelaxedSimd(g: object = globalThis): boolean {
  const wasm = (g as { WebAssembly?: { validate?: (bytes: Uint8Array) => boolean } }).WebAssembly;
  try {
    return typeof wasm?.validate === 'function' && wasm.validate(RELAXED_SIMD_PROBE) === true;
  } catch {
    return false;
  }
}

/** The .wasm file of the relaxed build of an engine whose SIMD128 build is `base`.wasm. */
export function relaxedWasmFile(base: string): string {
  return `${base}-relaxed.wasm`;
}

/**
 * Whether init() loads the relaxed-SIMD build, and why (backendInfo().buildReason), from
 * init()'s option `relaxedSimd` (true | false | 'auto', default 'auto'), the build
 * chooseBuild picked and whether the engine validates relaxed SIMD.
 * 'auto' loads it wherever it runs, for either build (kiln-relaxed.wasm, kiln-core-relaxed.wasm,
 * kiln-mt-relaxed.wasm); true requires it.
 * @param opts init()'s options
 * @param build chooseBuild's choice
 * @param supported detectRelaxedSimd()'s answer
 * @throws KilnError `Type` for a wrong option value, `Config` for relaxedSimd: true where
 *   the relaxed build cannot run (saying why).
 */
export function chooseRelaxed(
  opts: { relaxedSimd?: unknown },
  build: 'simd' | 'simd-threads',
  supported: boolean,
): { relaxed: boolean; reason: string } {
  const wanted = opts.relaxedSimd ?? 'auto';
  if (wanted !== true && wanted !== false && wanted !== 'auto') {
    throw new KilnError('Type', `init: relaxedSimd must be true, false or 'auto', got ${describe(wanted)}`);
  }
  const threads = build === 'simd-threads' ? ' + threads' : '';
  if (wanted === false) return { relaxed: false, reason: `SIMD128${threads}: init({relaxedSimd: false})` };
  if (!supported) {
    if (wanted === true) {
      throw new KilnError('Config', 'init: relaxedSimd: true, but this WebAssembly engine does not support relaxed SIMD (WebAssembly.validate of f32x4.relaxed_madd is false)');
    }
    return { relaxed: false, reason: `SIMD128${threads}: this WebAssembly engine does not support relaxed SIMD (f32x4.relaxed_madd)` };
  }
  return { relaxed: true, reason: `relaxed SIMD${threads}: this WebAssembly engine validates f32x4.relaxed_madd (FMA in the GEMM and convolution kernels)` };
}

/**
 * backendInfo().buildReason once the module runs: the reason chooseRelaxed gave, unless the
 * engine reports another build than the one chosen (a caller's wasmBinary or locateFile
 * supplied other bytes).
 * @param module the instantiated engine
 * @param relaxed chooseRelaxed's answer
 */
export function finishReason(module: { backendInfo(): { build: string } }, relaxed: { relaxed: boolean; reason: string }): string {
  const build = module.backendInfo().build;
  if (build.endsWith('-relaxed') === relaxed.relaxed) return relaxed.reason;
  return `${build}: the module given by init()'s wasmBinary or locateFile`;
}

// ---- the engine profile (DESIGN.md "Engines"): kiln-core.{mjs,wasm} or kiln.{mjs,wasm}

/**
 * The engine profiles: 'core' (kiln-core.wasm: tensors and the op table, autodiff,
 * Sequential with the dense layers, losses, optimizers, the Learner, SafeTensors records)
 * and 'full' (kiln.wasm / kiln-mt.wasm: every op, layer and reader).
 */
export type EngineName = 'core' | 'full';

/** init()'s options that choose the engine and its build. */
export interface EngineOptions extends BuildOptions {
  engine?: unknown;
}

/**
 * Picks the engine profile (`engine`, default 'core') and its build: the full engine as
 * chooseBuild says; the core engine only has the single-threaded build, so `threads: 'auto'`
 * loads it and `threads: true` is an error.
 * @param opts init()'s options
 * @param env what detectEnvironment found
 * @throws KilnError `Type` for an engine other than 'core' or 'full' (and chooseBuild's
 *   errors); `Config` for `threads: true` with the core engine.
 */
export function chooseEngineBuild(opts: EngineOptions, env: Environment): {
  engine: EngineName;
  build: 'simd' | 'simd-threads';
  threads: number;
} {
  const engine = opts.engine ?? 'core';
  if (engine !== 'core' && engine !== 'full') {
    throw new KilnError('Type', `init: engine must be 'core' or 'full', got ${describe(engine)}`);
  }
  if (engine === 'core' && opts.threads === true) {
    throw new KilnError('Config', "init: threads: true, but the core engine has no threaded build; load the full engine with `await init({ engine: 'full', threads: true })`");
  }
  const choice = chooseBuild(opts, env);
  if (engine === 'full') return { engine, ...choice };
  return { engine, build: 'simd', threads: 1 };
}

