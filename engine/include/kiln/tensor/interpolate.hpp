#pragma once
/// Resizing of spatial dims (Burn's `burn::tensor::module::interpolate`, PyTorch's
/// torch.nn.functional.interpolate): nearest (3-D [batch_size, channels, length] and 4-D
/// [batch_size, channels, height, width]) and bilinear (4-D), with PyTorch 1.13's CPU rules:
///
///   scale(in, out)  = 1 / scale_factor when scale_factor is given, else in / out (float32);
///                     bilinear with align_corners: (in - 1) / (out - 1) (0 when out = 1)
///   nearest         src = min(floor(dst · scale), in - 1)
///   bilinear        src = align_corners ? dst · scale : max((dst + 0.5) · scale - 0.5, 0),
///                   i0 = floor(src), i1 = min(i0 + 1, in - 1), λ1 = src - i0, λ0 = 1 - λ1,
///                   out = λ0·x[i0] + λ1·x[i1] per dim, width first; a dim with out = in
///                   takes i0 = i1 = dst, λ0 = 1, λ1 = 0 (PyTorch's copy rule)
///
/// These are the rules of PyTorch's general (channels-first) CPU kernel. PyTorch 1.13 runs
/// a [batch, 1, height, width] input (contiguous in both memory formats) through its
/// channels-last kernel instead, whose nearest copies when out = in and reads dst >> 1 when
/// out = 2·in even when scale_factor says otherwise (e.g. in 3, scale_factor 1.3: rows
/// [0, 1, 2] there, [0, 0, 1] with two channels); Kiln gives every channel count the
/// general kernel's answer. PyTorch's nearest backward keeps those two rules for every
/// channel count, so there its gradient is not the derivative of its forward
/// (torch.autograd.gradcheck fails); Kiln's gradient is its forward's.
///
/// Output size: `size`, or floor(in · scale_factor) per dim. PyTorch's recompute_scale_factor
/// and antialias options and the other modes (linear, bicubic, trilinear, area,
/// nearest-exact) are not provided.
///
/// No primitive of its own: the indices and weights of each dim are computed once on the
/// host (engine/src/tensor/interpolate.cpp) and applied with `select` (torch.index_select),
/// a broadcast multiply and an add, so the gradient is the primitives' (index_add of the
/// weighted output gradient, repeated indices accumulating, as PyTorch's backward).
///
///   auto y = interpolate(x, InterpolateOptions().with_scale_factor({2.0, 2.0})
///                                                .with_mode(InterpolateMode::Bilinear));
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kiln/core/shape.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln {

/// How interpolate computes an output element (Burn's InterpolateMode; PyTorch's mode
/// strings "nearest" and "bilinear").
enum class InterpolateMode { Nearest, Bilinear };

/// "nearest" or "bilinear".
std::string_view interpolate_mode_name(InterpolateMode mode) noexcept;
/// "nearest" -> Nearest, "bilinear" -> Bilinear. Throws: ConfigError naming `op` otherwise.
InterpolateMode interpolate_mode_from(std::string_view name, std::string_view op);

/// interpolate's options (torch.nn.functional.interpolate's size, scale_factor, mode,
/// align_corners). Exactly one of size and scale_factor, each with one entry for every
/// spatial dim or a single entry used for all.
struct InterpolateOptions {
  std::vector<std::int64_t> size;   ///< output spatial size, each >= 1 (empty: scale_factor)
  std::vector<double> scale_factor; ///< multiplier of each spatial size, > 0 (empty: size)
  InterpolateMode mode = InterpolateMode::Nearest;
  /// Bilinear only: the corner pixels' centres of input and output coincide (PyTorch's
  /// align_corners=True). Must stay false for nearest (as PyTorch's check).
  bool align_corners = false;

  /// Copies with one field replaced (Burn's builder style).
  InterpolateOptions with_size(std::vector<std::int64_t> v) const {
    auto c = *this;
    c.size = std::move(v);
    return c;
  }
  InterpolateOptions with_scale_factor(std::vector<double> v) const {
    auto c = *this;
    c.scale_factor = std::move(v);
    return c;
  }
  InterpolateOptions with_mode(InterpolateMode v) const {
    auto c = *this;
    c.mode = v;
    return c;
  }
  InterpolateOptions with_align_corners(bool v) const {
    auto c = *this;
    c.align_corners = v;
    return c;
  }
};

/// The source rows of one resized dim: out[j] = lambda0[j]·in[index0[j]] +
/// lambda1[j]·in[index1[j]] (nearest: index0 only).
struct InterpolateAxis {
  std::vector<std::int32_t> index0, index1;
  std::vector<float> lambda0, lambda1;
};

/// The plan of one interpolate call: the output shape and one axis per spatial dim.
struct InterpolatePlan {
  Shape output;
  std::vector<InterpolateAxis> axes;
};

/// Checks an interpolate call on input shape x (rank 3 or 4) and computes its plan.
/// Throws: RankError for a rank other than 3 or 4, or bilinear on a 3-D input;
///         ConfigError if both or neither of size and scale_factor are given, one has the
///         wrong number of entries, a size is < 1, a scale factor is not finite and > 0, or
///         align_corners is set with nearest; ShapeError for an empty spatial dim or an output
///         size that rounds to 0; LimitError if the output passes 2^31 - 1 elements.
///         Messages start with `op`.
InterpolatePlan plan_interpolate(const char* op, const Shape& x, const InterpolateOptions& options);

namespace detail {
/// x resized along `dim` by one axis of a plan.
template <Backend B, std::size_t D>
Tensor<B, D> interpolate_dim(const Tensor<B, D>& x, std::size_t dim, const InterpolateAxis& a,
                             InterpolateMode mode) {
  const auto n = static_cast<std::int64_t>(a.index0.size());
  const auto device = x.device();
  auto ints = [&](const std::vector<std::int32_t>& v) {
    return Tensor<B, 1, Int>::from_data(TensorData(Shape{n}, v), device);
  };
  const auto d = static_cast<std::int64_t>(dim);
  if (mode == InterpolateMode::Nearest) return x.select(d, ints(a.index0));
  // Weights [1, ..., n, ..., 1] broadcast over the other dims.
  std::array<std::int64_t, D> wdims{};
  wdims.fill(1);
  wdims[dim] = n;
  auto weights = [&](const std::vector<float>& v) {
    return Tensor<B, 1>::from_data(TensorData(Shape{n}, v), device).template reshape<D>(wdims);
  };
  return x.select(d, ints(a.index0)) * weights(a.lambda0) +
         x.select(d, ints(a.index1)) * weights(a.lambda1);
}
}  // namespace detail

/// Resizes the height and width (nearest or bilinear).
///
/// Shapes:    input [batch_size, channels, height, width] -> [batch_size, channels, out_h, out_w]
/// Throws:    as plan_interpolate (op "interpolate").
/// Gradient:  each output gradient times its weights added to its source elements.
/// Semantics: torch.nn.functional.interpolate (PyTorch 1.13, CPU; rules in the file
///            comment), Burn's module::interpolate.
template <Backend B>
Tensor<B, 4> interpolate(const Tensor<B, 4>& input, const InterpolateOptions& options) {
  const auto plan = plan_interpolate("interpolate", input.shape(), options);
  // Width first, then height: PyTorch's order of the sums.
  const auto w = detail::interpolate_dim(input, 3, plan.axes[1], options.mode);
  return detail::interpolate_dim(w, 2, plan.axes[0], options.mode);
}

/// Resizes the length (nearest only).
///
/// Shapes:    input [batch_size, channels, length] -> [batch_size, channels, out_length]
/// Throws:    as plan_interpolate (RankError for bilinear).
/// Semantics: torch.nn.functional.interpolate(mode="nearest") on 3-D input.
template <Backend B>
Tensor<B, 3> interpolate(const Tensor<B, 3>& input, const InterpolateOptions& options) {
  const auto plan = plan_interpolate("interpolate", input.shape(), options);
  return detail::interpolate_dim(input, 2, plan.axes[0], options.mode);
}

}  // namespace kiln
