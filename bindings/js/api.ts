/// <reference lib="esnext.disposable" preserve="true" />
// The loaded engine's object (`const kiln = await init()`) and init()'s options: the shape
// of what finishModule (module.ts) builds. Tensor, Gradients and the training classes are
// declared by their own classes; this file gathers them.
import type { KilnError } from './errors.js';
import type { Activation } from './tensor/activation.js';
import type { Gradients } from './tensor/gradients.js';
import type { MemoryInfo } from './tensor/memory.js';
import type { Tensor } from './tensor/tensor.js';
import type { KilnTraining, Data } from './train_api.js';
import type { DataPipeline } from './data/install.js';
import type { Io } from './io.js';
import type { Module } from './module_class.js';
import type { Param } from './module_param.js';

/** kiln.Tensor: the factories (static methods) and `instanceof`. */
export type TensorStatic = typeof Tensor;
/** kiln.Gradients: for `instanceof` (returned by tensor.backward()). */
export type GradientsStatic = typeof Gradients;

/** kiln.backendInfo(). */
export interface BackendInfo {
  /** Whether the kernels use SIMD (WebAssembly SIMD128). */
  simd: boolean;
  /** Threads the kernels use now (1 in the single-threaded build; see Kiln.setNumThreads). */
  threads: number;
  /** The most threads this build can use: 1, or init's numThreads in the threaded build. */
  maxThreads: number;
  /** The xsimd instruction set the kernels were compiled for ("sse4.1", lowered to simd128). */
  arch: string;
  /**
   * Which build was loaded: "simd" (kiln.wasm, one thread: Node, and pages that are not
   * cross-origin isolated), "simd-threads" (kiln-mt.wasm: SIMD + a pool of Web Workers) or
   * "simd-relaxed" (kiln-relaxed.wasm: one thread, the GEMM and convolution kernels
   * multiply-add with relaxed SIMD's f32x4.relaxed_madd, an FMA where the CPU has one;
   * loaded where WebAssembly.validate accepts that instruction, see InitOptions.relaxedSimd),
   * or "simd-threads-relaxed" (kiln-mt-relaxed.wasm: the threaded build with those kernels).
   * The engine reports it (what its GEMM was compiled with). "webgpu" for
   * init({ backend: 'webgpu' }) (kiln-webgpu.wasm: every tensor op runs as a WGSL kernel on the
   * GPU; `simd` and `arch` then describe the engine's own CPU-side code: host copies, the
   * random initial weights).
   */
  build: 'simd' | 'simd-threads' | 'simd-relaxed' | 'simd-threads-relaxed' | 'webgpu';
  /**
   * Why init() loaded this build, e.g. "relaxed SIMD: this WebAssembly engine validates
   * f32x4.relaxed_madd (...)" or "SIMD128: this WebAssembly engine does not support relaxed
   * SIMD (f32x4.relaxed_madd)".
   */
  buildReason: string;
  /**
   * The engine backend of float tensors: "autodiff<cpu>", or "autodiff<webgpu>" (InitOptions.backend);
   * "cpu" under kiln-dl/inference, whose tensors record no graph.
   */
  backend: string;
  /**
   * The GPU adapter the webgpu backend runs on ("google swiftshader ...": GPUAdapterInfo's
   * vendor, architecture and description), or null on the cpu backend.
   */
  adapter: string | null;
  /**
   * The engine profile init() loaded (InitOptions.engine): "core" (kiln-core.wasm: tensors,
   * autodiff, Sequential with the dense layers, losses, optimizers, the Learner, SafeTensors)
   * or "full" (kiln.wasm / kiln-mt.wasm: every op, layer and reader).
   */
  engine: 'core' | 'full' | 'webgpu';
  /**
   * The deferred half of the engine (issue 17's lazy loading; bindings/js/deferred.ts). Each
   * single-thread engine ships split by binaryen's wasm-split: init() loads the functions a
   * page that trains an MLP runs, and <engine>.deferred.wasm holds the rest, fetched and
   * instantiated on the first call of any of them (synchronously; or ahead of time with
   * kiln.loadDeferred()). "pending" until then, "loaded" after; "none" for a build that is not
   * split (the threaded build).
   */
  deferred: 'none' | 'pending' | 'loaded';
}

/** The loaded engine (`const kiln = await init()`). */
export interface Kiln extends KilnTraining {
  /** kiln.data: the WASM-side Datasets (fromArrays, mnist) and the data pipeline (datasets of JS values, batchers, DataLoader). */
  data: Data & DataPipeline;
  /** kiln.io: SafeTensors bytes, Node files, IndexedDB, downloads. */
  io: Io;
  Tensor: TensorStatic;
  Gradients: GradientsStatic;
  KilnError: typeof KilnError;
  /**
   * The base class of models written in JS (PyTorch's nn.Module): `class Net extends
   * kiln.Module { constructor() { super(); this.fc1 = kiln.nn.linear({...}); } forward(x) {...} }`.
   * kiln.nn's Sequential and layers are Modules too.
   */
  Module: typeof Module;
  /** A module parameter: a float32 Tensor with a stable ParamId (`new kiln.Param(tensor)`, or `this.param(name, tensor)`). */
  Param: typeof Param;
  activation: Activation;
  /**
   * Runs fn and disposes every Tensor and Gradients created inside it except those it
   * returns (also inside returned arrays, plain objects and Maps), as tf.tidy. Nests: kept
   * tensors belong to the enclosing tidy. fn must be synchronous.
   * @throws KilnError `State` if fn returns a Promise (its tensors are disposed); whatever fn throws (after disposing).
   */
  tidy<T>(fn: () => T): T;
  /** tidy with a name (for TF.js-style code; the name is not used). */
  tidy<T>(name: string, fn: () => T): T;
  /** Excludes t from every enclosing tidy (it lives until dispose()); returns t. */
  keep<T extends Tensor | Gradients>(t: T): T;
  /** Disposes every Tensor/Gradients in value (arrays, plain objects, Maps). */
  dispose(value: unknown): void;
  /**
   * Runs fn without recording the autodiff graph (torch.no_grad): results of float ops are
   * untracked. Only fn's synchronous part.
   */
  noGrad<T>(fn: () => T): T;
  /** The engine's memory now (see MemoryInfo): flat across a leak-free loop. */
  memory(): MemoryInfo;
  /** Seeds the generator of Tensor.random (and of anything else random in the engine). @throws `Type` for a non-integer. */
  seed(seed: number): void;
  /** Which build and kernels were loaded: `{simd: true, threads: 1, maxThreads: 1, arch: "sse4.1", build: "simd", ...}`. */
  backendInfo(): BackendInfo;
  /**
   * Sets the threads the kernels use from the next op on (the calling thread included);
   * results are bit-identical for every count. Large matrix products split their output,
   * convolutions their batch, batched matmul its batch elements.
   * @throws KilnError `Type` for a non-integer; `Config` unless 1 <= n <= backendInfo().maxThreads
   *   (always 1 in the single-threaded build).
   */
  setNumThreads(n: number): void;
  /**
   * Fetches, compiles and instantiates the engine's deferred module now (see
   * BackendInfo.deferred), and the JS layer's deferred functions (the bundled browser entries
   * ship the functions a training page never calls in <chunk>.deferred.txt: scripts/split_js.mjs),
   * so that no later call waits on a synchronous request for them (a page otherwise fetches each
   * synchronously on the first call that needs it). Resolves at once if they are loaded or the
   * build is not split. Idempotent.
   * @throws KilnError `Io` when the file cannot be fetched or compiled (the engine stays usable;
   *   a later call may retry).
   */
  loadDeferred(): Promise<void>;
}

export interface InitOptions {
  /**
   * Which engine to load (DESIGN.md "Engines"; README "Core and full engine"):
   * - 'core' (default): kiln-core.wasm, the small engine a page needs to build an MLP and
   *   train it: tensors and every Tensor op, autodiff, `kiln.nn.sequential` with the dense
   *   layers (linear, dropout, the activations, reshape, flatten), the losses, optimizers and
   *   schedules, the Learner, datasets, SafeTensors records. Single-threaded.
   * - 'full': kiln.wasm (kiln-mt.wasm with threads): also convolutions, pools,
   *   normalisations, embedding, recurrent and attention layers, kiln.nn.functional's
   *   layer forms, resampling, MessagePack and PyTorch readers.
   * In the core engine, a function, method or layer type of the full engine throws
   * KilnError `State`: "<name> is not in the core engine that init() loaded; load the full
   * engine with `await init({ engine: 'full' })`". Each init() returns an independent
   * instance (a page may hold a core and a full one; tensors do not cross instances).
   * @throws KilnError `Type` for another value; `Config` for 'core' with `threads: true`
   *   (the threaded build is full only; `threads: 'auto'` loads the single-threaded core).
   */
  engine?: 'core' | 'full';
  /**
   * The backend (issue 21; Burn's `Wgpu` vs `NdArray`):
   * - 'cpu' (default): the WebAssembly engines above;
   * - 'webgpu': the webgpu engine (kiln-webgpu.wasm) on the browser's GPU (navigator.gpu:
   *   a secure context, https or localhost). Tensors live in GPU buffers and every op runs as
   *   a WebGPU compute shader; reads are asynchronous, so `await tensor.data()` /
   *   `await tensor.array()` read, and dataSync(), toArray() and item() throw KilnError
   *   `State`. It has tensors, autodiff, the dense layers (kiln.nn.sequential, forward) and
   *   SafeTensors loading; the Learner, optimizers, datasets and full-engine layers are not
   *   in it yet (each throws KilnError `State` naming init({ backend: 'cpu' })). An error the
   *   GPU reports later (a lost device, memory) rejects the next read with KilnError `Device`
   *   or `OutOfMemory`; an out-of-memory error is reported once and the instance computes again.
   *   Cannot go with engine: 'full', threads: true or relaxedSimd: true (KilnError `Config`).
   *   init() rejects with KilnError `Device` when there is no GPU (saying why).
   * - 'auto': 'webgpu' where a GPU adapter exists, else 'cpu' (backendInfo().buildReason
   *   says why).
   * backendInfo().backend and .adapter name what was loaded.
   */
  backend?: 'cpu' | 'webgpu' | 'auto';
  /**
   * Also free tensors (and Gradients) that the garbage collector finds unreachable
   * without dispose() (a FinalizationRegistry; when that happens is up to the GC). Off by
   * default: it costs ~3 µs per tensor created, more than a small op. dispose() and
   * tidy() work either way.
   */
  autoDispose?: boolean;
  /**
   * Which build to load (browsers and workers; Node always loads the single-threaded one):
   * - 'auto' (default): the threaded build ("simd-threads", or "simd-threads-relaxed" where
   *   relaxed SIMD validates: see relaxedSimd) when the page (or the worker's
   *   page) is cross-origin isolated (`crossOriginIsolated`: served with
   *   `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy:
   *   require-corp`), shared WebAssembly memory and Worker exist, and numThreads > 1;
   *   else the single-threaded SIMD build.
   * - true: the threaded build, or a KilnError `Config` saying what is missing (also in Node).
   * - false: the single-threaded build.
   * The threaded build blocks the calling thread while its workers finish an op: call it
   * from a Web Worker to keep a page responsive.
   * @throws KilnError `Type` for another value.
   */
  threads?: boolean | 'auto';
  /**
   * Threads of the threaded build (Web Workers started at init, plus the calling thread),
   * 1 to 64; default: navigator.hardwareConcurrency, at most 4. Ignored when 'auto' falls
   * back to the single-threaded build; numThreads: 1 with 'auto' loads that build.
   * @throws KilnError `Type` for a non-integer, `Config` out of range or > 1 with threads: false.
   */
  numThreads?: number;
  /**
   * The relaxed-SIMD build (kiln-relaxed.wasm, kiln-core-relaxed.wasm for the core engine,
   * kiln-mt-relaxed.wasm for the threaded build: FMA in the GEMM and convolution kernels), checked with
   * `WebAssembly.validate` of a tiny module using f32x4.relaxed_madd (Chrome and other
   * Chromium browsers ship relaxed SIMD; Node 20 needs
   * `node --experimental-wasm-relaxed-simd`):
   * - 'auto' (default): loaded where the engine validates it, with one thread or several;
   *   SIMD128 (kiln-core.wasm / kiln.wasm / kiln-mt.wasm) elsewhere.
   * - true: required: KilnError `Config` where the engine lacks relaxed SIMD.
   * - false: never.
   * Results match SIMD128 within float32 rounding (a fused multiply-add rounds once).
   * @throws KilnError `Type` for another value.
   */
  relaxedSimd?: boolean | 'auto';
  /**
   * The bytes of the engine's .wasm: kiln-core.wasm for the core engine, kiln.wasm for the
   * full one (default: read next to the package in Node, fetched in browsers).
   */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * Maps a file name the loader needs ("kiln-core.wasm" for the core engine, "kiln.wasm"
   * for the full one; "kiln-mt.wasm" and "kiln-mt.worker.js" for the threaded build) to its
   * URL (default: next to the package's index.js). The relaxed-SIMD builds ask for the same
   * names: map them to kiln-core-relaxed.wasm / kiln-relaxed.wasm / kiln-mt-relaxed.wasm, or
   * pass relaxedSimd: false.
   */
  locateFile?: (path: string, prefix: string) => string;
  [option: string]: unknown;
}
