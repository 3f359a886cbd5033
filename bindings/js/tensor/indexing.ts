// Indexing methods: slice, sliceAssign, select, selectAssign, gather, scatter, oneHot.
import { checkInt, describe, fail } from './checks.js';
import { TensorShape, type Dim } from './shape.js';
import type { Tensor } from './tensor.js';

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

/** Normalises slice ranges to [start, end | null, step] triples. */
function sliceRanges(ranges: unknown, op: string): [number, number | null, number][] {
  if (!Array.isArray(ranges)) {
    throw fail('Type', `${op}: ranges must be an array such as [[0, 2], [1, 3]], got ${describe(ranges)}`);
  }
  // Array.from, not ranges.map: a user array's Symbol.species could make the result a Proxy.
  return Array.from(ranges as unknown[], (r: unknown, i: number): [number, number | null, number] => {
    if (r === null || r === undefined) return [0, null, 1];
    if (typeof r === 'number') {
      checkInt(r, op, `ranges[${i}]`);
      return r === -1 ? [-1, null, 1] : [r, r + 1, 1];
    }
    if (!Array.isArray(r) || r.length > 3) {
      throw fail('Type', `${op}: ranges[${i}] must be [start, end], [start, end, step], an index, or null, got ${describe(r)}`);
    }
    const start = r[0] === undefined || r[0] === null ? 0 : checkInt(r[0], op, `ranges[${i}][0] (start)`);
    const end = r[1] === undefined || r[1] === null ? null : checkInt(r[1], op, `ranges[${i}][1] (end)`);
    const step = r[2] === undefined || r[2] === null ? 1 : checkInt(r[2], op, `ranges[${i}][2] (step)`);
    return [start, end, step];
  });
}

export class TensorIndexing extends TensorShape {
  /**
   * Sub-tensor by ranges, one per leading dim (Burn's slice): `t.slice([[0, 2], [1, 3]])`,
   * `t.slice([null, [-2]])` (last two of dim 1), `t.slice([[1, 8, 3]])` (step 3).
   * @throws `Index` if a range lies outside its dim (Burn's rule; PyTorch would clamp);
   *   `Rank` for more ranges than dims; `Value` for step 0.
   */
  slice(ranges: readonly SliceRange[]): Tensor {
    const op = 'slice';
    const h = this._raw(op);
    return this._e.wrap(this._e.raw.tSlice(h, sliceRanges(ranges, op)));
  }

  /** A copy with the slice replaced by `values` (whose shape must equal the slice's). */
  sliceAssign(ranges: readonly SliceRange[], values: Tensor): Tensor {
    const op = 'sliceAssign';
    const h = this._raw(op);
    const r = sliceRanges(ranges, op);
    return this._e.wrap(this._e.raw.tSliceAssign(h, r, this._e.unwrap(values, op, 'values')));
  }

  /** Entries along dim at `indices` (int32 rank 1, negative allowed; torch.index_select): dim becomes indices' length. @throws `Index` out of range. */
  select(dim: Dim, indices: Tensor | readonly number[] | Int32Array): Tensor {
    const op = 'select';
    const e = this._e;
    const h = this._raw(op);
    checkInt(dim, op, 'dim');
    const idx = e.indexArg(indices, op, 'indices');
    try {
      return e.wrap(e.raw.tSelect(h, dim, idx.handle));
    } finally {
      if (idx.temp) idx.temp.delete();
    }
  }

  /** this[..., indices[i], ...] += values[..., i, ...] along dim (torch.index_add; repeated indices accumulate). */
  selectAssign(dim: Dim, indices: Tensor | readonly number[] | Int32Array, values: Tensor): Tensor {
    const op = 'selectAssign';
    const e = this._e;
    const h = this._raw(op);
    checkInt(dim, op, 'dim');
    const v = e.unwrap(values, op, 'values');
    const idx = e.indexArg(indices, op, 'indices');
    try {
      return e.wrap(e.raw.tSelectAssign(h, dim, idx.handle, v));
    } finally {
      if (idx.temp) idx.temp.delete();
    }
  }

  /** out[i][j] = this[indices[i][j]][j] for dim 0 (torch.gather); indices int32, same rank. Shape: indices'. */
  gather(dim: Dim, indices: Tensor): Tensor {
    const op = 'gather';
    const h = this._raw(op);
    checkInt(dim, op, 'dim');
    return this._e.wrap(this._e.raw.tGather(h, dim, this._e.unwrap(indices, op, 'indices')));
  }

  /** this[indices[i][j]][j] += values[i][j] for dim 0 (torch.scatter_add; Burn's scatter). */
  scatter(dim: Dim, indices: Tensor, values: Tensor): Tensor {
    const op = 'scatter';
    const e = this._e;
    const h = this._raw(op);
    checkInt(dim, op, 'dim');
    return e.wrap(e.raw.tScatter(h, dim, e.unwrap(indices, op, 'indices'), e.unwrap(values, op, 'values')));
  }

  /** One-hot along a new last dim: [n] -> [n, numClasses], same dtype. @throws `Index` for a value outside [0, numClasses). */
  oneHot(numClasses: number): Tensor {
    const op = 'oneHot';
    const h = this._raw(op);
    checkInt(numClasses, op, 'numClasses');
    return this._e.wrap(this._e.raw.tOneHot(h, numClasses));
  }
}
