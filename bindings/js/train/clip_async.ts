// kiln.optim.clipGradNormAsync (optim.ts installs it; a chunk of its own, loaded on the first
// call, so pages that never clip asynchronously do not carry it).
import { camelErrors } from '../nn.js';
import { fail } from '../tensor/checks.js';
import type { Engine } from '../tensor/engine.js';
import { Gradients as GradientsClass, type Gradients } from '../tensor/gradients.js';
import type { Tensor } from '../tensor/tensor.js';
import { paramList } from './accumulator.js';
import { options as options_ } from './common.js';
import { clipNormArgs, swapHandles } from './optim.js';

/**
 * clipGradNorm with the norm computed and applied on the device, for every backend (on
 * webgpu, where clipGradNorm's synchronous read of the norm is a `State` error): the total
 * norm and the clipped values are computed on the device (C++ kiln::optim::
 * clip_grad_norm_on_device), the norm is read with `await`, and only then do the gradients
 * get their clipped values. So with errorIfNonfinite a NaN/inf norm throws `NonFinite` and
 * changes nothing, as in clipGradNorm. The per-tensor sums are combined in float32 here
 * (in double by clipGradNorm): the norms agree to float32 rounding.
 * Same arguments as clipGradNorm. Resolves to the total norm before clipping.
 * @throws KilnError (the promise rejects) as clipGradNorm; `Disposed` when a gradient was
 *   disposed while the norm was read (nothing changed); `Device` on a lost GPU.
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
      const g2 = e.unwrapGradients(grads as Gradients, op);
      for (const [p, t] of pairs) e.raw.tGradReplace(p._raw(op), g2, t._raw(op));
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

