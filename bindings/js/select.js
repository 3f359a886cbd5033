// Internal: which engine build init() loads. Two builds ship in dist/:
//   'simd'          kiln.mjs + kiln.wasm: SIMD128, one thread (Node, and pages that are not
//                   cross-origin isolated)
//   'simd-threads'  kiln-mt.mjs + kiln-mt.wasm + kiln-mt.worker.js: SIMD128 + pthreads; its
//                   memory is a SharedArrayBuffer, which browsers give only to cross-origin
//                   isolated pages and their workers (COOP: same-origin + COEP: require-corp)
// The choice is a pure function of the options and of the environment, so it is tested in
// Node with made-up environments (tests/js/threads.test.mjs).
import { KilnError } from './errors.js';

/** The default thread count of the threaded build: the cores, at most this many. */
export const DEFAULT_MAX_THREADS = 4;
/** The most threads init({numThreads}) accepts (each is a Web Worker holding the module). */
export const MAX_THREADS = 64;

/**
 * What the threaded build needs, read from a browser or worker global scope.
 * @param {object} [g] the global object
 * @returns {{crossOriginIsolated: boolean, sharedMemory: boolean, workers: boolean,
 *   hardwareConcurrency: number, node: boolean}}
 */
export function detectEnvironment(g = globalThis) {
  let sharedMemory = false;
  if (typeof g.SharedArrayBuffer === 'function' && typeof g.WebAssembly === 'object') {
    try {
      const memory = new g.WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
      sharedMemory = memory.buffer instanceof g.SharedArrayBuffer;
    } catch {
      sharedMemory = false;
    }
  }
  const cores = Number(g.navigator?.hardwareConcurrency);
  return {
    crossOriginIsolated: g.crossOriginIsolated === true,
    sharedMemory,
    workers: typeof g.Worker === 'function',
    hardwareConcurrency: Number.isInteger(cores) && cores >= 1 ? cores : 1,
    node: typeof g.process === 'object' && typeof g.process?.versions?.node === 'string',
  };
}

/**
 * Picks the build from init()'s options `threads` (false | true | 'auto', default 'auto')
 * and `numThreads` (default: the cores, at most DEFAULT_MAX_THREADS).
 * 'auto' loads the threaded build when the environment allows it and more than one thread
 * is wanted; true requires it; false never loads it.
 * @param {object} opts init()'s options
 * @param {ReturnType<typeof detectEnvironment>} env
 * @returns {{build: 'simd' | 'simd-threads', threads: number}}
 * @throws KilnError `Type` for a wrong option type, `Config` for a thread count out of
 *   range or threads: true where the threaded build cannot run (saying why).
 */
export function chooseBuild(opts, env) {
  const threads = opts.threads ?? 'auto';
  if (threads !== true && threads !== false && threads !== 'auto') {
    throw new KilnError('Type', `init: threads must be true, false or 'auto', got ${describe(threads)}`);
  }
  let numThreads = opts.numThreads;
  if (numThreads !== undefined) {
    if (typeof numThreads !== 'number' || !Number.isInteger(numThreads)) {
      throw new KilnError('Type', `init: numThreads must be an integer, got ${describe(numThreads)}`);
    }
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
  const missing = [];
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

function describe(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
