#pragma once
/// Upsample (PyTorch's nn.Upsample; Burn's Interpolate2d): resizes the spatial dims of
/// [batch_size, channels, height, width] (nearest or bilinear) or [batch_size, channels,
/// length] (nearest) to a given size or by a scale factor, over kiln/tensor/interpolate.hpp.
///
///   auto up = nn::UpsampleConfig().with_scale_factor(std::vector<double>{2.0})
///                                 .with_mode("bilinear").init();
///   auto y = up.forward(x);  // [batch_size, channels, 7, 9] -> [batch_size, channels, 14, 18]
///
/// No parameters. In a Sequential: {"type": "upsample", "scale_factor": 2, "mode":
/// "bilinear"} or {"type": "upsample", "size": [8, 8]}; a single number for size or
/// scale_factor applies to every spatial dim.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/interpolate.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

struct Upsample;

/// Configuration of Upsample (PyTorch's nn.Upsample arguments; Burn's Interpolate2dConfig
/// calls size output_size). Exactly one of size and scale_factor, each with 1 entry (every
/// spatial dim) or one per spatial dim (2 for 4-D input).
struct UpsampleConfig {
  std::optional<std::vector<std::int64_t>> size;  ///< output spatial size, each >= 1
  std::optional<std::vector<double>> scale_factor; ///< multiplier per spatial dim, > 0
  std::string mode = "nearest";                   ///< "nearest" or "bilinear"
  bool align_corners = false;                     ///< bilinear only (PyTorch's align_corners)

  UpsampleConfig() = default;
  KILN_CONFIG(UpsampleConfig, (), (size, scale_factor, mode, align_corners))

  /// Throws: ConfigError if both or neither of size and scale_factor are given, one has no
  ///         entry or more than 2, a size is < 1, a scale factor is not finite and > 0, mode is
  ///         not "nearest" or "bilinear", or align_corners is set with "nearest".
  void check() const {
    const char* op = "UpsampleConfig::init";
    const InterpolateMode m = interpolate_mode_from(mode, op);
    if (size.has_value() == scale_factor.has_value()) {
      throw_error<ConfigError>(op, ": exactly one of size and scale_factor must be given, got ",
                               size ? "both" : "neither");
    }
    const std::size_t n = size ? size->size() : scale_factor->size();
    if (n < 1 || n > 2) {
      throw_error<ConfigError>(op, ": ", size ? "size" : "scale_factor",
                               " must have 1 or 2 entries, got ", n);
    }
    if (size) {
      for (auto s : *size) {
        if (s < 1) throw_error<ConfigError>(op, ": size must be >= 1, got ", s);
      }
    } else {
      for (auto s : *scale_factor) {
        if (!(std::isfinite(s) && s > 0.0)) {
          throw_error<ConfigError>(op, ": scale_factor must be finite and > 0, got ", s);
        }
      }
    }
    if (align_corners && m == InterpolateMode::Nearest) {
      throw_error<ConfigError>(op, ": align_corners can only be set with mode \"bilinear\" ",
                               "(as PyTorch), got mode \"nearest\"");
    }
  }
  /// Throws: ConfigError as check().
  Upsample init() const;
};

/// Resizes the spatial dims (PyTorch nn.Upsample, Burn nn::interpolate::Interpolate2d).
struct Upsample {
  InterpolateOptions options;

  /// Shapes:    input [batch_size, channels, height, width] -> [batch_size, channels, out_h,
  ///            out_w]; nearest also [batch_size, channels, length] -> [batch_size, channels,
  ///            out_length]. out = size, or floor(in · scale_factor).
  /// Throws:    as kiln::interpolate (RankError for bilinear on 3-D input, ShapeError for an
  ///            output size of 0, ConfigError for a size with 2 entries on 3-D input).
  /// Semantics: kiln::interpolate (PyTorch 1.13's index and weight rules).
  template <Backend B, std::size_t D>
    requires(D == 3 || D == 4)
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    return interpolate(input, options);
  }
  /// `Upsample {scale_factor: [2], mode: bilinear, align_corners: false}`
  friend void append_to(std::string& kiln_text, const Upsample& m) {
    ::kiln::StrOut out(kiln_text);
    out << "Upsample {";
    if (!m.options.size.empty()) {
      out << "size: [";
      for (std::size_t i = 0; i < m.options.size.size(); ++i) {
        out << (i ? ", " : "") << m.options.size[i];
      }
    } else {
      out << "scale_factor: [";
      for (std::size_t i = 0; i < m.options.scale_factor.size(); ++i) {
        out << (i ? ", " : "") << m.options.scale_factor[i];
      }
    }
    out << "], mode: " << interpolate_mode_name(m.options.mode)
               << ", align_corners: " << (m.options.align_corners ? "true" : "false") << "}";
  }
};

inline Upsample UpsampleConfig::init() const {
  check();
  InterpolateOptions o;
  if (size) o.size = *size;
  if (scale_factor) o.scale_factor = *scale_factor;
  o.mode = interpolate_mode_from(mode, "UpsampleConfig::init");
  o.align_corners = align_corners;
  return Upsample{o};
}

/// In a Sequential: items [channels, height, width] (or [channels, length] for nearest); a
/// single number for size or scale_factor becomes a one-entry list.
template <>
struct SequentialRules<UpsampleConfig> {
  static void spec_to_config(config::Value& body, std::string_view) {
    for (const char* f : {"size", "scale_factor"}) {
      config::Value* v = body.find(f);
      if (v && v->is_number()) *v = config::Value::array({*v});
    }
  }
  static SequentialItem item_shape(const UpsampleConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    if (!c.size && !c.scale_factor) return in;  // check() rejects the config
    const bool bilinear = c.mode == "bilinear";
    const std::size_t n = c.size ? c.size->size() : c.scale_factor->size();
    if (in.dims) {
      const std::size_t rank = in.dims->size();
      if (bilinear || n == 2) {
        sequential::need_item_rank(in, 3, at, "[batch_size, channels, height, width]");
      } else if (rank != 2 && rank != 3) {
        sequential::need_item_rank(in, 3, at,
                                   "[batch_size, channels, length] or [batch_size, channels, "
                                   "height, width]");
      }
    }
    if (!in.dims) return in;
    std::vector<std::int64_t> out = *in.dims;
    for (std::size_t i = 1; i < out.size(); ++i) {
      const std::size_t k = n == 1 ? 0 : i - 1;
      if (c.size) {
        out[i] = (*c.size)[k];
      } else if (out[i] >= 0) {
        const double size = std::floor(static_cast<double>(out[i]) * (*c.scale_factor)[k]);
        if (size > 2147483647.0) {
          throw_error<LimitError>(at, "scale_factor ", (*c.scale_factor)[k],
                                  " gives an output size of more than 2^31 - 1 for ",
                                  in.describe());
        }
        out[i] = static_cast<std::int64_t>(size);
        if (out[i] < 1) {
          throw_error<ConfigError>(at, "scale_factor ", (*c.scale_factor)[k],
                                   " gives an output size of 0 for ", in.describe());
        }
      }
    }
    return SequentialItem{out, std::nullopt};
  }
};
KILN_REGISTER_LAYER(UpsampleConfig, "upsample");

}  // namespace kiln::nn
