#pragma once
/// The activations that compose primitives (PyTorch semantics): elu, celu, glu, prelu, and
/// the op-table activations selu, mish, hard_sigmoid, hard_swish as functions. Each is
/// written once over a backend's rank-erased float ops (`kiln::activation::prim`), which
/// both the typed functions below and the JS bindings (bindings/activation_more.cpp) call;
/// Autodiff differentiates the primitives, so none needs a backward rule of its own.
///
///   auto y = activation::elu(x, 1.0);     // [...] -> [...]
///   auto h = activation::glu(x, -1);      // [..., 2n] -> [..., n]
///   auto z = activation::prelu(x, w);     // [batch_size, C, ...] with w [C] or [1]
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "kiln/core/check.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/tensor/derived.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::activation {
namespace prim {

/// alpha·(e^(input_scale·x) - 1) where x <= 0, x elsewhere (nan included): PyTorch's elu
/// kernel with scale 1. The exp branch reads min(x, 0), so that a large x neither
/// overflows there nor leaks a 0·inf = nan into the gradient; the gradient is then g for
/// x > 0 (and nan), alpha·input_scale·e^(input_scale·x)·g for x <= 0 (at 0 too), as
/// PyTorch's elu_backward.
template <Backend B>
typename B::FloatTensor elu(typename B::FloatTensor x, double alpha, double input_scale) {
  using O = typename B::FloatOps;
  auto mask = O::compare_scalar(CompareOp::LowerEqual, x, 0.0);
  auto neg = O::clamp(x, std::nullopt, 0.0);
  if (input_scale != 1.0) neg = O::binary_scalar(BinaryOp::Mul, std::move(neg), input_scale, false);
  neg = O::binary_scalar(BinaryOp::Mul, O::unary(UnaryOp::Expm1, std::move(neg)), alpha, false);
  return O::mask_where(std::move(x), mask, neg);
}

/// celu = elu with alpha and input scale 1/alpha (torch.celu).
/// Throws: ValueError if alpha is 0 (`op` names the caller).
template <Backend B>
typename B::FloatTensor celu(const char* op, typename B::FloatTensor x, double alpha) {
  if (alpha == 0.0) throw_error<ValueError>(op, ": alpha must not be 0 (celu divides by it)");
  // PyTorch multiplies by the f32 reciprocal: negiptcoef = 1 / alpha.
  return elu<B>(std::move(x), alpha, static_cast<double>(1.0f / static_cast<float>(alpha)));
}

/// a·sigmoid(b), a and b the first and second halves of dim (torch.nn.functional.glu).
/// Throws: RankError for a rank-0 input; IndexError if dim is out of range; ShapeError if
/// the size of dim is odd (`op` names the caller).
template <Backend B>
typename B::FloatTensor glu(const char* op, const typename B::FloatTensor& x, std::int64_t dim) {
  using O = typename B::FloatOps;
  const Shape s = O::shape(x);
  if (s.rank() == 0) {
    throw_error<RankError>(op, ": expected a tensor of rank >= 1 (glu halves a dim), got shape ",
                           s);
  }
  const std::int64_t d = check::dim(op, dim, s.rank());
  const std::int64_t n = s[static_cast<std::size_t>(d)];
  if (n % 2 != 0) {
    throw_error<ShapeError>(op, ": the halved dim must have an even size, but dim ", dim,
                            " of input ", s, " has size ", n);
  }
  auto a = O::slice(x, derived::narrow_ranges(s, d, 0, n / 2, op));
  auto b = O::slice(x, derived::narrow_ranges(s, d, n / 2, n / 2, op));
  return O::binary(BinaryOp::Mul, std::move(a), O::unary(UnaryOp::Sigmoid, std::move(b)));
}

/// x where x > 0, weight·x elsewhere, weight [num_parameters] over dim 1 (channels) of x, or
/// one weight for every element (torch.nn.functional.prelu). Gradients as PyTorch: x gets g
/// for x > 0 and weight·g otherwise (at 0 too); weight gets the sum of x·g over x <= 0.
/// Throws: RankError unless weight has rank 1; ShapeError unless num_parameters is 1 or
/// the size of dim 1 of x (x of rank >= 2) (`op` names the caller).
template <Backend B>
typename B::FloatTensor prelu(const char* op, typename B::FloatTensor x,
                              const typename B::FloatTensor& weight) {
  using O = typename B::FloatOps;
  const Shape xs = O::shape(x);
  const Shape ws = O::shape(weight);
  if (ws.rank() != 1) {
    throw_error<RankError>(op, ": expected weight [num_parameters], got shape ", ws);
  }
  const std::int64_t channels = xs.rank() >= 2 ? xs[1] : 1;
  if (ws[0] != 1 && ws[0] != channels) {
    throw_error<ShapeError>(op, ": weight has ", ws[0], " parameters but input ", xs,
                            xs.rank() >= 2 ? " has " : " (rank < 2) has ", channels,
                            " channels in dim 1 (expected num_parameters = 1 or ", channels, ")");
  }
  std::vector<std::int64_t> dims(xs.rank(), 1);
  if (xs.rank() >= 2) dims[1] = ws[0];
  auto w = O::reshape(weight, dims);
  auto neg = O::binary(BinaryOp::Mul, O::clamp(x, std::nullopt, 0.0), std::move(w));
  auto pos = O::compare_scalar(CompareOp::Greater, x, 0.0);
  return O::mask_where(std::move(neg), pos, x);
}

}  // namespace prim

/// ELU (Clevert et al. 2015, torch.nn.functional.elu): x for x > 0, alpha·(e^x - 1)
/// otherwise. Shapes: [...] -> [...]. The gradient at 0 is alpha (PyTorch's).
template <Backend B, std::size_t D>
Tensor<B, D> elu(Tensor<B, D> x, double alpha = 1.0) {
  return Tensor<B, D>(prim::elu<B>(std::move(x).into_primitive(), alpha, 1.0));
}

/// CELU (Barron 2017, torch.nn.functional.celu): max(0, x) + min(0, alpha·(e^(x/alpha) - 1)).
/// Shapes: [...] -> [...]. Throws: ValueError if alpha is 0.
template <Backend B, std::size_t D>
Tensor<B, D> celu(Tensor<B, D> x, double alpha = 1.0) {
  return Tensor<B, D>(prim::celu<B>("celu", std::move(x).into_primitive(), alpha));
}

/// SELU (Klambauer et al. 2017, torch.selu): the op-table row `selu`.
template <Backend B, std::size_t D>
Tensor<B, D> selu(Tensor<B, D> x) {
  return Tensor<B, D>(B::FloatOps::unary(UnaryOp::Selu, std::move(x).into_primitive()));
}

/// Mish (Misra 2019, torch.nn.functional.mish): x·tanh(softplus(x)); the op-table row `mish`.
template <Backend B, std::size_t D>
Tensor<B, D> mish(Tensor<B, D> x) {
  return Tensor<B, D>(B::FloatOps::unary(UnaryOp::Mish, std::move(x).into_primitive()));
}

/// clamp(x + 3, 0, 6) / 6 (torch.nn.functional.hardsigmoid); the op-table row `hard_sigmoid`.
template <Backend B, std::size_t D>
Tensor<B, D> hard_sigmoid(Tensor<B, D> x) {
  return Tensor<B, D>(B::FloatOps::unary(UnaryOp::HardSigmoid, std::move(x).into_primitive()));
}

/// x·clamp(x + 3, 0, 6) / 6 (Howard et al. 2019, torch.nn.functional.hardswish); the op-table
/// row `hard_swish`.
template <Backend B, std::size_t D>
Tensor<B, D> hard_swish(Tensor<B, D> x) {
  return Tensor<B, D>(B::FloatOps::unary(UnaryOp::HardSwish, std::move(x).into_primitive()));
}

/// GLU (Dauphin et al. 2016, torch.nn.functional.glu): a·sigmoid(b) where a, b are the
/// halves of dim (default the last). Shapes: [..., 2n, ...] -> [..., n, ...].
/// Throws: IndexError if dim is out of range; ShapeError if its size is odd.
template <Backend B, std::size_t D>
Tensor<B, D> glu(const Tensor<B, D>& x, std::int64_t dim = -1) requires(D >= 1) {
  return Tensor<B, D>(prim::glu<B>("glu", x.primitive(), dim));
}

/// PReLU (He et al. 2015, torch.nn.functional.prelu): x for x > 0, weight·x otherwise,
/// weight [num_parameters] broadcast over dim 1 of x [batch_size, C, ...]
/// (num_parameters = C) or shared (num_parameters = 1).
/// Throws: ShapeError unless num_parameters is 1 or C.
template <Backend B, std::size_t D>
Tensor<B, D> prelu(const Tensor<B, D>& x, const Tensor<B, 1>& weight) {
  return Tensor<B, D>(prim::prelu<B>("prelu", x.primitive(), weight.primitive()));
}

}  // namespace kiln::activation
