// kiln.io.loadPytorch: PyTorch checkpoints (torch.save's zip format) read by the engine's
// reader (kiln/record/pytorch.hpp, bindings/record_pytorch.cpp) into named tensors, which
// module.loadStateDict(dict) loads into a kiln.Module or Sequential.
import { describe, fail } from './tensor/checks.js';
import type { Engine } from './tensor/engine.js';
import type { Tensor } from './tensor/tensor.js';

/** Options of kiln.io.loadPytorch. */
export interface LoadPytorchOptions {
  /**
   * Keep only the dict under this key of the checkpoint's root dict, e.g. 'model' for
   * `torch.save({"model": model.state_dict(), "epoch": 3}, path)` (Burn's
   * `with_top_level_key`). Without it, nested dicts flatten to dotted names
   * ("model.fc1.weight") and values that are not tensors are skipped.
   */
  topLevelKey?: string;
}

/**
 * The tensors of a PyTorch checkpoint's bytes (`torch.save(model.state_dict(), path)`,
 * PyTorch >= 1.6), by state_dict key, in key order: float32/float16/bfloat16/float64 ->
 * float32 (float64 rounded), int64 (range-checked)/int32/int16/int8/uint8 -> int32, bool ->
 * bool; views (transposed, sliced, shared storages) come out contiguous. The pickle inside
 * is interpreted by an allow-list, never executed. The caller owns (disposes) the tensors;
 * nothing is returned unless the whole file reads. Load them with
 * `model.loadStateDict(kiln.io.loadPytorch(bytes))`.
 * @throws KilnError `Format` naming the problem (`read_pytorch: bytes: ...`): not a zip (a
 *   legacy checkpoint: re-save with PyTorch >= 1.6), a deflated entry, a corrupt zip
 *   directory, a pickle opcode or global outside the allow-list (named, e.g.
 *   "os.system"), a view past its storage, a missing top-level key...;
 *   `Limit` past the reader's limits (kiln/record/pytorch.hpp, PytorchLimits);
 *   `Value` naming the tensor for an int64 value outside int32;
 *   `Type` unless bytes is a Uint8Array or ArrayBuffer, or for a bad option.
 */
export function loadPytorch(e: Engine, bytes: unknown, options?: unknown): Record<string, Tensor> {
  const op = 'io.loadPytorch';
  let data: Uint8Array;
  if (bytes instanceof Uint8Array) data = bytes;
  else if (bytes instanceof ArrayBuffer) data = new Uint8Array(bytes);
  else throw fail('Type', `${op}: bytes must be a Uint8Array or an ArrayBuffer, got ${describe(bytes)}`);
  let key: string | null = null;
  if (options !== undefined) {
    if (options === null || typeof options !== 'object') {
      throw fail('Type', `${op}: options must be an object, got ${describe(options)}`);
    }
    for (const [k, v] of Object.entries(options)) {
      if (k !== 'topLevelKey') throw fail('Type', `${op}: unknown option "${k}" (options: topLevelKey)`);
      if (v === undefined) continue;
      if (typeof v !== 'string') throw fail('Type', `${op}: topLevelKey must be a string, got ${describe(v)}`);
      key = v;
    }
  }
  const entries = e.raw.pytorchDecode(data, key);
  const tensors = e.wrapAll(entries.map((x) => x.tensor));
  const out: Record<string, Tensor> = {};
  entries.forEach((x, i) =>
    Object.defineProperty(out, x.name, { value: tensors[i], enumerable: true, writable: true, configurable: true }));
  return out;
}
