#pragma once
/// Embedding (Burn's `nn::Embedding`, PyTorch's nn.Embedding) and its config.
///
///   auto embed = nn::EmbeddingConfig(/*n_embedding=*/1000, /*d_model=*/64).init<Cpu>(device);
///   auto h = embed.forward(tokens);  // Int [batch_size, seq_length] -> [batch_size, seq_length, 64]
#include <array>
#include <cstdint>
#include <ostream>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/initializer.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct Embedding;

/// Configuration of Embedding (Burn's EmbeddingConfig).
struct EmbeddingConfig {
  std::int64_t n_embedding;  ///< rows of the table (PyTorch's num_embeddings)
  std::int64_t d_model;      ///< size of each embedding vector (PyTorch's embedding_dim)
  /// N(0, 1), PyTorch's nn.Embedding initialisation (and Burn's default).
  Initializer initializer = Initializer::normal(0.0, 1.0);

  EmbeddingConfig(std::int64_t n_embedding, std::int64_t d_model)
      : n_embedding(n_embedding), d_model(d_model) {}
  KILN_CONFIG(EmbeddingConfig, (n_embedding, d_model), (initializer))

  /// Throws: ConfigError if n_embedding < 1 or d_model < 1; LimitError if the weight
  /// [n_embedding, d_model] would pass 2^31 - 1 elements.
  template <Backend B>
  Embedding<B> init(const Device<B>& device = {}) const;
};

/// A lookup table: row i of weight for index i (torch.nn.Embedding without padding_idx or
/// max_norm). The weight's gradient is a scatter-add of the output gradient: a row used k
/// times receives the sum of its k upstream rows; unused rows get 0.
template <Backend B>
struct Embedding {
  module::Param<Tensor<B, 2>> weight;  ///< [n_embedding, d_model], PyTorch's layout

  KILN_MODULE(Embedding, weight)

  std::int64_t n_embedding() const { return weight.shape()[0]; }
  std::int64_t d_model() const { return weight.shape()[1]; }

  /// Shapes:    indices Int [batch_size, seq_length] -> [batch_size, seq_length, d_model]
  /// Throws:    IndexError naming the first index outside [0, n_embedding) and its
  ///            position (indices are read on the host to check them, before any lookup);
  ///            LimitError if [batch_size, seq_length, d_model] passes 2^31 - 1 elements
  ///            (before the lookup allocates); StateError before init/load.
  /// Semantics: torch.nn.functional.embedding; Burn's Embedding::forward.
  Tensor<B, 3> forward(const Tensor<B, 2, Int>& indices) const {
    const auto [batch, seq] = indices.dims();
    const std::int64_t rows = n_embedding();
    const std::vector<std::int32_t> values = indices.to_data().template to_vec<std::int32_t>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] < 0 || values[i] >= rows) {
        const auto at = static_cast<std::int64_t>(i);
        throw IndexError(str_cat("Embedding::forward: index ", values[i], " at [", at / seq,
                                 ", ", at % seq, "] is out of range [0, ", rows,
                                 ") (n_embedding = ", rows, ")"));
      }
    }
    // Checked before the lookup allocates: [batch, seq, d_model] must fit in one tensor.
    checked::numel("Embedding::forward", std::array<std::int64_t, 3>{batch, seq, d_model()},
                   "output shape");
    const auto flat = indices.template reshape<1>(std::array<std::int64_t, 1>{batch * seq});
    // select's gradient is index_add (Autodiff), so repeated indices accumulate.
    return weight.val().select(0, flat).template reshape<3>(
        std::array<std::int64_t, 3>{batch, seq, d_model()});
  }

  /// `n_embedding: 1000, d_model: 64`
  void describe_fields(std::ostream& out) const {
    if (!weight.is_initialized()) {
      out << "weight: <empty>";
      return;
    }
    out << "n_embedding: " << n_embedding() << ", d_model: " << d_model();
  }
};

template <Backend B>
Embedding<B> EmbeddingConfig::init(const Device<B>& device) const {
  if (n_embedding < 1 || d_model < 1) {
    throw ConfigError(str_cat("EmbeddingConfig::init: n_embedding and d_model must be >= 1, got "
                              "n_embedding = ", n_embedding, ", d_model = ", d_model));
  }
  checked::numel("EmbeddingConfig::init", std::array<std::int64_t, 2>{n_embedding, d_model},
                 "weight shape");
  Embedding<B> out;
  out.weight = module::Param<Tensor<B, 2>>(
      initializer.init<B, 2>(Shape{n_embedding, d_model}, n_embedding, d_model, device));
  return out;
}

}  // namespace kiln::nn
