#pragma once
/// The affine map of a fully connected layer as a function of tensors
/// (torch.nn.functional.linear), for layers written outside the engine.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::functional {

namespace detail {
/// linear of an input of rank `x.shape().rank()` >= 1, rank-erased (one copy of the code for
/// every rank; the same ops in the same order as written on Tensor<B, D>).
template <Backend B>
kiln::detail::ErasedFloat<B> linear_erased(const kiln::detail::ErasedFloat<B>& x,
                                           const Tensor<B, 2>& weight,
                                           const std::optional<Tensor<B, 1>>& bias) {
  const Shape in = x.shape();
  const std::size_t D = in.rank();
  const auto [d_out, d_in] = weight.dims();
  if (in[D - 1] != d_in) {
    throw_error<ShapeError>("linear: expected input [..., ", d_in, "] (weight ", weight.shape(),
                            " is [d_output, d_input]), got ", in);
  }
  if (bias && (bias->shape().rank() != 1 || bias->shape()[0] != d_out)) {
    throw_error<ShapeError>("linear: bias must be [", d_out, "] (d_output), got ", bias->shape());
  }
  std::int64_t rows = 1;
  for (std::size_t i = 0; i + 1 < D; ++i) rows *= in[i];
  auto y = Tensor<B, 2>(x.reshape(std::array<std::int64_t, 2>{rows, d_in}).primitive())
               .matmul_transposed(weight, false, true);
  if (bias) y = y + bias->template unsqueeze<2>();
  std::vector<std::int64_t> out(D);
  for (std::size_t i = 0; i + 1 < D; ++i) out[i] = in[i];
  out[D - 1] = d_out;
  return kiln::detail::ErasedFloat<B>(y.primitive()).reshape(out);
}
}  // namespace detail

/// y = x·Wᵀ + b over the last dim.
/// Shapes:    x [..., d_input] (rank D >= 1), weight [d_output, d_input] (PyTorch's layout),
///            bias [d_output] -> [..., d_output]
/// Throws:    ShapeError if x's last dim is not d_input or bias is not [d_output].
/// Semantics: torch.nn.functional.linear.
template <Backend B, std::size_t D>
Tensor<B, D> linear(const Tensor<B, D>& x, const Tensor<B, 2>& weight,
                    const std::optional<Tensor<B, 1>>& bias = std::nullopt) {
  return detail::linear_erased<B>(kiln::detail::ErasedFloat<B>(x), weight, bias)
      .template typed<D>();
}

}  // namespace kiln::nn::functional
