// The host-side plan of interpolate (kiln/tensor/interpolate.hpp): argument checks, output
// size and, per spatial dim, the source indices and weights of PyTorch 1.13's CPU kernels
// (aten/src/ATen/native/UpSample.h: compute_scales_value, area_pixel_compute_scale,
// area_pixel_compute_source_index, nearest_neighbor_compute_source_index; UpSampleKernel.cpp:
// compute_source_index_and_lambda), in float32 as there.
#include "kiln/tensor/interpolate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln {
namespace {

/// compute_scales_value: 1 / scale_factor when given, else in / out (float).
float scale_value(const double* scale_factor, std::int64_t in, std::int64_t out) {
  return scale_factor ? static_cast<float>(1.0 / *scale_factor)
                      : static_cast<float>(in) / static_cast<float>(out);
}

InterpolateAxis nearest_axis(std::int64_t in, std::int64_t out, const double* scale_factor) {
  const float scale = scale_value(scale_factor, in, out);
  InterpolateAxis a;
  a.index0.resize(static_cast<std::size_t>(out));
  for (std::int64_t j = 0; j < out; ++j) {
    const auto src = static_cast<std::int64_t>(std::floor(static_cast<float>(j) * scale));
    a.index0[static_cast<std::size_t>(j)] = static_cast<std::int32_t>(std::min(src, in - 1));
  }
  return a;
}

InterpolateAxis linear_axis(std::int64_t in, std::int64_t out, const double* scale_factor,
                            bool align_corners) {
  const auto n = static_cast<std::size_t>(out);
  InterpolateAxis a;
  a.index0.resize(n);
  a.index1.resize(n);
  a.lambda0.resize(n);
  a.lambda1.resize(n);
  float scale = 0.f;
  if (align_corners) {
    scale = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
  } else {
    scale = scale_value(scale_factor, in, out);
  }
  for (std::int64_t j = 0; j < out; ++j) {
    const auto k = static_cast<std::size_t>(j);
    if (out == in) {  // PyTorch copies (weights 1 and 0 on the same row)
      a.index0[k] = a.index1[k] = static_cast<std::int32_t>(j);
      a.lambda0[k] = 1.f;
      a.lambda1[k] = 0.f;
      continue;
    }
    float src = align_corners ? scale * static_cast<float>(j)
                              : scale * (static_cast<float>(j) + 0.5f) - 0.5f;
    if (!align_corners && src < 0.f) src = 0.f;
    const auto i0 = static_cast<std::int64_t>(src);
    const std::int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    const float l1 = std::min(std::max(src - static_cast<float>(i0), 0.f), 1.f);
    a.index0[k] = static_cast<std::int32_t>(i0);
    a.index1[k] = static_cast<std::int32_t>(i1);
    a.lambda1[k] = l1;
    a.lambda0[k] = 1.f - l1;
  }
  return a;
}

std::string list(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += str_cat(i ? ", " : "", v[i]);
  return s + "]";
}
std::string list(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += str_cat(i ? ", " : "", v[i]);
  return s + "]";
}

}  // namespace

std::string_view interpolate_mode_name(InterpolateMode mode) noexcept {
  return mode == InterpolateMode::Bilinear ? "bilinear" : "nearest";
}

InterpolateMode interpolate_mode_from(std::string_view name, std::string_view op) {
  if (name == "nearest") return InterpolateMode::Nearest;
  if (name == "bilinear") return InterpolateMode::Bilinear;
  throw_error<ConfigError>(op, ": mode must be \"nearest\" or \"bilinear\", got \"", name, "\"");
}

InterpolatePlan plan_interpolate(const char* op, const Shape& x, const InterpolateOptions& o) {
  const std::size_t rank = x.rank();
  if (rank != 3 && rank != 4) {
    throw_error<RankError>(op, ": expected input [batch_size, channels, length] or ",
                           "[batch_size, channels, height, width], got ", x);
  }
  if (o.mode == InterpolateMode::Bilinear && rank != 4) {
    throw_error<RankError>(op, ": mode \"bilinear\" needs input [batch_size, channels, height, ",
                           "width] (rank 4), got ", x, " (rank ", rank, ")");
  }
  if (o.mode == InterpolateMode::Nearest && o.align_corners) {
    throw_error<ConfigError>(op, ": align_corners can only be set with mode \"bilinear\" ",
                             "(as PyTorch), got mode \"nearest\"");
  }
  const std::size_t spatial = rank - 2;
  const bool has_size = !o.size.empty(), has_scale = !o.scale_factor.empty();
  if (has_size == has_scale) {
    throw_error<ConfigError>(
        op, ": exactly one of size and scale_factor must be given, got ",
        has_size ? str_cat("size ", list(o.size), " and scale_factor ", list(o.scale_factor))
                 : std::string("neither"));
  }
  const std::size_t given = has_size ? o.size.size() : o.scale_factor.size();
  if (given != 1 && given != spatial) {
    throw_error<ConfigError>(op, ": ", has_size ? "size" : "scale_factor", " must have 1 or ",
                             spatial, " entries for input ", x, ", got ",
                             has_size ? list(o.size) : list(o.scale_factor));
  }
  for (std::size_t i = 0; i < spatial; ++i) {
    if (x[2 + i] < 1) {
      throw_error<ShapeError>(op, ": the input's spatial dims must be >= 1, got ", x);
    }
  }
  InterpolatePlan plan;
  std::vector<std::int64_t> out_dims{x[0], x[1]};
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::size_t k = given == 1 ? 0 : i;
    const std::int64_t in = x[2 + i];
    std::int64_t out = 0;
    const double* scale = nullptr;
    if (has_size) {
      out = o.size[k];
      if (out < 1) throw_error<ConfigError>(op, ": size must be >= 1, got ", list(o.size));
    } else {
      scale = &o.scale_factor[k];
      if (!(std::isfinite(*scale) && *scale > 0.0)) {
        throw_error<ConfigError>(op, ": scale_factor must be finite and > 0, got ",
                                 list(o.scale_factor));
      }
      const double size = std::floor(static_cast<double>(in) * *scale);  // PyTorch's rule
      if (size > static_cast<double>(checked::max_elements)) {
        throw_error<LimitError>(op, ": scale_factor ", *scale, " gives an output size of ", size,
                                " for an input size of ", in, " (more than 2^31 - 1)");
      }
      out = static_cast<std::int64_t>(size);
      if (out < 1) {
        throw_error<ShapeError>(op, ": scale_factor ", *scale, " gives an output size of 0 ",
                                "for input ", x);
      }
    }
    out_dims.push_back(out);
  }
  checked::numel(op, out_dims, "output shape");
  // Every intermediate (one dim resized, the others not) fits when the output and input do.
  std::vector<std::int64_t> mid(x.dims().begin(), x.dims().end());
  mid[rank - 1] = out_dims[rank - 1];
  checked::numel(op, mid, "the width pass's output");
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::int64_t in = x[2 + i], out = out_dims[2 + i];
    const double* scale = has_size ? nullptr : &o.scale_factor[given == 1 ? 0 : i];
    plan.axes.push_back(o.mode == InterpolateMode::Nearest
                            ? nearest_axis(in, out, scale)
                            : linear_axis(in, out, scale, o.align_corners));
  }
  plan.output = Shape(out_dims);
  return plan;
}

}  // namespace kiln
