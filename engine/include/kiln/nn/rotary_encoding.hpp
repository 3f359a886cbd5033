#pragma once
/// Rotary positional encoding (Burn's `nn::RotaryEncoding`; Su et al. 2021, RoFormer,
/// https://arxiv.org/abs/2104.09864, eq. 34): each pair of features (x[2i], x[2i+1]) at
/// position pos is rotated by the angle pos·θ_i, θ_i = theta^(-2i / d_model):
///   y[2i]     = x[2i]·cos(pos·θ_i) - x[2i+1]·sin(pos·θ_i)
///   y[2i + 1] = x[2i]·sin(pos·θ_i) + x[2i+1]·cos(pos·θ_i)
/// The pairs are interleaved (adjacent features), as Burn and the paper; some libraries
/// (GPT-NeoX, Llama's Hugging Face port) pair x[i] with x[i + d_model/2] instead, which is a
/// permutation of the features.
///
///   auto rope = nn::RotaryEncodingConfig(/*max_sequence_length=*/512, /*d_model=*/64).init();
///   auto q2 = rope.forward(q);  // [..., seq_length, 64] -> same shape
///
/// No parameters (nothing is recorded).
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

struct RotaryEncoding;

/// Configuration of RotaryEncoding (Burn's RotaryEncodingConfig).
struct RotaryEncodingConfig {
  std::int64_t max_sequence_length;  ///< positions 0 .. max_sequence_length - 1 (plus start)
  std::int64_t d_model;              ///< features rotated in pairs (even)
  double theta = 10000.0;            ///< the base of the frequencies

  RotaryEncodingConfig(std::int64_t max_sequence_length, std::int64_t d_model)
      : max_sequence_length(max_sequence_length), d_model(d_model) {}
  KILN_CONFIG(RotaryEncodingConfig, (max_sequence_length, d_model), (theta))

  /// Throws: ConfigError if d_model is not a positive even number, max_sequence_length < 1
  ///         or theta is not finite and > 0.
  void check() const {
    if (d_model < 2 || d_model % 2 != 0 || max_sequence_length < 1 ||
        !(theta > 0.0 && std::isfinite(theta))) {
      throw_error<ConfigError>(
          "RotaryEncodingConfig::init: d_model must be even and >= 2, "
          "max_sequence_length >= 1 and theta finite and > 0, got "
          "max_sequence_length = ",
          max_sequence_length, ", d_model = ", d_model, ", theta = ", theta);
    }
    checked::numel("RotaryEncodingConfig::init",
                   std::array<std::int64_t, 2>{max_sequence_length, d_model}, "table shape");
  }
  /// The layer. Throws: ConfigError as check().
  RotaryEncoding init() const;
};

/// In a Sequential ("rotary_encoding"): items [seq_length, d_model], kept.
template <>
struct SequentialRules<RotaryEncodingConfig> {
  static SequentialItem item_shape(const RotaryEncodingConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    if (in.dims && in.dims->size() != 2) {
      throw_error<ConfigError>(at,
                               "expects input [batch_size, seq_length, d_model] but the "
                               "previous layer outputs ",
                               in.describe());
    }
    if (const auto last = in.last_dim(); last && *last != c.d_model) {
      throw_error<ConfigError>(at, "d_model is ", c.d_model, " but the previous layer outputs ",
                               in.describe());
    }
    if (in.dims && (*in.dims)[0] > c.max_sequence_length) {
      throw_error<ConfigError>(at, "max_sequence_length is ", c.max_sequence_length,
                               " but the previous layer outputs ", in.describe());
    }
    return in;
  }
};
KILN_REGISTER_LAYER(RotaryEncodingConfig, "rotary_encoding");

/// Rotates feature pairs by position (see the file comment); a plain value.
struct RotaryEncoding {
  std::int64_t max_sequence_length = 1;
  std::int64_t d_model = 2;
  double theta = 10000.0;

  /// Positions start .. start + seq_length - 1 (Burn's apply with a start, for decoding
  /// with a cache).
  /// Shapes: input [..., seq_length, d_model] (rank D >= 2) -> the same shape.
  /// Throws: ShapeError if the last dim is not d_model or start + seq_length >
  ///         max_sequence_length; ValueError if start < 0.
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input, std::int64_t start = 0) const {
    static_assert(D >= 2, "RotaryEncoding::forward: input rank must be >= 2");
    const Shape s = input.shape();
    const std::int64_t seq = s[D - 2];
    if (start < 0) {
      throw_error<ValueError>("RotaryEncoding::forward: start must be >= 0, got ", start);
    }
    if (s[D - 1] != d_model || seq > max_sequence_length - start) {
      throw_error<ShapeError>("RotaryEncoding::forward: expected input [..., seq_length, ", d_model,
                              "] with start + seq_length <= max_sequence_length = ",
                              max_sequence_length, ", got ", s, " (start ", start, ")");
    }
    const std::int64_t half = d_model / 2;
    std::vector<float> cos_t(static_cast<std::size_t>(seq * half));
    std::vector<float> sin_t(cos_t.size());
    for (std::int64_t i = 0; i < half; ++i) {
      const double freq = std::pow(theta, -2.0 * static_cast<double>(i) /
                                              static_cast<double>(d_model));
      for (std::int64_t p = 0; p < seq; ++p) {
        const double angle = static_cast<double>(p + start) * freq;
        cos_t[static_cast<std::size_t>(p * half + i)] = static_cast<float>(std::cos(angle));
        sin_t[static_cast<std::size_t>(p * half + i)] = static_cast<float>(std::sin(angle));
      }
    }
    const std::int64_t rest = seq == 0 ? 0 : s.num_elements() / (seq * d_model);
    const auto x = input.template reshape<4>(std::array<std::int64_t, 4>{rest, seq, half, 2});
    const auto c = Tensor<B, 4>::from_data(TensorData(Shape{1, seq, half, 1}, std::move(cos_t)),
                                           input.device());
    const auto sn = Tensor<B, 4>::from_data(TensorData(Shape{1, seq, half, 1}, std::move(sin_t)),
                                            input.device());
    const auto even = x.narrow(3, 0, 1);
    const auto odd = x.narrow(3, 1, 1);
    auto y = Tensor<B, 4>::cat({even * c - odd * sn, even * sn + odd * c}, 3);
    std::array<std::int64_t, D> dims{};
    for (std::size_t i = 0; i < D; ++i) dims[i] = s[i];
    return y.template reshape<D>(dims);
  }
  /// Inside a Sequential: forward from position 0.
  /// Shapes: [batch_size, seq_length, d_model] -> same.
  /// Throws: RankError for an activation of another rank.
  template <Backend B, std::size_t D>
  Tensor<B, D> sequential_forward(const Tensor<B, D>& input) const {
    if constexpr (D != 3) {
      throw_error<RankError>(
          "RotaryEncoding: expected input [batch_size, seq_length, d_model] "
          "(rank 3), got ",
          input.shape(), " (rank ", D, ")");
    } else {
      return forward(input);
    }
  }

  friend bool operator==(const RotaryEncoding&, const RotaryEncoding&) = default;
  /// `RotaryEncoding {max_sequence_length: 512, d_model: 64, theta: 10000}`
  friend void append_to(std::string& kiln_text, const RotaryEncoding& r) {
    ::kiln::StrOut{kiln_text} << "RotaryEncoding {max_sequence_length: " << r.max_sequence_length
               << ", d_model: " << r.d_model << ", theta: " << r.theta << "}";
  }
};

inline RotaryEncoding RotaryEncodingConfig::init() const {
  check();
  return RotaryEncoding{max_sequence_length, d_model, theta};
}

}  // namespace kiln::nn
