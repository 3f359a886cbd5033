#pragma once
/// Embedding (Burn's `nn::Embedding`, PyTorch's nn.Embedding) and its config.
///
///   auto embed = nn::EmbeddingConfig(/*n_embedding=*/1000, /*d_model=*/64).init<Cpu>(device);
///   auto h = embed.forward(tokens);  // Int [batch_size, seq_length] -> [batch_size, seq_length, 64]
///
/// In a Sequential spec ({"type": "embedding", "n_embedding": 1000, "d_model": 64,
/// "padding_idx": 0}) the layer comes first: the activation between a Sequential's layers is
/// a float tensor, so there the indices arrive as floats holding integers (the JS binding
/// converts an int32 input), checked to be integers before the lookup.
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/initializer.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

namespace functional {

/// The rows of `weight` for `values` (row-major indices of [batch, seq]), checked on the host;
/// the padding_idx rows detached (same values, no gradient). `op` names the caller.
/// Shapes: weight [n_embedding, d_model] -> [batch, seq, d_model].
/// Throws: IndexError for an index outside [0, n_embedding) (naming it and its position);
///         LimitError if the output passes 2^31 - 1 elements.
template <Backend B>
Tensor<B, 3> embedding_lookup(const Tensor<B, 2>& weight, const std::vector<std::int32_t>& values,
                              std::int64_t batch, std::int64_t seq,
                              std::optional<std::int64_t> padding_idx, const char* op) {
  const auto [rows, dm] = weight.dims();
  bool has_padding = false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0 || values[i] >= rows) {
      const auto at = static_cast<std::int64_t>(i);
      throw_error<IndexError>(op, ": index ", values[i], " at [", at / seq, ", ", at % seq,
                              "] is out of range [0, ", rows, ") (n_embedding = ", rows, ")");
    }
    if (padding_idx && values[i] == *padding_idx) has_padding = true;
  }
  // Checked before the lookup allocates: [batch, seq, d_model] must fit in one tensor.
  checked::numel(op, std::array<std::int64_t, 3>{batch, seq, dm}, "output shape");
  const auto device = weight.device();
  const auto flat = Tensor<B, 1, Int>::from_data(
      TensorData(Shape{batch * seq}, std::vector<std::int32_t>(values)), device);
  // select's gradient is index_add (Autodiff), so repeated indices accumulate.
  auto out = weight.select(0, flat);
  if constexpr (AutodiffBackend<B>) {
    if (has_padding) {
      // The padding row's lookups take the detached rows: same values, no gradient.
      std::vector<bool> pad(values.size() * static_cast<std::size_t>(dm));
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (values[i] == *padding_idx) {
          for (std::int64_t j = 0; j < dm; ++j) pad[i * static_cast<std::size_t>(dm) + j] = true;
        }
      }
      const auto n = static_cast<std::int64_t>(values.size());
      const auto mask = Tensor<B, 2, Bool>::from_data(TensorData(Shape{n, dm}, pad), device);
      out = out.mask_where(mask, out.detach());
    }
  } else {
    (void)has_padding;  // no gradients on this backend
  }
  return out.template reshape<3>(std::array<std::int64_t, 3>{batch, seq, dm});
}

/// A lookup table (torch.nn.functional.embedding): row i of weight for index i.
/// Shapes:    indices Int [batch_size, seq_length], weight [n_embedding, d_model] ->
///            [batch_size, seq_length, d_model]
/// Throws:    ConfigError if padding_idx is outside [-n_embedding, n_embedding); IndexError
///            for an index outside [0, n_embedding); LimitError as embedding_lookup.
/// Semantics: F.embedding(indices, weight, padding_idx): the padding_idx row (negative
///            counts from the end) gets no gradient; its stored values are returned.
template <Backend B>
Tensor<B, 3> embedding(const Tensor<B, 2, Int>& indices, const Tensor<B, 2>& weight,
                       std::optional<std::int64_t> padding_idx = std::nullopt) {
  const std::int64_t rows = weight.dims()[0];
  if (padding_idx) {
    if (*padding_idx < -rows || *padding_idx >= rows) {
      throw_error<ConfigError>("embedding: padding_idx must be in [", -rows, ", ", rows,
                               ") (the weight has ", rows, " rows), got ", *padding_idx);
    }
    if (*padding_idx < 0) padding_idx = *padding_idx + rows;
  }
  const auto [batch, seq] = indices.dims();
  return embedding_lookup(weight, indices.to_data().template to_vec<std::int32_t>(), batch, seq,
                          padding_idx, "embedding");
}

}  // namespace functional

template <Backend B>
struct Embedding;

/// Configuration of Embedding (Burn's EmbeddingConfig).
struct EmbeddingConfig {
  std::int64_t n_embedding;  ///< rows of the table (PyTorch's num_embeddings)
  std::int64_t d_model;      ///< size of each embedding vector (PyTorch's embedding_dim)
  /// N(0, 1), PyTorch's nn.Embedding initialisation (and Burn's default).
  Initializer initializer = Initializer::normal(0.0, 1.0);
  /// PyTorch's padding_idx: the row whose gradient is always 0 (a padding token), in
  /// [-n_embedding, n_embedding), negative counting from the end; init zeroes that row. The
  /// forward still returns the stored row (torch.nn.functional.embedding).
  std::optional<std::int64_t> padding_idx;

  EmbeddingConfig(std::int64_t n_embedding, std::int64_t d_model)
      : n_embedding(n_embedding), d_model(d_model) {}
  KILN_CONFIG(EmbeddingConfig, (n_embedding, d_model), (initializer, padding_idx))

  /// Throws: ConfigError if n_embedding < 1 or d_model < 1, or padding_idx is outside
  ///         [-n_embedding, n_embedding).
  void check() const {
    if (n_embedding < 1 || d_model < 1) {
      throw_error<ConfigError>(
          "EmbeddingConfig::init: n_embedding and d_model must be >= 1, got "
          "n_embedding = ",
          n_embedding, ", d_model = ", d_model);
    }
    if (padding_idx && (*padding_idx < -n_embedding || *padding_idx >= n_embedding)) {
      throw_error<ConfigError>("EmbeddingConfig::init: padding_idx must be in [", -n_embedding,
                               ", ", n_embedding, ") (n_embedding = ", n_embedding, "), got ",
                               *padding_idx);
    }
  }

  /// Throws: ConfigError as check(); LimitError if the weight [n_embedding, d_model] would
  /// pass 2^31 - 1 elements.
  template <Backend B>
  Embedding<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential: items [seq_length] of indices (floats holding integers) ->
/// [seq_length, d_model]; the model's input items are the index rows.
template <>
struct SequentialRules<EmbeddingConfig> {
  static SequentialItem item_shape(const EmbeddingConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    sequential::need_item_rank(in, 1, at, "[batch_size, seq_length] (indices)");
    const std::int64_t seq = in.dims ? (*in.dims)[0] : -1;
    return SequentialItem{std::vector<std::int64_t>{seq, c.d_model}, std::nullopt};
  }
};
KILN_REGISTER_LAYER(EmbeddingConfig, "embedding");

/// A lookup table: row i of weight for index i (torch.nn.Embedding without max_norm). The
/// weight's gradient is a scatter-add of the output gradient: a row used k times receives
/// the sum of its k upstream rows; unused rows and the padding_idx row get 0.
template <Backend B>
struct Embedding {
  module::Param<Tensor<B, 2>> weight;  ///< [n_embedding, d_model], PyTorch's layout
  /// The row that receives no gradient, in [0, n_embedding) (normalised by init).
  std::optional<std::int64_t> padding_idx;

  KILN_MODULE(Embedding, weight, padding_idx)

  std::int64_t n_embedding() const { return weight.shape()[0]; }
  std::int64_t d_model() const { return weight.shape()[1]; }

  /// Shapes:    indices Int [batch_size, seq_length] -> [batch_size, seq_length, d_model]
  /// Throws:    IndexError naming the first index outside [0, n_embedding) and its
  ///            position (indices are read on the host to check them, before any lookup);
  ///            LimitError if [batch_size, seq_length, d_model] passes 2^31 - 1 elements
  ///            (before the lookup allocates); StateError before init/load.
  /// Semantics: torch.nn.functional.embedding(indices, weight, padding_idx); Burn's
  ///            Embedding::forward.
  Tensor<B, 3> forward(const Tensor<B, 2, Int>& indices) const {
    const auto [batch, seq] = indices.dims();
    return lookup(indices.to_data().template to_vec<std::int32_t>(), batch, seq);
  }

  /// Sequential's form: the indices as floats holding integers (the activation between a
  /// Sequential's layers is float), [batch_size, seq_length] -> [batch_size, seq_length,
  /// d_model]. Throws: ValueError naming the first value that is not an integer and its
  /// position; otherwise as the Int form. No gradient flows to the indices.
  Tensor<B, 3> forward(const Tensor<B, 2>& indices) const {
    const auto [batch, seq] = indices.dims();
    const std::vector<float> values = indices.to_data().template to_vec<float>();
    std::vector<std::int32_t> ints(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float v = values[i];
      if (!(std::floor(v) == v) || std::abs(v) > 2147483647.f) {
        const auto at = static_cast<std::int64_t>(i);
        throw_error<ValueError>("Embedding::forward: expected integer indices, got ", v, " at [",
                                at / seq, ", ", at % seq, "]");
      }
      ints[i] = static_cast<std::int32_t>(v);
    }
    return lookup(ints, batch, seq);
  }

  /// `n_embedding: 1000, d_model: 64`
  void describe_fields(::kiln::StrOut& out) const {
    if (!weight.is_initialized()) {
      out << "weight: <empty>";
      return;
    }
    out << "n_embedding: " << n_embedding() << ", d_model: " << d_model();
    if (padding_idx) out << ", padding_idx: " << *padding_idx;
  }

 private:
  Tensor<B, 3> lookup(const std::vector<std::int32_t>& values, std::int64_t batch,
                      std::int64_t seq) const {
    return functional::embedding_lookup(weight.val(), values, batch, seq, padding_idx,
                                        "Embedding::forward");
  }
};

template <Backend B>
Embedding<B> EmbeddingConfig::init(const Device<B>& device) const {
  check();
  checked::numel("EmbeddingConfig::init", std::array<std::int64_t, 2>{n_embedding, d_model},
                 "weight shape");
  Embedding<B> out;
  auto w = initializer.init<B, 2>(Shape{n_embedding, d_model}, n_embedding, d_model, device);
  if (padding_idx) {
    const std::int64_t row = *padding_idx < 0 ? *padding_idx + n_embedding : *padding_idx;
    out.padding_idx = row;
    // PyTorch's reset_parameters: the padding row starts at 0.
    w = w.slice_assign({{row, row + 1}, {0, d_model}},
                       Tensor<B, 2>::zeros(Shape{1, d_model}, device));
  }
  out.weight = module::Param<Tensor<B, 2>>(w);
  return out;
}

}  // namespace kiln::nn
