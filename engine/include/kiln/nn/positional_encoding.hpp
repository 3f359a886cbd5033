#pragma once
/// Sinusoidal positional encoding (Burn's `nn::PositionalEncoding`; Vaswani et al. 2017,
/// section 3.5, https://arxiv.org/abs/1706.03762): adds
///   pe[pos, 2i]     = sin(pos / max_timescale^(2i / d_model))
///   pe[pos, 2i + 1] = cos(pos / max_timescale^(2i / d_model))
/// to each item of [batch_size, seq_length, d_model].
///
///   auto pe = nn::PositionalEncodingConfig(/*d_model=*/64).init();
///   auto y = pe.forward(x);  // [batch, seq, 64] -> same shape, seq <= max_sequence_size
///
/// No parameters (nothing is recorded): the table is computed on each forward for the
/// sequence length given, in double precision, then rounded to float.
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

struct PositionalEncoding;

/// Configuration of PositionalEncoding (Burn's PositionalEncodingConfig).
struct PositionalEncodingConfig {
  std::int64_t d_model;                   ///< features per position (even)
  std::int64_t max_sequence_size = 5000;  ///< longest sequence the layer accepts
  std::int64_t max_timescale = 10000;     ///< the base of the wavelengths (10000 in the paper)

  explicit PositionalEncodingConfig(std::int64_t d_model) : d_model(d_model) {}
  KILN_CONFIG(PositionalEncodingConfig, (d_model), (max_sequence_size, max_timescale))

  /// Throws: ConfigError if d_model is not a positive even number, max_sequence_size < 1
  ///         or max_timescale < 1 (Burn asserts the same); LimitError if the table
  ///         [max_sequence_size, d_model] could not be a tensor.
  void check() const {
    if (d_model < 2 || d_model % 2 != 0 || max_sequence_size < 1 || max_timescale < 1) {
      throw_error<ConfigError>(
          "PositionalEncodingConfig::init: d_model must be even and >= 2, "
          "max_sequence_size and max_timescale >= 1, got d_model = ",
          d_model, ", max_sequence_size = ", max_sequence_size,
          ", max_timescale = ", max_timescale);
    }
    checked::numel("PositionalEncodingConfig::init",
                   std::array<std::int64_t, 2>{max_sequence_size, d_model}, "table shape");
  }
  /// The layer. Throws: ConfigError as check().
  PositionalEncoding init() const;
};

/// In a Sequential ("positional_encoding"): items [seq_length, d_model], kept.
template <>
struct SequentialRules<PositionalEncodingConfig> {
  static SequentialItem item_shape(const PositionalEncodingConfig& c, const SequentialItem& in,
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
    if (in.dims && (*in.dims)[0] > c.max_sequence_size) {
      throw_error<ConfigError>(at, "max_sequence_size is ", c.max_sequence_size,
                               " but the previous layer outputs ", in.describe());
    }
    return in;
  }
};
KILN_REGISTER_LAYER(PositionalEncodingConfig, "positional_encoding");

/// Adds the sinusoids of the file comment; a plain value (no parameters, like nn::Dropout).
struct PositionalEncoding {
  std::int64_t d_model = 2;
  std::int64_t max_sequence_size = 5000;
  std::int64_t max_timescale = 10000;

  /// The table pe [seq_length, d_model] of the file comment, as floats row-major.
  std::vector<float> table(std::int64_t seq_length) const {
    std::vector<float> pe(static_cast<std::size_t>(seq_length * d_model));
    const double log_timescale = std::log(static_cast<double>(max_timescale));
    for (std::int64_t i = 0; i < d_model; i += 2) {
      const double inv = std::exp(-log_timescale * static_cast<double>(i) /
                                  static_cast<double>(d_model));
      for (std::int64_t pos = 0; pos < seq_length; ++pos) {
        const double angle = static_cast<double>(pos) * inv;
        pe[static_cast<std::size_t>(pos * d_model + i)] = static_cast<float>(std::sin(angle));
        pe[static_cast<std::size_t>(pos * d_model + i + 1)] = static_cast<float>(std::cos(angle));
      }
    }
    return pe;
  }

  /// Shapes: input [batch_size, seq_length, d_model] -> the same shape.
  /// Throws: ShapeError if the last dim is not d_model or seq_length > max_sequence_size.
  template <Backend B>
  Tensor<B, 3> forward(const Tensor<B, 3>& input) const {
    const Shape s = input.shape();
    if (s[2] != d_model || s[1] > max_sequence_size) {
      throw_error<ShapeError>(
          "PositionalEncoding::forward: expected input [batch_size, "
          "seq_length, ",
          d_model, "] with seq_length <= max_sequence_size = ", max_sequence_size, ", got ", s);
    }
    const auto pe = Tensor<B, 3>::from_data(TensorData(Shape{1, s[1], d_model}, table(s[1])),
                                            input.device());
    return input + pe;
  }
  /// Inside a Sequential: forward. Shapes: [batch_size, seq_length, d_model] -> same.
  template <Backend B>
  Tensor<B, 3> sequential_forward(const Tensor<B, 3>& input) const {
    return forward(input);
  }

  friend bool operator==(const PositionalEncoding&, const PositionalEncoding&) = default;
  /// `PositionalEncoding {d_model: 64, max_sequence_size: 5000, max_timescale: 10000}`
  friend void append_to(std::string& kiln_text, const PositionalEncoding& p) {
    ::kiln::StrOut{kiln_text} << "PositionalEncoding {d_model: " << p.d_model
               << ", max_sequence_size: " << p.max_sequence_size
               << ", max_timescale: " << p.max_timescale << "}";
  }
};

inline PositionalEncoding PositionalEncodingConfig::init() const {
  check();
  return PositionalEncoding{d_model, max_sequence_size, max_timescale};
}

}  // namespace kiln::nn
