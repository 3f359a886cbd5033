/// <reference lib="esnext.disposable" />
// Type declarations of kiln-dl (hand-written: Emscripten 3.1.6 cannot emit them).
// Semantics follow PyTorch (broadcasting, integer division, nan handling) with Burn's
// names in camelCase (API.md). Shapes in the docs: `[batch, dIn] -> [batch, dOut]`.

// Models, losses, optimizers, data and the Learner (H-train) are declared in train.d.ts.
import type { KilnTraining } from './train.js';
export type * from './train.js';

// ---------------------------------------------------------------- errors

/**
 * Stable error codes (DESIGN.md "Errors, limits and memory"). `Internal` marks a failure
 * that is not a Kiln error (a bug: please report it).
 */
export type ErrorCode =
  | 'Shape' | 'Rank' | 'DType' | 'Index' | 'Value' | 'Config' | 'Device' | 'NonFinite'
  | 'Format' | 'Limit' | 'OutOfMemory' | 'State' | 'Disposed' | 'Type' | 'Io' | 'Busy'
  | 'Internal';

/**
 * Every error the engine (C++ `kiln::Error`, same code and message) and the package throw.
 * The message reads `<op>: <what is wrong>: <what was given>`, e.g.
 * `matmul: inner dimensions differ: lhs [2, 3] vs rhs [4, 5] (3 != 4)`.
 * The module stays usable after any KilnError (also after `OutOfMemory`).
 */
export class KilnError extends Error {
  /** `new KilnError("Value", "op: what: given")`; the package's own errors are made this way. */
  constructor(code: ErrorCode, message: string);
  readonly name: 'KilnError';
  code: ErrorCode;
}

// ---------------------------------------------------------------- tensors

/** Element types: float32 (kind Float), int32 (kind Int), bool (kind Bool, 0/1). */
export type DType = 'float32' | 'int32' | 'bool';

/** Nested arrays of numbers or booleans (any depth, rectangular). */
export type NestedArray = number | boolean | readonly NestedArray[] | TypedArray;

export type TypedArray =
  | Float32Array | Float64Array | Int32Array | Int16Array | Int8Array | Uint8Array
  | Uint16Array | Uint32Array | Uint8ClampedArray;

/** What `toArray()` returns: nested arrays of numbers (booleans for bool), a scalar for rank 0. */
export type NestedData = number | boolean | NestedData[];

/** What `dataSync()` returns per dtype. */
export interface DataTypeMap {
  float32: Float32Array;
  int32: Int32Array;
  bool: Uint8Array;
}

export interface DTypeOption {
  /** Element type of the result (default per factory). */
  dtype?: DType;
}

export interface FromDataOptions extends DTypeOption {
  /**
   * The dims; the data (flat or nested) must hold their product of values. Default: the
   * nesting of `data` (`[]` for a number, `[length]` for a typed array).
   */
  shape?: readonly number[];
}

/**
 * Distribution of `Tensor.random` (Burn's `Distribution`). Omitted: uniform on [0, 1).
 * int32 tensors draw integers in [low, high).
 */
export type Distribution =
  | { uniform: readonly [number, number] }
  | { normal: readonly [number, number] }
  | { bernoulli: number };

/**
 * One dim's range of `slice`: `[start, end]` or `[start, end, step]` (end exclusive;
 * negative start/end count from the end; `null`/omitted end = to the end; a negative step
 * walks [start, end) backwards from its last element, as Burn's `s![1..6;-2]`), a single
 * index `i` (keeps the dim with size 1), or `null` (the whole dim).
 */
export type SliceRange =
  | readonly [number | null | undefined, (number | null)?, (number | null)?]
  | number
  | null;

/** Dim in [-rank, rank): negative dims count from the end (PyTorch). */
export type Dim = number;

/**
 * A tensor of any rank (0 to 8) living in WebAssembly memory, float32, int32 or bool.
 * float32 tensors live on `Autodiff<Cpu>`: gradients are available on every one.
 *
 * Memory: a Tensor owns WebAssembly memory until `dispose()` (or the end of the `tidy()`
 * it was created in); the garbage collector frees a lost tensor only eventually. Every op
 * returns a NEW tensor (the inputs are not changed; `requireGrad()` is the exception).
 *
 * Errors, common to every method: `Disposed` if this tensor (or a tensor argument) was
 * disposed; `Type` for an argument of the wrong type (a string where a tensor or number
 * is expected, a non-integer dim); `Index` for a dim outside [-rank, rank); `DType` for a
 * kind the op does not support (exp of an int32 tensor) or operands of different dtypes
 * (no implicit promotion, as Burn); `OutOfMemory`/`Limit` when the result cannot be
 * allocated.
 */
export interface Tensor {
  /** The dims, e.g. `[2, 3]`; `[]` for a scalar (a fresh array on every read). */
  readonly shape: number[];
  readonly dtype: DType;
  /** The number of dims (0 for a scalar). */
  readonly rank: number;
  /** The number of elements (product of the dims; 1 for a scalar). */
  readonly numel: number;
  /** Same as numel (TF.js's name). */
  readonly size: number;
  /** Whether dispose() was called (or its tidy ended). */
  readonly isDisposed: boolean;
  /**
   * Whether gradients flow to this tensor: a leaf marked with requireGrad(), or the result
   * of an op with such an input (outside noGrad). PyTorch's `requires_grad`.
   */
  readonly isRequireGrad: boolean;

  // ---- data out
  /** The values, row-major, in a new typed array (a copy): Float32Array / Int32Array / Uint8Array (bool). */
  dataSync(): Float32Array | Int32Array | Uint8Array;
  /**
   * The values as nested arrays (`[[1, 2], [3, 4]]`); booleans for bool tensors; a number
   * (boolean) for rank 0.
   */
  toArray(): NestedData;
  /** The only element. @throws KilnError `Shape` unless numel is 1. */
  item(): number | boolean;
  /**
   * Burn's Display: values nested by rank (summarised past 1000 elements), then shape,
   * device, backend, kind and dtype. `precision`: digits after the point (0 to 20;
   * default: the shortest form that reads back exactly).
   * @throws KilnError `Value` for a precision outside [0, 20].
   */
  toString(options?: { precision?: number }): string;
  /** A new handle sharing the buffer (and the autodiff node); dispose both. */
  clone(): Tensor;
  /** Frees the tensor's memory now. Safe to call twice. */
  dispose(): void;
  /** `using t = kiln.Tensor.zeros([2])` disposes at the end of the block. */
  [Symbol.dispose](): void;

  // ---- element-wise arithmetic: broadcast as NumPy ([2, 1, 3] + [4, 1] -> [2, 4, 3]).
  // `other` is a tensor of the same dtype or a number. @throws `Shape` if the shapes do not broadcast.
  /** this + other. */
  add(other: Tensor | number): Tensor;
  /** this - other. */
  sub(other: Tensor | number): Tensor;
  /** this * other. */
  mul(other: Tensor | number): Tensor;
  /**
   * this / other. float32: IEEE division; int32: floor division (Python `//`,
   * torch.floor_divide). @throws `Value` for an int32 division by zero.
   */
  div(other: Tensor | number): Tensor;
  /** int32 division truncating toward zero (torch.div(rounding_mode="trunc")). */
  divTrunc(other: Tensor | number): Tensor;
  /** Remainder with the sign of the divisor (Python `%`, torch.remainder). */
  remainder(other: Tensor | number): Tensor;
  /** Remainder with the sign of the dividend (C fmod, torch.fmod). */
  fmod(other: Tensor | number): Tensor;
  /** this ^ other (float32: std::pow; int32: exact, @throws `Value` for negative exponents). */
  pow(other: Tensor | number): Tensor;
  /** Burn's name for pow on float tensors. */
  powf(other: Tensor | number): Tensor;
  /** Burn's name for pow on int tensors. */
  powi(other: Tensor | number): Tensor;
  /** other - this, for a number other. */
  rsub(other: number): Tensor;
  /** other / this, for a number other. */
  rdiv(other: number): Tensor;
  /** Element-wise maximum (nan propagates, torch.maximum). */
  maxPair(other: Tensor): Tensor;
  /** Element-wise minimum (nan propagates, torch.minimum). */
  minPair(other: Tensor): Tensor;
  /** -x (float32, int32). */
  neg(): Tensor;
  /** |x|; gradient 0 at 0 (PyTorch). */
  abs(): Tensor;
  /** -1, 0 or 1 (nan stays nan). */
  sign(): Tensor;
  /** float32 only (as the following unary ops). */
  exp(): Tensor;
  /** Natural log: log(0) = -inf, log(x < 0) = nan. */
  log(): Tensor;
  /** log(1 + x), accurate for small x. */
  log1p(): Tensor;
  /** sqrt; gradient inf at 0 (PyTorch). */
  sqrt(): Tensor;
  /** Sine (radians). */
  sin(): Tensor;
  /** Cosine (radians). */
  cos(): Tensor;
  /** Hyperbolic tangent; gradient 1 - tanh². */
  tanh(): Tensor;
  /** Smallest integer >= x (gradient 0, as PyTorch). */
  ceil(): Tensor;
  /** Largest integer <= x (gradient 0). */
  floor(): Tensor;
  /** Rounds half to even (torch.round). */
  round(): Tensor;
  /** 1 / x. */
  recip(): Tensor;
  /** Gauss error function. */
  erf(): Tensor;
  /** 1 / (1 + exp(-x)). */
  sigmoid(): Tensor;
  /** max(0, x); gradient 0 at 0. */
  relu(): Tensor;
  /** x·Φ(x) (erf form), or the tanh approximation with `{approximate: "tanh"}`. */
  gelu(options?: { approximate?: 'none' | 'tanh' }): Tensor;
  /** x·sigmoid(x). */
  silu(): Tensor;
  /** x for x >= 0, negativeSlope·x otherwise (default 0.01). */
  leakyRelu(negativeSlope?: number): Tensor;
  /** log(1 + exp(beta·x)) / beta; x where beta·x > threshold (torch.nn.Softplus). @throws `Value` if beta <= 0. */
  softplus(beta?: number, threshold?: number): Tensor;
  /** exp(x - max) / Σ exp(x - max) along dim; -inf entries get 0; an all -inf row gives nan (PyTorch). */
  softmax(dim: Dim): Tensor;
  /** x - max - log Σ exp(x - max) along dim. */
  logSoftmax(dim: Dim): Tensor;
  /**
   * Clamps to [min, max] (either may be null/undefined); nan stays nan; the gradient
   * passes where min <= x <= max (torch.clamp). @throws `Value` if min > max.
   */
  clamp(min?: number | null, max?: number | null): Tensor;
  /** max(x, min) (torch.clamp(min=...)). */
  clampMin(min: number): Tensor;
  /** min(x, max) (torch.clamp(max=...)). */
  clampMax(max: number): Tensor;
  /**
   * torch.matmul: `[..., m, k] x [..., k, n] -> [..., m, n]`, batch dims broadcast
   * (`[2, 1, m, k] x [5, k, n] -> [2, 5, m, n]`); a rank-1 lhs `[k]` is a row and a rank-1
   * rhs `[k]` a column, their dim removed from the result (`[k] x [k] -> []`). float32.
   * @throws `Shape` if the inner dims differ or batch dims do not broadcast; `Rank` for a scalar.
   */
  matmul(other: Tensor): Tensor;

  // ---- comparisons -> bool tensors (broadcast; nan compares unequal to everything)
  /** x == other -> bool, same shape as the broadcast. @throws `Shape` if the shapes do not broadcast; `DType` for different dtypes. */
  equal(other: Tensor | number): Tensor;
  /** x != other -> bool (nan != nan is true). */
  notEqual(other: Tensor | number): Tensor;
  /** x > other -> bool (numeric dtypes). */
  greater(other: Tensor | number): Tensor;
  /** x >= other -> bool. */
  greaterEqual(other: Tensor | number): Tensor;
  /** x < other -> bool. */
  lower(other: Tensor | number): Tensor;
  /** x <= other -> bool. */
  lowerEqual(other: Tensor | number): Tensor;
  /** x == value -> bool (Burn's equal_elem; equal(number) is the same). @throws `Type` unless value is a number. */
  equalElem(value: number): Tensor;
  /** x != value -> bool. */
  notEqualElem(value: number): Tensor;
  /** x > value -> bool (Burn's greater_elem). */
  greaterElem(value: number): Tensor;
  /** x >= value -> bool. */
  greaterEqualElem(value: number): Tensor;
  /** x < value -> bool. */
  lowerElem(value: number): Tensor;
  /** x <= value -> bool. */
  lowerEqualElem(value: number): Tensor;
  /** bool: true where nan (float32 only). */
  isNan(): Tensor;
  /** bool: true where ±inf (float32 only). */
  isInf(): Tensor;
  /** bool [1]: whether any element is nan. */
  containsNan(): Tensor;
  /** Logic on bool tensors (broadcast). @throws `DType` for other dtypes. */
  boolNot(): Tensor;
  /** Logical and of two bool tensors (broadcast). */
  boolAnd(other: Tensor): Tensor;
  /** Logical or of two bool tensors (broadcast). */
  boolOr(other: Tensor): Tensor;
  /** Logical xor of two bool tensors (broadcast). */
  boolXor(other: Tensor): Tensor;

  // ---- casts and masks
  /** Cast to float32 (bool -> 0/1). A cast to the tensor's own dtype is a clone(). */
  float(): Tensor;
  /** Cast to int32 (float32 truncates toward zero, as PyTorch `.int()`). */
  int(): Tensor;
  /** Cast to bool (`!= 0`; nan is true). */
  bool(): Tensor;
  /** Cast to `dtype` by name (as float() / int() / bool()). @throws `Type` for an unknown dtype. */
  cast(dtype: DType): Tensor;
  /** `value` where mask is true, else this (torch.where(mask, value, this)); all three broadcast. mask: bool. */
  maskWhere(mask: Tensor, value: Tensor): Tensor;
  /** `value` where mask is true, else this (torch.masked_fill). mask: bool. */
  maskFill(mask: Tensor, value: number | boolean): Tensor;

  // ---- reductions. Whole-tensor forms return shape [1] (as Burn and Kiln's C++ API,
  // where PyTorch returns a scalar []); with a `dim` they reduce along it keeping it with
  // size 1 ([2, 3] -> [2, 1] for dim 1, as Burn's sum_dim). Float sums are accurate for any
  // length; int32 sum/prod are exact and @throws `Limit` past int32; mean of no elements is
  // nan; max/min of no elements @throws `Shape`; max/min propagate nan.
  /** Sum: [...] -> [1], or along dim (kept) as sumDim. */
  sum(dim?: Dim): Tensor;
  /** Mean: [...] -> [1] (nan for no elements; int32: floor), or along dim as meanDim. */
  mean(dim?: Dim): Tensor;
  /** Product: [...] -> [1], or along dim as prodDim. */
  prod(dim?: Dim): Tensor;
  /** Maximum: [...] -> [1] (gradient split evenly across ties, as PyTorch), or along dim as maxDim. */
  max(dim?: Dim): Tensor;
  /** Minimum: [...] -> [1], or along dim as minDim. */
  min(dim?: Dim): Tensor;
  /** bool: any / all elements non-zero. */
  any(dim?: Dim): Tensor;
  /** bool [1]: every element non-zero (or along dim, kept, as allDim). */
  all(dim?: Dim): Tensor;
  /** [..., n, ...] -> [..., 1, ...] */
  sumDim(dim: Dim): Tensor;
  /** Mean along dim (kept): [2, 3] -> [1, 3] for dim 0. */
  meanDim(dim: Dim): Tensor;
  /** Product along dim (kept). */
  prodDim(dim: Dim): Tensor;
  /** Maximum along dim (kept); gradient to the first maximal element. */
  maxDim(dim: Dim): Tensor;
  /** Minimum along dim (kept). */
  minDim(dim: Dim): Tensor;
  /** bool: any element non-zero along dim (kept). */
  anyDim(dim: Dim): Tensor;
  /** bool: every element non-zero along dim (kept). */
  allDim(dim: Dim): Tensor;
  /** [values, int32 indices] of the max along dim (kept); first index on ties; gradient routed to it. */
  maxDimWithIndices(dim: Dim): [Tensor, Tensor];
  /** [values, int32 indices] of the min along dim (kept); first index on ties. */
  minDimWithIndices(dim: Dim): [Tensor, Tensor];
  /** int32 index of the max along dim (kept, torch.argmax keepdim=True); first on ties; nan counts as the max. */
  argmax(dim: Dim): Tensor;
  /** int32 index of the min along dim (kept); first on ties. */
  argmin(dim: Dim): Tensor;
  /** Variance along dim (kept), divisor n - 1 (unbiased, default) or n. float32. */
  var(dim: Dim, unbiased?: boolean): Tensor;
  /** Variance with divisor n (Burn's var_bias). */
  varBias(dim: Dim): Tensor;
  /** [variance, mean] along dim (both kept). */
  varMean(dim: Dim, unbiased?: boolean): [Tensor, Tensor];
  /** Sorted along dim (default -1), stable; nan last ascending (torch.sort). */
  sort(dim?: Dim, descending?: boolean): Tensor;
  /** Sorted largest first along dim (default -1). */
  sortDescending(dim?: Dim): Tensor;
  /** int32 indices that sort along dim (stable). */
  argsort(dim?: Dim, descending?: boolean): Tensor;
  /** [sorted values, int32 indices] along dim (default -1), stable; the gradient follows the permutation. */
  sortWithIndices(dim?: Dim, descending?: boolean): [Tensor, Tensor];
  /** The k largest along dim (default -1), largest first. @throws `Index` if k > size. */
  topk(k: number, dim?: Dim): Tensor;
  /** [the k largest values, their int32 indices] along dim (default -1). @throws `Index` if k > size. */
  topkWithIndices(k: number, dim?: Dim): [Tensor, Tensor];

  // ---- shape (results share nothing observable with the input: tensors are immutable)
  /** Same elements, new dims; one may be -1 (inferred). @throws `Shape` if the counts differ. */
  reshape(shape: readonly number[]): Tensor;
  /** Merges dims start..=end (default 0..=-1) into one: [2, 3, 4].flatten(1, 2) -> [2, 12]. */
  flatten(start?: Dim, end?: Dim): Tensor;
  /** Removes the size-1 dim `dim`, or every size-1 dim without `dim` (PyTorch). @throws `Shape` if that dim is not 1. */
  squeeze(dim?: Dim): Tensor;
  /** Removes the size-1 dim `dim` (Burn's squeeze_dim): [2, 1, 3] -> [2, 3] for dim 1. @throws `Shape` if its size is not 1. */
  squeezeDim(dim: Dim): Tensor;
  /** Inserts a size-1 dim at `dim` of the output (-1 = last): [2, 3] -> [2, 1, 3] for dim 1. */
  unsqueezeDim(dim: Dim): Tensor;
  /** Same as unsqueezeDim (PyTorch's name). */
  unsqueeze(dim: Dim): Tensor;
  /** Exchanges two dims. */
  swapDims(dim1: Dim, dim2: Dim): Tensor;
  /** Swaps the last two dims: [..., m, n] -> [..., n, m]. @throws `Rank` below rank 2. */
  transpose(): Tensor;
  /** Output dim i is input dim axes[i]. @throws `Index` unless axes is a permutation; `Rank` for a wrong count. */
  permute(axes: readonly number[]): Tensor;
  /** Broadcasts to `shape` (rank >= this rank; -1 keeps a dim; new dims lead). @throws `Shape` if a non-1 dim would change. */
  expand(shape: readonly number[]): Tensor;
  /** Repeats the whole tensor `times` along dim: [2, 3].repeatDim(0, 2) -> [4, 3]. */
  repeatDim(dim: Dim, times: number): Tensor;
  /** Repeats along every dim (torch.Tensor.repeat with rank counts). */
  repeat(times: readonly number[]): Tensor;
  /** Reverses the order along each of dims. */
  flip(dims: readonly number[]): Tensor;
  /** `length` elements of dim from `start` (torch.narrow). @throws `Index` if out of range. */
  narrow(dim: Dim, start: number, length: number): Tensor;
  /** `chunks` pieces of ceil(n / chunks) along dim (torch.chunk: may be fewer). */
  chunk(chunks: number, dim?: Dim): Tensor[];
  /** Pieces of splitSize along dim, the last smaller (torch.split). */
  split(splitSize: number, dim?: Dim): Tensor[];
  /** Pieces with the given sizes along dim. @throws `Shape` unless they sum to the size. */
  splitWithSizes(sizes: readonly number[], dim?: Dim): Tensor[];
  /**
   * Sub-tensor by ranges, one per leading dim (Burn's slice): `t.slice([[0, 2], [1, 3]])`,
   * `t.slice([null, [-2]])` (last two of dim 1), `t.slice([[1, 8, 3]])` (step 3).
   * @throws `Index` if a range lies outside its dim (Burn's rule; PyTorch would clamp);
   *   `Rank` for more ranges than dims; `Value` for step 0.
   */
  slice(ranges: readonly SliceRange[]): Tensor;
  /** A copy with the slice replaced by `values` (whose shape must equal the slice's). */
  sliceAssign(ranges: readonly SliceRange[], values: Tensor): Tensor;
  /** Entries along dim at `indices` (int32 rank 1, negative allowed; torch.index_select): dim becomes indices' length. @throws `Index` out of range. */
  select(dim: Dim, indices: Tensor | readonly number[] | Int32Array): Tensor;
  /** this[..., indices[i], ...] += values[..., i, ...] along dim (torch.index_add; repeated indices accumulate). */
  selectAssign(dim: Dim, indices: Tensor | readonly number[] | Int32Array, values: Tensor): Tensor;
  /** out[i][j] = this[indices[i][j]][j] for dim 0 (torch.gather); indices int32, same rank. Shape: indices'. */
  gather(dim: Dim, indices: Tensor): Tensor;
  /** this[indices[i][j]][j] += values[i][j] for dim 0 (torch.scatter_add; Burn's scatter). */
  scatter(dim: Dim, indices: Tensor, values: Tensor): Tensor;
  /** One-hot along a new last dim: [n] -> [n, numClasses], same dtype. @throws `Index` for a value outside [0, numClasses). */
  oneHot(numClasses: number): Tensor;

  // ---- autodiff (float32)
  /**
   * Marks this tensor, IN PLACE, as a leaf whose gradient backward() computes (PyTorch's
   * requires_grad_(), Burn's require_grad); returns this. On an op output: keeps its
   * gradient too (retain_grad). @throws `DType` unless float32.
   */
  requireGrad(): this;
  /** true: as requireGrad(); false: stops tracking this tensor (in place). Returns this. */
  setRequireGrad(require: boolean): this;
  /** The same values cut from the graph (a new tensor; no gradient flows through it). */
  detach(): Tensor;
  /**
   * Gradients of this one-element tensor (a loss) w.r.t. every tensor that required them.
   * Releases the graph: a second backward() through it throws `State`.
   * @throws `Shape` unless exactly one element; `State` if nothing requires gradients or
   *   the graph was already released.
   */
  backward(): Gradients;
  /** This tensor's gradient in `grads` (an untracked float32 tensor of this shape), or undefined. */
  grad(grads: Gradients): Tensor | undefined;
  /** Removes and returns this tensor's gradient from grads. */
  gradRemove(grads: Gradients): Tensor | undefined;
  /** Sets this tensor's gradient in grads. @throws `State` if it does not require gradients, `Shape` for a wrong shape. */
  gradReplace(grads: Gradients, grad: Tensor): void;
}

export interface TensorStatic {
  /**
   * A tensor from nested arrays (`[[1, 2], [3, 4]]` -> [2, 2]), a number (rank 0), or a
   * typed array (+ `shape`). Default dtype: bool if every value is a boolean, int32 for
   * Int8/16/32 and Uint8/16/32 typed arrays, else float32. int32 conversion truncates toward zero.
   * @throws KilnError `Shape` for ragged rows (naming the position, `data[1]`) or a data
   *   length that does not match `shape`; `Type` for a non-numeric value (naming its
   *   position) or bad options; `Value` for a value that does not fit in int32.
   */
  fromData(data: NestedArray, options?: FromDataOptions): Tensor;
  /** Zeros of `shape` (default float32). @throws `Type` for a bad shape; `Limit` past 2^31 - 1 elements; `OutOfMemory`. */
  zeros(shape: readonly number[], options?: DTypeOption): Tensor;
  /** Ones of `shape` (default float32). Errors as zeros. */
  ones(shape: readonly number[], options?: DTypeOption): Tensor;
  /** Filled with value (dtype: bool for a boolean value, else float32 unless given). */
  full(shape: readonly number[], value: number | boolean, options?: DTypeOption): Tensor;
  /**
   * Random values: uniform [0, 1) by default, `{uniform: [a, b]}`, `{normal: [mean, std]}`,
   * `{bernoulli: p}`. `seed` reseeds the engine's generator first (kiln.seed); the same
   * seed gives the same values natively and in WebAssembly.
   * @throws `Value` for a bad distribution (low >= high, std < 0, p outside [0, 1]).
   */
  random(shape: readonly number[], distribution?: Distribution, options?: DTypeOption & { seed?: number }): Tensor;
  /**
   * [start, end) by step (`arange(5)` = [0, 5)): shape [ceil((end - start) / step)];
   * int32 when all arguments are integers, else float32. @throws `Value` for step 0.
   */
  arange(start: number, end?: number | DTypeOption, step?: number | DTypeOption, options?: DTypeOption): Tensor;
  /** The n x m identity (m defaults to n), float32 unless given. */
  eye(n: number, m?: number | DTypeOption, options?: DTypeOption): Tensor;
  /** Zeros with t's shape (and dtype, unless given). */
  zerosLike(t: Tensor, options?: DTypeOption): Tensor;
  /** Ones with t's shape (and dtype, unless given). */
  onesLike(t: Tensor, options?: DTypeOption): Tensor;
  /** `value` with t's shape (and dtype, unless given). */
  fullLike(t: Tensor, value: number | boolean, options?: DTypeOption): Tensor;
  /**
   * Concatenates along dim (torch.cat): same dtype and rank, same dims outside dim.
   * @throws `Shape` naming the first mismatch; `Value` for an empty list; `DType`/`Rank`.
   */
  cat(tensors: readonly Tensor[], dim?: Dim): Tensor;
  /** Stacks equal shapes along a new dim (torch.stack): n x [a, b] -> [n, a, b] for dim 0. */
  stack(tensors: readonly Tensor[], dim?: Dim): Tensor;
  /** Internal: create tensors with the factories above (`new` @throws `Type`). Allows `t instanceof kiln.Tensor`. */
  new (token: never, handle: never): Tensor;
  prototype: Tensor;
}

/** The gradients of one backward() (Burn's Gradients). Dispose it (or create it inside tidy). */
export interface GradientsStatic {
  /** Internal: returned by tensor.backward(). Allows `g instanceof kiln.Gradients`. */
  new (token: never, handle: never): Gradients;
  prototype: Gradients;
}

export interface Gradients {
  /** The number of tensors with a gradient. */
  readonly size: number;
  readonly isDisposed: boolean;
  /** The gradient of tensor (as tensor.grad(this)). */
  get(tensor: Tensor): Tensor | undefined;
  /** Frees the gradients now (safe twice). */
  dispose(): void;
  /** `using grads = loss.backward()` disposes at the end of the block. */
  [Symbol.dispose](): void;
}

/** Activation functions (Burn's burn::tensor::activation), each `[...] -> [...]` on float32. */
export interface Activation {
  /** max(0, x); gradient 0 at 0 (torch.relu). */
  relu(x: Tensor): Tensor;
  /** x for x >= 0, negativeSlope·x otherwise (default 0.01, torch). */
  leakyRelu(x: Tensor, negativeSlope?: number): Tensor;
  /** 1 / (1 + exp(-x)), exactly 0 and 1 in the far tails without overflow. */
  sigmoid(x: Tensor): Tensor;
  /** log(sigmoid(x)) = -softplus(-x), stable for large |x|. */
  logSigmoid(x: Tensor): Tensor;
  /** Hyperbolic tangent. */
  tanh(x: Tensor): Tensor;
  /** x·Φ(x) (erf form, torch approximate="none"), or the tanh approximation (Hendrycks & Gimpel 2016). */
  gelu(x: Tensor, options?: { approximate?: 'none' | 'tanh' }): Tensor;
  /** x·sigmoid(x) (SiLU / swish). */
  silu(x: Tensor): Tensor;
  /** log(1 + exp(beta·x)) / beta, x where beta·x > threshold (defaults 1, 20; torch.nn.Softplus). @throws `Value` if beta <= 0. */
  softplus(x: Tensor, beta?: number, threshold?: number): Tensor;
  /** Along dim. @throws `Index` for a bad dim. */
  softmax(x: Tensor, dim: Dim): Tensor;
  /** x - max - log Σ exp(x - max) along dim, without forming the softmax. @throws `Index` for a bad dim. */
  logSoftmax(x: Tensor, dim: Dim): Tensor;
  /** softmax(-x) along dim. */
  softmin(x: Tensor, dim: Dim): Tensor;
}

/** kiln.memory(): the engine's memory, for leak checks (flat across a training loop). */
export interface MemoryInfo {
  /** Bytes held by live tensor buffers (shared buffers counted once). */
  bytes: number;
  /** Live JS Tensor objects (created and not disposed). */
  tensors: number;
  /** The WebAssembly memory size in bytes (grows, never shrinks). */
  heapBytes: number;
  /** Bytes malloc'd and not freed on the WebAssembly heap (buffers, graph nodes, ...). */
  mallocBytes: number;
  /** Live tensor buffers. */
  buffers: number;
  /** Live autodiff graph nodes. */
  graphNodes: number;
  /** Largest `bytes` seen. */
  peakBytes: number;
  /** Buffers allocated since start. */
  totalAllocations: number;
}

/** kiln.backendInfo(). */
export interface BackendInfo {
  /** Whether the kernels use SIMD (WebAssembly SIMD128). */
  simd: boolean;
  /** Kernel threads (1 in the single-threaded build). */
  threads: number;
  /** The xsimd instruction set the kernels were compiled for ("sse4.1", lowered to simd128). */
  arch: string;
  /** Which build was loaded: "simd" or "simd-threads". */
  build: string;
  /** The engine backend of float tensors: "autodiff<cpu>". */
  backend: string;
}

/** The loaded engine (`const kiln = await init()`). */
export interface Kiln extends KilnTraining {
  Tensor: TensorStatic;
  Gradients: GradientsStatic;
  KilnError: typeof KilnError;
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
  /** Which build and kernels were loaded: `{simd: true, threads: 1, arch: "sse4.1", build: "simd"}`. */
  backendInfo(): BackendInfo;
}

export interface InitOptions {
  /**
   * Also free tensors (and Gradients) that the garbage collector finds unreachable
   * without dispose() (a FinalizationRegistry; when that happens is up to the GC). Off by
   * default: it costs ~3 µs per tensor created, more than a small op. dispose() and
   * tidy() work either way.
   */
  autoDispose?: boolean;
  /** The bytes of kiln.wasm (default: read next to the package in Node, fetched in browsers). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Maps a file name the loader needs ("kiln.wasm") to its URL. */
  locateFile?: (path: string, prefix: string) => string;
  [option: string]: unknown;
}

/** Loads the WebAssembly engine: `const kiln = await init();` (Node 20, browsers, workers). */
export function init(opts?: InitOptions): Promise<Kiln>;
