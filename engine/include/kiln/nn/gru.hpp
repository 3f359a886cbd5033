#pragma once
/// Gru (Burn's `nn::Gru`, PyTorch's nn.GRU with batch_first=True), stacked and optionally
/// bidirectional, and its config.
///
///   auto gru = nn::GruConfig(/*d_input=*/8, /*d_hidden=*/16, /*bias=*/true)
///                  .with_num_layers(2).init<Cpu>(device);
///   auto [output, hidden] = gru.forward(x);  // [batch, seq, 8] -> [batch, seq, 16];
///                                            // hidden [2, batch, 16]
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/nn/rnn.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct Gru;

/// Configuration of Gru (Burn's GruConfig; PyTorch's nn.GRU arguments with Burn's names).
/// The reset gate is always applied after the hidden matmul (PyTorch's and cuDNN's form,
/// Burn's `reset_after = true`).
struct GruConfig {
  std::int64_t d_input;         ///< features per step of the input (PyTorch's input_size)
  std::int64_t d_hidden;        ///< size of the hidden state (hidden_size)
  bool bias;                    ///< learn bias_ih and bias_hh per layer and direction
  std::int64_t num_layers = 1;  ///< stacked layers; layer l > 0 reads layer l-1's output
  bool bidirectional = false;   ///< a second, reverse-time direction per layer (D = 2)
  /// Dropout probability on each layer's output except the last's, while training (an
  /// autodiff backend), as PyTorch's `dropout`.
  double dropout = 0.0;

  /// Burn's `GruConfig::new(d_input, d_hidden, bias)`.
  GruConfig(std::int64_t d_input, std::int64_t d_hidden, bool bias)
      : d_input(d_input), d_hidden(d_hidden), bias(bias) {}
  KILN_CONFIG(GruConfig, (d_input, d_hidden, bias), (num_layers, bidirectional, dropout))

  /// Throws: config::FieldError if d_input, d_hidden or num_layers < 1 or dropout is outside
  ///         [0, 1]; LimitError if a weight [3·d_hidden, ...] would pass 2^31 - 1 elements.
  void check() const {
    detail::check_rnn_config("GruConfig::init", 3, d_input, d_hidden, num_layers,
                             bidirectional, dropout);
  }

  /// A new layer, every weight and bias U(-k, k) with k = 1/sqrt(d_hidden) (PyTorch's
  /// nn.GRU initialisation). Throws: as check().
  template <Backend B>
  Gru<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential ("gru"): items [seq_length, d_input] -> [seq_length, D·d_hidden] (the
/// output sequence from a zero initial state: Gru::sequential_forward).
template <>
struct SequentialRules<GruConfig> {
  static SequentialItem item_shape(const GruConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return detail::rnn_item_shape(c.d_input, (c.bidirectional ? 2 : 1) * c.d_hidden, in, at);
  }
};
KILN_REGISTER_LAYER(GruConfig, "gru");

/// What Gru::forward returns: the output sequence and the final hidden state.
template <Backend B>
struct GruOutput {
  Tensor<B, 3> output;  ///< the last layer's h at every step [batch_size, seq_length, D·d_hidden]
  Tensor<B, 3> hidden;  ///< h after the last step [num_layers·D, batch_size, d_hidden]
};

/// Gated recurrent unit (Cho et al. 2014), as torch.nn.GRU with batch_first=True. Per step,
/// with gate blocks stacked r|z|n in the weights' rows:
///   r = σ(W_ir x + b_ir + W_hr h + b_hr)      z = σ(W_iz x + b_iz + W_hz h + b_hz)
///   n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))      h' = (1 - z) ⊙ n + z ⊙ h
/// The reset gate multiplies W_hn h + b_hn (PyTorch's and cuDNN's form), not h before the
/// matmul as in the paper (Burn before its #2704; the reference case
/// gru_reset_gate_after_matmul tells them apart). Parameters carry PyTorch's state_dict keys
/// (`weight_ih_l0` [3·d_hidden, d_input], `weight_hh_l0` [3·d_hidden, d_hidden],
/// `bias_ih_l0`, `bias_hh_l0` [3·d_hidden], `..._reverse`, `_l1`...), so a SafeTensors
/// record loads into torch.nn.GRU(batch_first=True) with load_state_dict(strict=True).
template <Backend B>
struct Gru {
  detail::RnnWeights<B> weights;  ///< the keys above (the field name is not part of them)
  double dropout = 0.0;           ///< between layers, while training

  KILN_MODULE(Gru, weights, dropout)

  /// Runs the layers over the sequence (the time loop is in the engine, one call per
  /// sequence: kiln/nn/rnn.hpp says how the input projections are batched).
  ///
  /// Shapes:    input [batch_size, seq_length, d_input], hidden (zeros when absent)
  ///            [num_layers·D, batch_size, d_hidden] -> GruOutput.
  /// Throws:    ShapeError if input's last dim is not d_input, batch_size or seq_length is 0,
  ///            or hidden's shape is not [num_layers·D, batch_size, d_hidden];
  ///            StateError before init/load.
  /// Semantics: torch.nn.GRU(batch_first=True)(input, h_0) -> (output, h_n); Burn's
  ///            Gru::forward(input, Option<state>) with reset_after = true.
  GruOutput<B> forward(const Tensor<B, 3>& input,
                       const std::optional<Tensor<B, 3>>& hidden = std::nullopt) const {
    auto r = detail::rnn_forward<B>("Gru::forward", false, weights, dropout, input, hidden,
                                    std::nullopt);
    return GruOutput<B>{std::move(r.output), std::move(r.hidden)};
  }

  /// Its form inside a Sequential: the output sequence from a zero state.
  /// Shapes: [batch_size, seq_length, d_input] -> [batch_size, seq_length, D·d_hidden].
  /// Throws: RankError for another rank; as forward.
  template <std::size_t D>
  Tensor<B, 3> sequential_forward(Tensor<B, D> input) const {
    if constexpr (D != 3) {
      throw_error<RankError>(
          "Gru::forward: expected input [batch_size, seq_length, d_input] "
          "(rank 3), got ",
          input.shape());
    } else {
      return forward(input).output;
    }
  }

  /// Input features per step. Throws StateError before init/load.
  std::int64_t d_input() const { return weights.cells.at(0).weight_ih.shape()[1]; }
  /// Size of the hidden state. Throws StateError before init/load.
  std::int64_t d_hidden() const { return weights.cells.at(0).weight_hh.shape()[1]; }
  /// Stacked layers.
  std::int64_t num_layers() const {
    return static_cast<std::int64_t>(weights.cells.size()) / weights.num_directions;
  }
  /// Whether each layer has a reverse direction.
  bool bidirectional() const { return weights.num_directions == 2; }

  /// `d_input: 8, d_hidden: 16, bias: true, num_layers: 2, bidirectional: false, dropout: 0`
  void describe_fields(::kiln::StrOut& out) const {
    if (weights.cells.empty() || !weights.cells[0].weight_ih.is_initialized()) {
      out << "weights: <empty>";
      return;
    }
    out << "d_input: " << d_input() << ", d_hidden: " << d_hidden()
        << ", bias: " << (weights.cells[0].bias_ih ? "true" : "false")
        << ", num_layers: " << num_layers()
        << ", bidirectional: " << (bidirectional() ? "true" : "false") << ", dropout: " << dropout;
  }
};

template <Backend B>
Gru<B> GruConfig::init(const Device<B>& device) const {
  check();
  Gru<B> out;
  out.weights = detail::init_rnn_weights<B>(3, d_input, d_hidden, num_layers, bidirectional,
                                            bias, device);
  out.dropout = dropout;
  return out;
}

}  // namespace kiln::nn
