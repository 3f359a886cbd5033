#pragma once
/// Lstm (Burn's `nn::Lstm`, PyTorch's nn.LSTM with batch_first=True), stacked and optionally
/// bidirectional, and its config.
///
///   auto lstm = nn::LstmConfig(/*d_input=*/8, /*d_hidden=*/16, /*bias=*/true)
///                   .with_num_layers(2).with_bidirectional(true).init<Cpu>(device);
///   auto [output, state] = lstm.forward(x);  // [batch, seq, 8] -> [batch, seq, 32];
///                                            // state.hidden, state.cell [4, batch, 16]
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
struct Lstm;

/// Configuration of Lstm (Burn's LstmConfig; PyTorch's nn.LSTM arguments with Burn's names).
struct LstmConfig {
  std::int64_t d_input;         ///< features per step of the input (PyTorch's input_size)
  std::int64_t d_hidden;        ///< size of the hidden and cell states (hidden_size)
  bool bias;                    ///< learn bias_ih and bias_hh per layer and direction
  std::int64_t num_layers = 1;  ///< stacked layers; layer l > 0 reads layer l-1's output
  bool bidirectional = false;   ///< a second, reverse-time direction per layer (D = 2)
  /// Dropout probability on each layer's output except the last's, while training (an
  /// autodiff backend), as PyTorch's `dropout`.
  double dropout = 0.0;

  /// Burn's `LstmConfig::new(d_input, d_hidden, bias)`.
  LstmConfig(std::int64_t d_input, std::int64_t d_hidden, bool bias)
      : d_input(d_input), d_hidden(d_hidden), bias(bias) {}
  KILN_CONFIG(LstmConfig, (d_input, d_hidden, bias), (num_layers, bidirectional, dropout))

  /// Throws: config::FieldError if d_input, d_hidden or num_layers < 1 or dropout is outside
  ///         [0, 1]; LimitError if a weight [4·d_hidden, ...] would pass 2^31 - 1 elements.
  void check() const {
    detail::check_rnn_config("LstmConfig::init", 4, d_input, d_hidden, num_layers,
                             bidirectional, dropout);
  }

  /// A new layer, every weight and bias U(-k, k) with k = 1/sqrt(d_hidden) (PyTorch's
  /// nn.LSTM initialisation). Throws: as check().
  template <Backend B>
  Lstm<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential ("lstm"): items [seq_length, d_input] -> [seq_length, D·d_hidden] (the
/// output sequence from a zero initial state: Lstm::sequential_forward).
template <>
struct SequentialRules<LstmConfig> {
  static SequentialItem item_shape(const LstmConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return detail::rnn_item_shape(c.d_input, (c.bidirectional ? 2 : 1) * c.d_hidden, in, at);
  }
};
KILN_REGISTER_LAYER(LstmConfig, "lstm");

/// The state of an Lstm (Burn's LstmState): PyTorch's (h, c), one slice per layer and
/// direction, k = layer·D + direction.
template <Backend B>
struct LstmState {
  Tensor<B, 3> cell;    ///< c [num_layers·D, batch_size, d_hidden]
  Tensor<B, 3> hidden;  ///< h [num_layers·D, batch_size, d_hidden]
};

/// What Lstm::forward returns: the output sequence and the final state.
template <Backend B>
struct LstmOutput {
  Tensor<B, 3> output;  ///< the last layer's h at every step [batch_size, seq_length, D·d_hidden]
  LstmState<B> state;   ///< the state after the last step (the first, for the reverse direction)
};

/// Long short-term memory (Hochreiter & Schmidhuber 1997), as torch.nn.LSTM with
/// batch_first=True. Per step, with gate blocks stacked i|f|g|o in the weights' rows:
///   i = σ(W_ii x + b_ii + W_hi h + b_hi)    f = σ(W_if x + b_if + W_hf h + b_hf)
///   g = tanh(W_ig x + b_ig + W_hg h + b_hg) o = σ(W_io x + b_io + W_ho h + b_ho)
///   c' = f ⊙ c + i ⊙ g                      h' = o ⊙ tanh(c')
/// Parameters carry PyTorch's state_dict keys (`weight_ih_l0` [4·d_hidden, d_input],
/// `weight_hh_l0` [4·d_hidden, d_hidden], `bias_ih_l0`, `bias_hh_l0` [4·d_hidden],
/// `..._reverse` for the second direction, `_l1`... for the layers above, whose input is
/// D·d_hidden wide), so a SafeTensors record loads into torch.nn.LSTM(batch_first=True)
/// with load_state_dict(strict=True), and back.
template <Backend B>
struct Lstm {
  detail::RnnWeights<B> weights;  ///< the keys above (the field name is not part of them)
  double dropout = 0.0;           ///< between layers, while training

  KILN_MODULE(Lstm, weights, dropout)

  /// Runs the layers over the sequence (the time loop is in the engine, one call per
  /// sequence: kiln/nn/rnn.hpp says how the input projections are batched).
  ///
  /// Shapes:    input [batch_size, seq_length, d_input], state (zeros when absent)
  ///            [num_layers·D, batch_size, d_hidden] each -> LstmOutput.
  /// Throws:    ShapeError if input's last dim is not d_input, batch_size or seq_length is 0,
  ///            or a state tensor's shape is not [num_layers·D, batch_size, d_hidden]
  ///            (`Lstm::forward: expected input [batch_size, seq_length, d_input] with
  ///            d_input = 4 ..., got [2, 5, 3]`); StateError before init/load.
  /// Semantics: torch.nn.LSTM(batch_first=True)(input, (h_0, c_0)) -> (output, (h_n, c_n));
  ///            Burn's Lstm::forward(input, Option<LstmState>).
  LstmOutput<B> forward(const Tensor<B, 3>& input,
                        const std::optional<LstmState<B>>& state = std::nullopt) const {
    std::optional<Tensor<B, 3>> h0, c0;
    if (state) {
      h0 = state->hidden;
      c0 = state->cell;
    }
    auto r = detail::rnn_forward<B>("Lstm::forward", true, weights, dropout, input, h0, c0);
    return LstmOutput<B>{std::move(r.output), LstmState<B>{std::move(*r.cell), std::move(r.hidden)}};
  }

  /// Its form inside a Sequential: the output sequence from a zero state.
  /// Shapes: [batch_size, seq_length, d_input] -> [batch_size, seq_length, D·d_hidden].
  /// Throws: RankError for another rank; as forward.
  template <std::size_t D>
  Tensor<B, 3> sequential_forward(Tensor<B, D> input) const {
    if constexpr (D != 3) {
      throw_error<RankError>(
          "Lstm::forward: expected input [batch_size, seq_length, d_input] "
          "(rank 3), got ",
          input.shape());
    } else {
      return forward(input).output;
    }
  }

  /// Input features per step. Throws StateError before init/load.
  std::int64_t d_input() const { return weights.cells.at(0).weight_ih.shape()[1]; }
  /// Size of the hidden and cell states. Throws StateError before init/load.
  std::int64_t d_hidden() const { return weights.cells.at(0).weight_hh.shape()[1]; }
  /// Stacked layers.
  std::int64_t num_layers() const {
    return static_cast<std::int64_t>(weights.cells.size()) / weights.num_directions;
  }
  /// Whether each layer has a reverse direction.
  bool bidirectional() const { return weights.num_directions == 2; }

  /// `d_input: 8, d_hidden: 16, bias: true, num_layers: 2, bidirectional: true, dropout: 0`
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
Lstm<B> LstmConfig::init(const Device<B>& device) const {
  check();
  Lstm<B> out;
  out.weights = detail::init_rnn_weights<B>(4, d_input, d_hidden, num_layers, bidirectional,
                                            bias, device);
  out.dropout = dropout;
  return out;
}

}  // namespace kiln::nn
