// Shape methods: reshape, flatten, squeeze/unsqueeze, swapDims/transpose/permute, expand,
// repeat, flip, narrow, chunk, split. Results share nothing observable with the input
// (tensors are immutable).
import { checkInt, checkIntArray, fail, normDim } from './checks.js';
import { TensorElementwise } from './elementwise.js';
import type { Tensor } from './tensor.js';

/** A dim in [-rank, rank): negative dims count from the end (PyTorch). */
export type Dim = number;

export class TensorShape extends TensorElementwise {
  /** Same elements, new dims; one may be -1 (inferred). @throws `Shape` if the counts differ. */
  reshape(shape: readonly number[]): Tensor {
    const op = 'reshape';
    const h = this._raw(op);
    checkIntArray(shape, op, 'shape');
    return this._e.wrap(this._e.raw.tReshape(h, shape));
  }

  /** Merges dims start..=end (default 0..=-1) into one: [2, 3, 4].flatten(1, 2) -> [2, 12]. */
  flatten(start: Dim = 0, end: Dim = -1): Tensor {
    const op = 'flatten';
    this._raw(op);
    const s = this._dims();
    if (s.length === 0) return this.reshape([1]);
    const a = normDim(start, s.length, op);
    const b = normDim(end, s.length, op);
    if (a > b) throw fail('Index', `${op}: start dim ${start} is after end dim ${end}`);
    const merged = s.slice(a, b + 1).reduce((x, y) => x * y, 1);
    return this.reshape([...s.slice(0, a), merged, ...s.slice(b + 1)]);
  }

  /** Removes the size-1 dim `dim`, or every size-1 dim without `dim` (PyTorch). @throws `Shape` if that dim is not 1. */
  squeeze(dim?: Dim): Tensor {
    const op = 'squeeze';
    this._raw(op);
    const s = this._dims();
    if (dim === undefined) return this.reshape(s.filter((d) => d !== 1));
    return this._squeezeDim(dim, op);
  }

  /** Removes the size-1 dim `dim` (Burn's squeeze_dim): [2, 1, 3] -> [2, 3] for dim 1. @throws `Shape` if its size is not 1. */
  squeezeDim(dim: Dim): Tensor {
    return this._squeezeDim(dim, 'squeezeDim');
  }

  /** @internal */
  _squeezeDim(dim: Dim, opName: string): Tensor {
    this._raw(opName);
    const s = this._dims();
    const d = normDim(dim, s.length, opName);
    if (s[d] !== 1) {
      throw fail('Shape', `${opName}: dim ${dim} has size ${s[d]}, expected 1 (shape [${s.join(', ')}])`);
    }
    return this.reshape([...s.slice(0, d), ...s.slice(d + 1)]);
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
    this._raw(opName);
    const s = this._dims();
    const d = normDim(dim, s.length + 1, opName);
    return this.reshape([...s.slice(0, d), 1, ...s.slice(d)]);
  }

  /** Exchanges two dims. */
  swapDims(dim1: Dim, dim2: Dim): Tensor {
    const op = 'swapDims';
    const h = this._raw(op);
    const r = this._dims().length;
    const a = normDim(dim1, r, op);
    const b = normDim(dim2, r, op);
    const axes = [...Array(r).keys()];
    axes[a] = b;
    axes[b] = a;
    return this._e.wrap(this._e.raw.tPermute(h, axes));
  }

  /** Swaps the last two dims: [..., m, n] -> [..., n, m]. @throws `Rank` below rank 2. */
  transpose(): Tensor {
    const op = 'transpose';
    this._raw(op);
    const r = this._dims().length;
    if (r < 2) throw fail('Rank', `${op}: needs rank >= 2, got shape [${this._dims().join(', ')}]`);
    return this.swapDims(r - 2, r - 1);
  }

  /** Output dim i is input dim axes[i]. @throws `Index` unless axes is a permutation; `Rank` for a wrong count. */
  permute(axes: readonly number[]): Tensor {
    const op = 'permute';
    const h = this._raw(op);
    checkIntArray(axes, op, 'axes');
    return this._e.wrap(this._e.raw.tPermute(h, axes));
  }

  /** Broadcasts to `shape` (rank >= this rank; -1 keeps a dim; new dims lead). @throws `Shape` if a non-1 dim would change. */
  expand(shape: readonly number[]): Tensor {
    const op = 'expand';
    const h = this._raw(op);
    checkIntArray(shape, op, 'shape');
    return this._e.wrap(this._e.raw.tExpand(h, shape));
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
    const self = this._raw(op);
    checkIntArray(times, op, 'times');
    const r = this._dims().length;
    if (times.length !== r) throw fail('Rank', `${op}: expected ${r} repeat counts, got ${times.length}`);
    const raw = this._e.raw;
    let h = self;
    const temps = [];
    try {
      for (let i = 0; i < r; i++) {
        if (times[i] !== 1) {
          h = raw.tRepeatDim(h, i, times[i]);
          temps.push(h);
        }
      }
      return this._e.wrap(temps.pop() ?? self.clone());
    } finally {
      for (const t of temps) t.delete();
    }
  }

  /** Reverses the order along each of dims. */
  flip(dims: readonly number[]): Tensor {
    const op = 'flip';
    const h = this._raw(op);
    checkIntArray(dims, op, 'dims');
    return this._e.wrap(this._e.raw.tFlip(h, dims));
  }

  /** `length` elements of dim from `start` (torch.narrow). @throws `Index` if out of range. */
  narrow(dim: Dim, start: number, length: number): Tensor {
    const op = 'narrow';
    const h = this._raw(op);
    const s = this._dims();
    const d = normDim(dim, s.length, op);
    checkInt(start, op, 'start');
    checkInt(length, op, 'length');
    if (start < 0 || length < 0 || start > s[d] || length > s[d] - start) {
      throw fail('Index', `${op}: start ${start} and length ${length} are out of bounds for dim ${dim} of size ${s[d]}`);
    }
    const ranges: [number, number | null, number][] = [];
    for (let i = 0; i < d; i++) ranges.push([0, null, 1]);
    ranges.push([start, start + length, 1]);
    return this._e.wrap(this._e.raw.tSlice(h, ranges));
  }

  /** `chunks` pieces of ceil(n / chunks) along dim (torch.chunk: may be fewer). */
  chunk(chunks: number, dim: Dim = 0): Tensor[] {
    const op = 'chunk';
    this._raw(op);
    checkInt(chunks, op, 'chunks');
    if (chunks < 1) throw fail('Value', `${op}: chunks must be >= 1, got ${chunks}`);
    const s = this._dims();
    const d = normDim(dim, s.length, op);
    const piece = s[d] === 0 ? 0 : Math.ceil(s[d] / chunks);
    if (piece === 0) return [this.clone()];
    return this._split(piece, d, op);
  }

  /** Pieces of splitSize along dim, the last smaller (torch.split). */
  split(splitSize: number, dim: Dim = 0): Tensor[] {
    return this._split(splitSize, dim, 'split');
  }

  /** @internal */
  _split(splitSize: number, dim: Dim, opName: string): Tensor[] {
    this._raw(opName);
    checkInt(splitSize, opName, 'splitSize');
    if (splitSize < 1) throw fail('Value', `${opName}: splitSize must be >= 1, got ${splitSize}`);
    const s = this._dims();
    const d = normDim(dim, s.length, opName);
    const out: Tensor[] = [];
    for (let start = 0; start < s[d]; start += splitSize) {
      out.push(this.narrow(d, start, Math.min(splitSize, s[d] - start)));
    }
    if (out.length === 0) out.push(this.clone());
    return out;
  }

  /** Pieces with the given sizes along dim. @throws `Shape` unless they sum to the size. */
  splitWithSizes(sizes: readonly number[], dim: Dim = 0): Tensor[] {
    const op = 'splitWithSizes';
    this._raw(op);
    checkIntArray(sizes, op, 'sizes');
    const s = this._dims();
    const d = normDim(dim, s.length, op);
    const total = sizes.reduce((a, b) => a + b, 0);
    sizes.forEach((v, i) => {
      if (v < 0) throw fail('Value', `${op}: sizes[${i}] is ${v}, expected >= 0`);
    });
    if (total !== s[d]) throw fail('Shape', `${op}: sizes sum to ${total}, dim ${dim} has size ${s[d]}`);
    const out: Tensor[] = [];
    let start = 0;
    for (const v of sizes) {
      out.push(this.narrow(d, start, v));
      start += v;
    }
    return out;
  }
}
