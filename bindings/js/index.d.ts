// Type declarations of kiln-dl's minimal JS API (foundation issue; the full API with
// tidy(), more ops and KilnError comes later). Hand-written: Emscripten 3.1.6 cannot emit them.

/**
 * Stable error codes (DESIGN.md). Every error thrown by the engine is a JS `Error` whose
 * `code` is one of these and whose message reads `<op>: <what is wrong>: <what was given>`,
 * e.g. `matmul: inner dimensions differ: lhs [2, 3] vs rhs [4, 5] (3 != 4)`.
 * `Internal` marks a failure that is not a Kiln error (a bug: please report it).
 */
export type ErrorCode =
  | 'Shape' | 'Rank' | 'DType' | 'Index' | 'Value' | 'Config' | 'Device' | 'NonFinite'
  | 'Format' | 'Limit' | 'OutOfMemory' | 'State' | 'Disposed' | 'Type' | 'Io' | 'Busy'
  | 'Internal';

/** What the engine throws: a plain `Error` with a `code`. The module stays usable after it. */
export interface KilnError extends Error {
  code: ErrorCode;
}

/**
 * A Float (f32) tensor of rank 1 to 4 living in WebAssembly memory. It owns that memory
 * until `dispose()` is called: the garbage collector does not free it.
 */
export interface Tensor {
  /** The dims, e.g. `[2, 3]` (a fresh array on every read). */
  readonly shape: number[];
  /** The number of dims, 1 to 4. */
  readonly rank: number;
  /**
   * Matrix product over the last two dims: `[..., m, k] · [..., k, n] -> [..., m, n]`.
   * Batch dims broadcast as in NumPy; a lower-rank operand gets leading dims of 1.
   * @throws KilnError `Shape` if the inner dims differ or the batch dims do not broadcast;
   *   `Rank` if an operand has rank 1.
   */
  matmul(rhs: Tensor): Tensor;
  /**
   * Element-wise sum with NumPy broadcasting: `[2, 1, 3] + [4, 1] -> [2, 4, 3]`.
   * @throws KilnError `Shape` if the shapes do not broadcast.
   */
  add(rhs: Tensor): Tensor;
  /**
   * `exp(x - max) / sum(exp(x - max))` along `dim` (negative counts from the end);
   * same shape as this tensor.
   * @throws KilnError `Index` if `dim` is outside [-rank, rank); `Type` if not an integer.
   */
  softmax(dim: number): Tensor;
  /** The values, row-major, in a new Float32Array (a copy, never a view of wasm memory). */
  toArray(): Float32Array;
  /** Frees the tensor's memory; the handle is unusable afterwards. Safe to call twice. */
  dispose(): void;
  /** Embind's name for `dispose()` (throws if already deleted). */
  delete(): void;
  /** Whether `dispose()` / `delete()` was called. */
  isDeleted(): boolean;
}

export interface TensorConstructor {
  /**
   * Copies `data` (row-major) into a new tensor of the given shape.
   * @param data  `shape`'s product of numbers.
   * @param shape 1 to 4 non-negative integer dims, e.g. `[2, 2]`.
   * @throws KilnError `Shape` if data's length is not the product of the dims; `Rank` for
   *   a shape of rank 0 or above 4; `Type` for a non-array or non-integer dim; `Limit`
   *   past 2^31 - 1 elements; `OutOfMemory` if the wasm heap cannot grow.
   */
  new (data: Float32Array | ArrayLike<number>, shape: readonly number[]): Tensor;
}

/** Counters of the engine's tensor buffers (leak checks: liveBuffers stays flat). */
export interface MemoryStats {
  /** Buffers allocated and not yet freed. */
  liveBuffers: number;
  /** Bytes held by those buffers. */
  liveBytes: number;
  /** Buffers allocated since the module started. */
  totalAllocations: number;
  /** Largest liveBytes seen. */
  peakBytes: number;
}

/** The loaded engine. */
export interface Kiln {
  Tensor: TensorConstructor;
  /** The SIMD instruction set of the kernels: "sse4.1" (lowered to WebAssembly SIMD128). */
  simdArch(): string;
  memory(): MemoryStats;
}

export interface InitOptions {
  /** The bytes of kiln.wasm (default: read next to the package in Node, fetched in browsers). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Maps a file name the loader needs ("kiln.wasm") to its URL. */
  locateFile?: (path: string, prefix: string) => string;
  [option: string]: unknown;
}

/** Loads the WebAssembly engine: `const kiln = await init();`. */
export function init(opts?: InitOptions): Promise<Kiln>;
