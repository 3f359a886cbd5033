// The JS Tensor: the class (built by concern, core.ts ... autodiff.ts) plus the methods
// generated from the engine's op table (ops.def -> generated/ops.ts for the types,
// bindings/op_table.cpp -> ops.ts at run time).
import type { GeneratedTensorOps } from '../generated/ops.js';
import { TensorOpsExt } from './ops_ext.js';

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
export class Tensor extends TensorOpsExt {}

// The methods of ops.def's rows (exp, add, equal, sum, sumDim, ...), installed on each
// module instance's Tensor prototype from the engine's op table (ops.ts installOps).
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface Tensor extends GeneratedTensorOps {}
