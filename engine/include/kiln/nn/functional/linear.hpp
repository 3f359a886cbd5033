#pragma once
/// The affine map of a fully connected layer as a function of tensors
/// (torch.nn.functional.linear), for layers written outside the engine.
#include <array>
#include <cstdint>
#include <optional>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::functional {

/// y = x·Wᵀ + b over the last dim.
/// Shapes:    x [..., d_input] (rank D >= 1), weight [d_output, d_input] (PyTorch's layout),
///            bias [d_output] -> [..., d_output]
/// Throws:    ShapeError if x's last dim is not d_input or bias is not [d_output].
/// Semantics: torch.nn.functional.linear.
template <Backend B, std::size_t D>
Tensor<B, D> linear(const Tensor<B, D>& x, const Tensor<B, 2>& weight,
                    const std::optional<Tensor<B, 1>>& bias = std::nullopt) {
  const Shape in = x.shape();
  const auto [d_out, d_in] = weight.dims();
  if (in[D - 1] != d_in) {
    throw ShapeError(str_cat("linear: expected input [..., ", d_in, "] (weight ", weight.shape(),
                             " is [d_output, d_input]), got ", in));
  }
  if (bias && (bias->shape().rank() != 1 || bias->shape()[0] != d_out)) {
    throw ShapeError(str_cat("linear: bias must be [", d_out, "] (d_output), got ", bias->shape()));
  }
  std::int64_t rows = 1;
  for (std::size_t i = 0; i + 1 < D; ++i) rows *= in[i];
  auto y = x.template reshape<2>(std::array<std::int64_t, 2>{rows, d_in})
               .matmul_transposed(weight, false, true);
  if (bias) y = y + bias->template unsqueeze<2>();
  std::array<std::int64_t, D> out{};
  for (std::size_t i = 0; i + 1 < D; ++i) out[i] = in[i];
  out[D - 1] = d_out;
  return y.template reshape<D>(out);
}

}  // namespace kiln::nn::functional
