#pragma once
/// Convolutions on typed tensors (torch.nn.functional.conv1d / conv2d / conv3d /
/// conv_transpose1d / conv_transpose2d / conv_transpose3d, Burn's
/// `burn::tensor::module::conv2d` ...): the functional form the nn layers
/// (kiln/nn/conv1d.hpp, conv2d.hpp, conv3d.hpp, conv_transpose1d.hpp, conv_transpose2d.hpp,
/// conv_transpose3d.hpp) call. Works on every backend; gradients on `Autodiff<B>`.
///
///   auto y = kiln::conv2d(x, w, b, ConvOptions<2>({2, 2}, {1, 1}, {1, 1}, 1));
///   // x [64, 1, 28, 28], w [8, 1, 3, 3], b [8] -> y [64, 8, 14, 14]
#include <optional>
#include <type_traits>
#include <utility>

#include "kiln/backend/backend.hpp"
#include "kiln/backend/conv_options.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln {
namespace detail {
template <Backend B, std::size_t D>
std::optional<typename B::FloatTensor> bias_primitive(const std::optional<Tensor<B, D>>& bias) {
  if (!bias) return std::nullopt;
  return bias->primitive();
}
}  // namespace detail

/// 1-D convolution (cross-correlation, as PyTorch).
///
/// Shapes:    x [batch_size, channels_in, length], weight [channels_out, channels_in / groups,
///            kernel_size], bias [channels_out] -> [batch_size, channels_out, length_out],
///            length_out = floor((length + padding + padding_end - dilation·(kernel_size - 1)
///            - 1) / stride) + 1.
/// Throws:    RankError, DTypeError, ConfigError (stride/dilation/groups < 1, padding < 0),
///            ShapeError (channels_in != weight dim 1 · groups, channels_out not divisible by
///            groups, bias not [channels_out], kernel larger than the padded input),
///            LimitError (a sum or product of the sizes overflows int64 — padding or
///            dilation near 2^63 —, or the output or the im2col buffer of one image and group
///            would pass 2^31 - 1 elements), each naming conv1d, before anything is allocated.
/// Cost:      2·batch·channels_out·length_out·(channels_in / groups)·kernel_size flops
///            (im2col + packed GEMM, the batch split across kiln::num_threads()).
/// Semantics: torch.nn.functional.conv1d with explicit per-side padding.
template <Backend B>
Tensor<B, 3> conv1d(const Tensor<B, 3>& x, const Tensor<B, 3>& weight,
                    const std::optional<Tensor<std::type_identity_t<B>, 1>>& bias = std::nullopt,
                    const ConvOptions<1>& options = {}) {
  return Tensor<B, 3>(B::FloatOps::conv1d(x.primitive(), weight.primitive(),
                                          detail::bias_primitive(bias), options));
}

/// 2-D convolution (cross-correlation, as PyTorch).
///
/// Shapes:    x [batch_size, channels_in, height, width], weight [channels_out,
///            channels_in / groups, kernel_h, kernel_w], bias [channels_out] ->
///            [batch_size, channels_out, height_out, width_out], per spatial dim
///            out = floor((in + padding + padding_end - dilation·(kernel - 1) - 1) / stride) + 1.
/// Throws:    as conv1d, naming conv2d.
/// Cost:      2·batch·channels_out·height_out·width_out·(channels_in / groups)·kernel_h·kernel_w
///            flops (im2col + packed GEMM, the batch split across kiln::num_threads();
///            bit-identical results for any thread count).
/// Semantics: torch.nn.functional.conv2d with explicit per-side padding.
/// Example:
///   auto x = Tensor<Cpu, 4>::ones({1, 1, 3, 3}, device);
///   auto w = Tensor<Cpu, 4>::ones({1, 1, 2, 2}, device);
///   conv2d(x, w);  // [1, 1, 2, 2], every element 4
template <Backend B>
Tensor<B, 4> conv2d(const Tensor<B, 4>& x, const Tensor<B, 4>& weight,
                    const std::optional<Tensor<std::type_identity_t<B>, 1>>& bias = std::nullopt,
                    const ConvOptions<2>& options = {}) {
  return Tensor<B, 4>(B::FloatOps::conv2d(x.primitive(), weight.primitive(),
                                          detail::bias_primitive(bias), options));
}

/// Transposed 2-D convolution (the adjoint of conv2d w.r.t. its input; "deconvolution").
///
/// Shapes:    x [batch_size, channels_in, height, width], weight [channels_in,
///            channels_out / groups, kernel_h, kernel_w] (PyTorch's layout), bias
///            [channels_out] -> [batch_size, channels_out, height_out, width_out], per dim
///            out = (in - 1)·stride - 2·padding + dilation·(kernel - 1) + padding_out + 1.
/// Throws:    RankError, DTypeError; ConfigError for stride/dilation/groups < 1, negative
///            padding, or padding_out not smaller than stride or dilation; ShapeError when
///            channels_in != weight dim 0, channels_in is not divisible by groups, bias is not
///            [channels_out] or the output would be empty; LimitError when a term of the
///            output size overflows int64 or the output or column buffer passes 2^31 - 1
///            elements; each naming conv_transpose2d.
/// Cost:      as conv2d with input and output swapped (GEMM + col2im).
/// Semantics: torch.nn.functional.conv_transpose2d (padding_out is output_padding).
template <Backend B>
Tensor<B, 4> conv_transpose2d(const Tensor<B, 4>& x, const Tensor<B, 4>& weight,
                              const std::optional<Tensor<std::type_identity_t<B>, 1>>& bias = std::nullopt,
                              const ConvTransposeOptions<2>& options = {}) {
  return Tensor<B, 4>(B::FloatOps::conv_transpose2d(x.primitive(), weight.primitive(),
                                                    detail::bias_primitive(bias), options));
}

/// 3-D convolution (cross-correlation, as PyTorch).
///
/// Shapes:    x [batch_size, channels_in, depth, height, width], weight [channels_out,
///            channels_in / groups, kernel_d, kernel_h, kernel_w], bias [channels_out] ->
///            [batch_size, channels_out, depth_out, height_out, width_out], per spatial dim
///            out = floor((in + padding + padding_end - dilation·(kernel - 1) - 1) / stride) + 1.
/// Throws:    as conv1d, naming conv3d.
/// Cost:      2·batch·channels_out·depth_out·height_out·width_out·(channels_in / groups)·
///            kernel_d·kernel_h·kernel_w flops (the 2-D kernels' im2col + packed GEMM with a
///            depth axis; bit-identical results for any thread count).
/// Semantics: torch.nn.functional.conv3d with explicit per-side padding.
template <Backend B>
Tensor<B, 5> conv3d(const Tensor<B, 5>& x, const Tensor<B, 5>& weight,
                    const std::optional<Tensor<std::type_identity_t<B>, 1>>& bias = std::nullopt,
                    const ConvOptions<3>& options = {}) {
  return Tensor<B, 5>(B::FloatOps::conv3d(x.primitive(), weight.primitive(),
                                          detail::bias_primitive(bias), options));
}

/// Transposed 1-D convolution (the adjoint of conv1d w.r.t. its input).
///
/// Shapes:    x [batch_size, channels_in, length], weight [channels_in, channels_out / groups,
///            kernel_size] (PyTorch's layout), bias [channels_out] -> [batch_size,
///            channels_out, length_out], length_out = (length - 1)·stride - 2·padding +
///            dilation·(kernel_size - 1) + padding_out + 1.
/// Throws:    as conv_transpose2d, naming conv_transpose1d.
/// Cost:      as conv_transpose2d over a unit height (which it is).
/// Semantics: torch.nn.functional.conv_transpose1d (padding_out is output_padding).
template <Backend B>
Tensor<B, 3> conv_transpose1d(const Tensor<B, 3>& x, const Tensor<B, 3>& weight,
                              const std::optional<Tensor<std::type_identity_t<B>, 1>>& bias = std::nullopt,
                              const ConvTransposeOptions<1>& options = {}) {
  return Tensor<B, 3>(B::FloatOps::conv_transpose1d(x.primitive(), weight.primitive(),
                                                    detail::bias_primitive(bias), options));
}

/// Transposed 3-D convolution (the adjoint of conv3d w.r.t. its input).
///
/// Shapes:    x [batch_size, channels_in, depth, height, width], weight [channels_in,
///            channels_out / groups, kernel_d, kernel_h, kernel_w] (PyTorch's layout), bias
///            [channels_out] -> [batch_size, channels_out, depth_out, height_out, width_out],
///            per dim out = (in - 1)·stride - 2·padding + dilation·(kernel - 1) + padding_out + 1.
/// Throws:    as conv_transpose2d, naming conv_transpose3d.
/// Cost:      as conv3d with input and output swapped (GEMM + col2im).
/// Semantics: torch.nn.functional.conv_transpose3d (padding_out is output_padding).
template <Backend B>
Tensor<B, 5> conv_transpose3d(const Tensor<B, 5>& x, const Tensor<B, 5>& weight,
                              const std::optional<Tensor<std::type_identity_t<B>, 1>>& bias = std::nullopt,
                              const ConvTransposeOptions<3>& options = {}) {
  return Tensor<B, 5>(B::FloatOps::conv_transpose3d(x.primitive(), weight.primitive(),
                                                    detail::bias_primitive(bias), options));
}

}  // namespace kiln
