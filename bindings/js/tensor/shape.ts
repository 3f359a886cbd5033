// Shape methods: reshape, flatten, squeeze/unsqueeze, swapDims/transpose/permute, expand,
// repeat, flip, narrow, chunk, split. Results share nothing observable with the input
// (tensors are immutable). The derived ops (flatten, squeeze*, unsqueeze*, swapDims,
// transpose, repeat, narrow, chunk, split*) are the engine's (kiln/tensor/derived.hpp,
// shared with the typed C++ Tensor: one set of checks and messages); JS checks only the
// types of its arguments, then makes one call (bindings/tensor_shape.cpp).
import { camelErrors } from '../nn.js';
import { checkInt, checkIntArray } from './checks.js';
import { TensorElementwise } from './elementwise.js';
import type { Tensor } from './tensor.js';

/** A dim in [-rank, rank): negative dims count from the end (PyTorch). */
export type Dim = number;

export class TensorShape extends TensorElementwise {
  /** Same elements, new dims; one may be -1 (inferred). @throws `Shape` if the counts differ. */
  reshape(shape: readonly number[]): Tensor {
    const op = 'reshape';
    const h = this._raw(op);
    return this._e.wrap(this._e.raw.tReshape(h, checkIntArray(shape, op, 'shape')));
  }

  /** Merges dims start..=end (default 0..=-1) into one: [2, 3, 4].flatten(1, 2) -> [2, 12]. */
  flatten(start: Dim = 0, end: Dim = -1): Tensor {
    const op = 'flatten';
    const h = this._raw(op);
    checkInt(start, op, 'start');
    checkInt(end, op, 'end');
    return this._e.wrap(camelErrors(() => this._e.raw.tFlatten(h, start, end, op)));
  }

  /** Removes the size-1 dim `dim`, or every size-1 dim without `dim` (PyTorch). @throws `Shape` if that dim is not 1. */
  squeeze(dim?: Dim): Tensor {
    const op = 'squeeze';
    const h = this._raw(op);
    if (dim === undefined) return this._e.wrap(this._e.raw.tSqueeze(h));
    return this._squeezeDim(dim, op);
  }

  /** Removes the size-1 dim `dim` (Burn's squeeze_dim): [2, 1, 3] -> [2, 3] for dim 1. @throws `Shape` if its size is not 1. */
  squeezeDim(dim: Dim): Tensor {
    return this._squeezeDim(dim, 'squeezeDim');
  }

  /** @internal */
  _squeezeDim(dim: Dim, opName: string): Tensor {
    const h = this._raw(opName);
    checkInt(dim, opName, 'dim');
    return this._e.wrap(camelErrors(() => this._e.raw.tSqueezeDim(h, dim, opName)));
  }

  /** Inserts a size-1 dim at `dim` of the output (-1 = last): [2, 3] -> [2, 1, 3] for dim 1. */
  unsqueezeDim(dim: Dim): Tensor {
    return this._unsqueezeDim(dim, 'unsqueezeDim');
  }

  /** Same as unsqueezeDim (PyTorch's name). */
  unsqueeze(dim: Dim): Tensor {
    return this._unsqueezeDim(dim, 'unsqueeze');
  }

  /** @internal */
  _unsqueezeDim(dim: Dim, opName: string): Tensor {
    const h = this._raw(opName);
    checkInt(dim, opName, 'dim');
    return this._e.wrap(camelErrors(() => this._e.raw.tUnsqueezeDim(h, dim, opName)));
  }

  /** Exchanges two dims. */
  swapDims(dim1: Dim, dim2: Dim): Tensor {
    const op = 'swapDims';
    const h = this._raw(op);
    checkInt(dim1, op, 'dim');
    checkInt(dim2, op, 'dim');
    return this._e.wrap(camelErrors(() => this._e.raw.tSwapDims(h, dim1, dim2, op)));
  }

  /** Swaps the last two dims: [..., m, n] -> [..., n, m]. @throws `Rank` below rank 2. */
  transpose(): Tensor {
    const op = 'transpose';
    const h = this._raw(op);
    return this._e.wrap(camelErrors(() => this._e.raw.tTranspose(h, op)));
  }

  /** Output dim i is input dim axes[i]. @throws `Index` unless axes is a permutation; `Rank` for a wrong count. */
  permute(axes: readonly number[]): Tensor {
    const op = 'permute';
    const h = this._raw(op);
    return this._e.wrap(this._e.raw.tPermute(h, checkIntArray(axes, op, 'axes')));
  }

  /** Broadcasts to `shape` (rank >= this rank; -1 keeps a dim; new dims lead). @throws `Shape` if a non-1 dim would change. */
  expand(shape: readonly number[]): Tensor {
    const op = 'expand';
    const h = this._raw(op);
    return this._e.wrap(this._e.raw.tExpand(h, checkIntArray(shape, op, 'shape')));
  }

  /** Repeats the whole tensor `times` along dim: [2, 3].repeatDim(0, 2) -> [4, 3]. */
  repeatDim(dim: Dim, times: number): Tensor {
    const op = 'repeatDim';
    const h = this._raw(op);
    checkInt(dim, op, 'dim');
    checkInt(times, op, 'times');
    return this._e.wrap(this._e.raw.tRepeatDim(h, dim, times));
  }

  /** Repeats along every dim (torch.Tensor.repeat with rank counts). */
  repeat(times: readonly number[]): Tensor {
    const op = 'repeat';
    const h = this._raw(op);
    const list = checkIntArray(times, op, 'times');
    return this._e.wrap(camelErrors(() => this._e.raw.tRepeat(h, list, op)));
  }

  /** Reverses the order along each of dims. */
  flip(dims: readonly number[]): Tensor {
    const op = 'flip';
    const h = this._raw(op);
    return this._e.wrap(this._e.raw.tFlip(h, checkIntArray(dims, op, 'dims')));
  }

  /** `length` elements of dim from `start` (torch.narrow). @throws `Index` if out of range. */
  narrow(dim: Dim, start: number, length: number): Tensor {
    const op = 'narrow';
    const h = this._raw(op);
    checkInt(dim, op, 'dim');
    checkInt(start, op, 'start');
    checkInt(length, op, 'length');
    return this._e.wrap(camelErrors(() => this._e.raw.tNarrow(h, dim, start, length, op)));
  }

  /** `chunks` pieces of ceil(n / chunks) along dim (torch.chunk: may be fewer). @throws `Value` for chunks < 1. */
  chunk(chunks: number, dim: Dim = 0): Tensor[] {
    const op = 'chunk';
    const h = this._raw(op);
    checkInt(chunks, op, 'chunks');
    checkInt(dim, op, 'dim');
    return this._e.wrapAll(camelErrors(() => this._e.raw.tChunk(h, chunks, dim, op)));
  }

  /** Pieces of splitSize along dim, the last smaller (torch.split). @throws `Value` for splitSize < 1. */
  split(splitSize: number, dim: Dim = 0): Tensor[] {
    const op = 'split';
    const h = this._raw(op);
    checkInt(splitSize, op, 'splitSize');
    checkInt(dim, op, 'dim');
    return this._e.wrapAll(camelErrors(() => this._e.raw.tSplit(h, splitSize, dim, op)));
  }

  /** Pieces with the given sizes along dim. @throws `Shape` unless they sum to the size. */
  splitWithSizes(sizes: readonly number[], dim: Dim = 0): Tensor[] {
    const op = 'splitWithSizes';
    const h = this._raw(op);
    const list = checkIntArray(sizes, op, 'sizes');
    checkInt(dim, op, 'dim');
    return this._e.wrapAll(camelErrors(() => this._e.raw.tSplitWithSizes(h, list, dim, op)));
  }
}
