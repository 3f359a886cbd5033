#pragma once
/// The tensor ops of issue 15 that PyTorch users reach for, on the rank-erased primitives
/// of Autodiff<B> (float32, with their gradients) and of B (any dtype, no graph):
/// norm, var/std with a correction, amax/amin, pad, tril/triu, cumsum, linspace and einsum.
/// Each is implemented once (engine/src/tensor/ops_ext.cpp, from the backend's primitive
/// ops; only cumsum's loop is the backend's own) and instantiated for the backends B = Cpu
/// and Wgpu (engine/src/wgpu/ops_ext.cpp; WebAssembly only). `P` below is a backend's
/// primitive, CpuTensor or WgpuTensor. The JS `Tensor` methods (bindings/tensor_ops_ext.cpp)
/// call these functions on either backend and never restate a check.
///
/// Dims: a list of dims to reduce, each in [-rank, rank) (negative counts from the end);
/// an empty list means every dim. Reduced dims are kept with size 1 when `keepdim`, else
/// removed; a whole-tensor reduction without keepdim gives shape [1] (Kiln's rule for
/// whole-tensor reductions, Burn's convention: see README "Scalar results").
///
/// Every function throws kiln::Error subclasses whose message starts with `op` (the
/// caller's name for the op, e.g. the JS method), never half-applies anything, and checks
/// its arguments before any work.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/backend/backend.hpp"
#include "kiln/core/check.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::ops {

/// Autodiff<Cpu>'s float primitive (Cpu buffer + graph node).
using AdTensor = AutodiffTensor<Cpu>;

/// torch.amax / torch.amin: the largest (smallest when `min`) element over `dims`.
/// Gradient: split evenly among the elements equal to the result (PyTorch's amax/amin rule;
/// `max(dim)` routes it to one index instead); a nan result selects the nan elements.
/// Shapes: [d0, ..., dn] -> the reduced dims kept as 1 or removed.
/// Throws: IndexError for a dim out of range or repeated; ValueError reducing a dim of size
/// 0 (no identity, as PyTorch).
template <Backend B>
AutodiffTensor<B> amax(const AutodiffTensor<B>& x, std::span<const std::int64_t> dims,
                       bool keepdim, bool min, const char* op);
/// The same on any numeric primitive P (int32 too; no gradient). Throws DTypeError for bool.
template <class P>
P amax(const P& x, std::span<const std::int64_t> dims, bool keepdim, bool min, const char* op);

/// torch.linalg.vector_norm(x, ord=p, dim, keepdim): (sum |x|^p)^(1/p) over dims; p = inf
/// the largest |x|, -inf the smallest, 0 the count of non-zeros. Gradient: PyTorch's
/// norm_backward (v1.13): 0 where the norm is 0 (the subgradient at the zero vector), for
/// p = ±inf split evenly among the elements attaining it.
/// Throws: ValueError if p is nan; IndexError for a bad dim.
template <Backend B>
AutodiffTensor<B> norm(const AutodiffTensor<B>& x, double p, std::span<const std::int64_t> dims,
                       bool keepdim, const char* op);

/// torch.var / torch.std with `correction`: sum((x - mean)^2) / max(0, n - correction) over
/// `dims` (n = the number of reduced elements); std its square root, whose gradient is 0
/// where std is 0 (PyTorch's std_backward). correction 1 is the unbiased estimator.
/// Throws: ValueError if correction is negative or not finite; IndexError for a bad dim.
template <Backend B>
AutodiffTensor<B> var(const AutodiffTensor<B>& x, std::span<const std::int64_t> dims,
                      double correction, bool keepdim, bool take_sqrt, const char* op);

/// torch.nn.functional.pad: `pads` = [left, right] pairs from the last dim backwards
/// (PyTorch's order: (last_left, last_right, prev_left, prev_right, ...)); a negative pad
/// crops. mode "constant" fills with `value`; "reflect" mirrors without repeating the edge;
/// "replicate" repeats the edge; "circular" wraps around.
/// Shapes: [..., n] -> [..., n + left + right] for each padded dim.
/// Throws: ValueError for an odd-length list, more pairs than dims, an unknown mode, a
/// negative result size, reflect pads >= the dim's size or modes other than constant on an
/// empty dim.
template <Backend B>
AutodiffTensor<B> pad(const AutodiffTensor<B>& x, std::span<const std::int64_t> pads,
                      std::string_view mode, double value, const char* op);
/// The same on any primitive P (int32, bool; no gradient).
template <class P>
P pad(const P& x, std::span<const std::int64_t> pads, std::string_view mode, double value,
      const char* op);

/// torch.tril (upper = false) / torch.triu (upper = true) over the last two dims: keeps the
/// elements on and below (above) the `diagonal`-th diagonal (0 the main one, > 0 above it),
/// zeros the others. Gradient: the same mask. Throws RankError below rank 2.
template <Backend B>
AutodiffTensor<B> triangle(const AutodiffTensor<B>& x, std::int64_t diagonal, bool upper,
                           const char* op);
template <class P>
P triangle(const P& x, std::int64_t diagonal, bool upper, const char* op);

/// torch.cumsum along dim (float32 or int32; int32 sums wrap as i32). Gradient: the
/// reversed cumulative sum of the output's gradient. Each line is summed in order, from
/// its first element (as PyTorch's CPU kernel): Cpu on the host, Wgpu one GPU thread per line.
/// Throws: DTypeError for bool (PyTorch would promote it to int64); IndexError for dim.
template <Backend B>
AutodiffTensor<B> cumsum(const AutodiffTensor<B>& x, std::int64_t dim, const char* op);
template <class P>
P cumsum(const P& x, std::int64_t dim, const char* op);

/// torch.linspace(start, end, steps) in float32, with PyTorch's formula (the first half
/// from start, the second half from end, so both ends are exact).
/// Shapes: -> [steps], on the backend of P (default Cpu; `linspace<WgpuTensor>` uploads
/// the values computed on the host). Throws: ValueError if steps < 0 or start/end not finite.
template <class P = CpuTensor>
P linspace(double start, double end, std::int64_t steps, const char* op);

/// torch.einsum for one or two operands without ellipsis: labels are letters; "->" gives
/// the output (without it: the labels used once, in alphabetical order). Lowered to sums,
/// permute, reshape and one batched matmul, so gradients are those of the primitives.
/// Throws: ValueError for a malformed equation, a label repeated within one operand or
/// in the output, an output label not in the inputs, an ellipsis, more than two operands
/// or a wrong operand count; ShapeError when a label has two sizes or a term's length
/// differs from its operand's rank. B is not deduced from the span: name it for a backend
/// other than Cpu (`einsum<Wgpu>(...)`).
template <Backend B = Cpu>
AutodiffTensor<B> einsum(std::string_view equation,
                         std::span<const AutodiffTensor<std::type_identity_t<B>>> operands,
                         const char* op);

// ---- typed forms: float tensors of Autodiff<B>, rank kept (Burn's `*_dim` convention:
// the reduced dim stays with size 1). Same checks, values and gradients as above.

template <std::size_t D, Backend B = Cpu>
using AdFloat = Tensor<Autodiff<B>, D>;

/// torch.linalg.vector_norm(x, p, dim, keepdim=True). Shapes: [.., n, ..] -> [.., 1, ..].
template <std::size_t D, Backend B>
AdFloat<D, B> norm_dim(const AdFloat<D, B>& x, double p, std::int64_t dim) {
  const std::int64_t dims[] = {dim};
  return AdFloat<D, B>(norm(x.primitive(), p, dims, true, "norm"));
}
/// The p-norm of every element: [..] -> [1].
template <std::size_t D, Backend B>
AdFloat<1, B> norm_all(const AdFloat<D, B>& x, double p) {
  return AdFloat<1, B>(norm(x.primitive(), p, {}, false, "norm"));
}
/// torch.amax / torch.amin along dim, kept; gradient split among ties.
template <std::size_t D, Backend B>
AdFloat<D, B> amax_dim(const AdFloat<D, B>& x, std::int64_t dim) {
  const std::int64_t dims[] = {dim};
  return AdFloat<D, B>(amax(x.primitive(), dims, true, false, "amax"));
}
template <std::size_t D, Backend B>
AdFloat<D, B> amin_dim(const AdFloat<D, B>& x, std::int64_t dim) {
  const std::int64_t dims[] = {dim};
  return AdFloat<D, B>(amax(x.primitive(), dims, true, true, "amin"));
}
/// torch.var(x, dim, correction, keepdim=True).
template <std::size_t D, Backend B>
AdFloat<D, B> var_dim(const AdFloat<D, B>& x, std::int64_t dim, double correction = 1.0) {
  const std::int64_t dims[] = {dim};
  return AdFloat<D, B>(var(x.primitive(), dims, correction, true, false, "var"));
}
/// torch.std(x, dim, correction, keepdim=True); gradient 0 where the result is 0.
template <std::size_t D, Backend B>
AdFloat<D, B> std_dim(const AdFloat<D, B>& x, std::int64_t dim, double correction = 1.0) {
  const std::int64_t dims[] = {dim};
  return AdFloat<D, B>(var(x.primitive(), dims, correction, true, true, "std"));
}
/// torch.nn.functional.pad (pads last dim first; negative crops).
template <std::size_t D, Backend B>
AdFloat<D, B> pad(const AdFloat<D, B>& x, std::span<const std::int64_t> pads,
               std::string_view mode = "constant", double value = 0.0) {
  return AdFloat<D, B>(pad(x.primitive(), pads, mode, value, "pad"));
}
/// torch.tril / torch.triu.
template <std::size_t D, Backend B>
AdFloat<D, B> tril(const AdFloat<D, B>& x, std::int64_t diagonal = 0) {
  return AdFloat<D, B>(triangle(x.primitive(), diagonal, false, "tril"));
}
template <std::size_t D, Backend B>
AdFloat<D, B> triu(const AdFloat<D, B>& x, std::int64_t diagonal = 0) {
  return AdFloat<D, B>(triangle(x.primitive(), diagonal, true, "triu"));
}
/// torch.cumsum along dim.
template <std::size_t D, Backend B>
AdFloat<D, B> cumsum(const AdFloat<D, B>& x, std::int64_t dim) {
  return AdFloat<D, B>(cumsum(x.primitive(), dim, "cumsum"));
}
/// torch.einsum of two operands with an output of rank R.
/// Throws: as einsum above; RankError if the output's rank is not R.
template <std::size_t R, std::size_t A, std::size_t C, Backend B>
AdFloat<R, B> einsum(std::string_view equation, const AdFloat<A, B>& a, const AdFloat<C, B>& b) {
  const AutodiffTensor<B> operands[] = {a.primitive(), b.primitive()};
  AutodiffTensor<B> out = einsum<B>(equation, operands, "einsum");
  check::rank("einsum", R, Autodiff<B>::FloatOps::shape(out));
  return AdFloat<R, B>(std::move(out));
}

}  // namespace kiln::ops
