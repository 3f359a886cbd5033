// The asynchronous forms of kiln.optim whose reads are a promise on the webgpu backend:
// clipGradNormAsync and Optimizer.saveStateAsync's webgpu half (optim.ts calls them; a chunk of
// its own, loaded on the first call, so pages that never use them do not carry it).
import { gatherParams, type Module } from '../module_class.js';
import { camelErrors, type Model } from '../nn.js';
import type { RawOptimizer, RawParamList, RawTensor } from '../raw.js';
import { fail } from '../tensor/checks.js';
import type { Engine } from '../tensor/engine.js';
import { Gradients as GradientsClass, type Gradients } from '../tensor/gradients.js';
import type { Tensor } from '../tensor/tensor.js';
import { paramList } from './accumulator.js';
import { options as options_ } from './common.js';
import { clipNormArgs, swapHandles, type Optimizer } from './optim.js';

/**
 * clipGradNorm with the norm computed and applied on the device, for every backend (on
 * webgpu, where clipGradNorm's synchronous read of the norm is a `State` error): the total
 * norm and the clipped values are computed on the device (C++ kiln::optim::
 * clip_grad_norm_on_device), the norm is read with `await`, and only then do the gradients
 * get their clipped values. So with errorIfNonfinite a NaN/inf norm throws `NonFinite` and
 * changes nothing, as in clipGradNorm. The per-tensor sums are combined in float32 here
 * (in double by clipGradNorm): the norms agree to float32 rounding.
 * Same arguments as clipGradNorm. Resolves to the total norm before clipping.
 * @throws KilnError (the promise rejects) as clipGradNorm; `Disposed` when a gradient (or, with
 *   a Gradients, a parameter) was disposed while the norm was read (nothing changed); `Device`
 *   on a lost GPU; `Index` when a device check reports an earlier op (the read of the norm is
 *   the first read after it).
 */
export async function clipGradNormAsync(e: Engine, grads: unknown, maxNorm: unknown, options?: unknown): Promise<number> {
  const op = 'optim.clipGradNormAsync';
  if (grads instanceof e.bound(GradientsClass)) {
    const c = options_(options, op, ['normType', 'errorIfNonfinite', 'params']);
    if (c.params === undefined) {
      throw fail('Config', `${op}: with a Gradients, say whose gradients to clip: {params: model} (a kiln.Module, or an array of tensors)`);
    }
    const g = e.unwrapGradients(grads as Gradients, op);
    const pairs: [Tensor, Tensor][] = [];
    try {
      for (const [, p] of paramList(e, c.params, op)) {
        const h = e.raw.tGrad(p._raw(op), g);
        if (h !== undefined) pairs.push([p, e.wrap(h)]);
      }
      const { params: _params, ...rest } = c;
      const total = await clipGradNormAsync(e, pairs.map(([, t]) => t), maxNorm, rest);
      // Everything checked before the first replacement (`Disposed` changes nothing).
      const g2 = e.unwrapGradients(grads as Gradients, op);
      const handles = pairs.map(([p, t]) => [p._raw(op), t._raw(op)] as const);
      for (const [p, t] of handles) e.raw.tGradReplace(p, g2, t);
      return total;
    } finally {
      for (const [, t] of pairs) t.dispose();
    }
  }
  const a = clipNormArgs(e, grads, maxNorm, options, op);
  const r = camelErrors(() => e.raw.clipGradNormDevice(a.tensors.map((t) => t._raw(op)), a.maxNorm, a.normType));
  let swapped = false;
  try {
    const norm = e.wrap(r.totalNorm);
    let total: number;
    try {
      total = (await norm.data())[0];
    } finally {
      norm.dispose();
    }
    if (a.errorIfNonfinite && !Number.isFinite(total)) {
      throw fail('NonFinite', `${op}: the total norm of order ${a.normType} of the gradients is ${total} (errorIfNonfinite is set; the gradients are unchanged)`);
    }
    a.tensors.forEach((t) => t._raw(op));  // `Disposed` if one went during the read
    swapHandles(e, a.tensors, r.tensors);
    swapped = true;
    return total;
  } finally {
    if (!swapped) for (const h of r.tensors) h.delete();
  }
}


/** The webgpu engine's optimizerStateParts / optimizerStateBytes (bindings/train_optim.cpp). */
interface StateRaw {
  optimizerStatePartsList(o: RawOptimizer, list: RawParamList): {
    keys: string[]; tensors: RawTensor[]; countKeys: string[]; counts: number[]; meta: Record<string, string>;
  };
  optimizerStateBytes(keys: string[], values: Float32Array[], shapes: number[][], countKeys: string[], counts: number[], meta: Record<string, string>): Uint8Array;
}

/**
 * Optimizer.saveStateAsync on the webgpu engine: the state tensors for `model` as they are at
 * the call (unread), each read with `await data()`, then saveState's encoding of those values
 * with the step count and schedule of the call: the bytes saveState gives on the cpu backend.
 * Every tensor made here is disposed.
 */
export async function saveStateAsync(e: Engine, optimizer: Optimizer, model: Model | Module, op: string): Promise<Uint8Array> {
  const raw = e.raw as unknown as StateRaw;
  const h = optimizer._raw(op);
  const { list } = gatherParams(e, model, op);
  let parts: ReturnType<StateRaw['optimizerStatePartsList']>;
  try {
    parts = camelErrors(() => raw.optimizerStatePartsList(h, list));
  } finally {
    list.release();
    list.delete();
  }
  const tensors = parts.tensors.map((t) => e.wrap(t));
  try {
    const values: Float32Array[] = [];
    for (const t of tensors) values.push((await t.data()) as Float32Array);
    return camelErrors(() => raw.optimizerStateBytes(parts.keys, values, tensors.map((t) => t.shape), parts.countKeys, parts.counts, parts.meta));
  } finally {
    for (const t of tensors) t.dispose();
  }
}
