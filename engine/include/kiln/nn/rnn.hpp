#pragma once
/// What Lstm and Gru share (kiln/nn/lstm.hpp, kiln/nn/gru.hpp): their stacked, optionally
/// bidirectional weights under PyTorch's state_dict names (`weight_ih_l0`, `weight_hh_l0`,
/// `bias_ih_l0`, `bias_hh_l0`, `weight_ih_l0_reverse`, ..., `weight_ih_l1`, ...), the config
/// checks and initialisation, and the time loop (one function for both cells and every
/// layer/direction, compiled once per backend).
///
/// The loop follows torch.nn.LSTM / torch.nn.GRU with batch_first=True: per layer and
/// direction, on an inference backend the input projection of every step is one GEMM
/// ([seq·batch, d_in] · W_ihᵀ) and each step adds h·W_hhᵀ; on an autodiff backend each step
/// computes x_t·W_ihᵀ and h·W_hhᵀ (slicing one whole-sequence projection would cost a
/// full-size zero gradient per step in backward, engine/src/nn/rnn.cpp); a reverse direction
/// walks the steps from last to first and writes its outputs at their own positions; layer
/// l > 0 reads layer l-1's output (both directions concatenated), through dropout when
/// training (PyTorch's `dropout`).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::detail {

/// The weights of one layer and direction of a recurrent layer (PyTorch's per-cell set).
/// G is the number of gate blocks (4 for LSTM: i|f|g|o; 3 for GRU: r|z|n), H = d_hidden.
template <Backend B>
struct RnnCellWeights {
  module::Param<Tensor<B, 2>> weight_ih;             ///< [G·H, d_in] (d_in: d_input, or D·H above layer 0)
  module::Param<Tensor<B, 2>> weight_hh;             ///< [G·H, H]
  std::optional<module::Param<Tensor<B, 1>>> bias_ih;  ///< [G·H]
  std::optional<module::Param<Tensor<B, 1>>> bias_hh;  ///< [G·H]
};

/// Every cell's weights, cell k = layer·D + direction, as a module whose parameter keys are
/// PyTorch's flat names. It is registered in its owner (Lstm, Gru) as the field `weights`,
/// and drops that field name from the keys: `weight_ih_l0`, not `weights.weight_ih_l0`, so
/// that a record loads into torch.nn.LSTM / GRU with load_state_dict(strict=True).
template <Backend B>
struct RnnWeights {
  using kiln_module_tag = void;
  std::vector<RnnCellWeights<B>> cells;
  std::int64_t num_directions = 1;  ///< D: 2 when bidirectional

  /// `_l0`, `_l0_reverse`, `_l1`, ... for cell k.
  std::string suffix(std::size_t k) const {
    const auto d = static_cast<std::size_t>(num_directions);
    return str_cat("_l", k / d, k % d == 1 ? "_reverse" : "");
  }
  /// The owner's prefix: `path` minus the field name "weights" that KILN_MODULE appended.
  static std::string owner_prefix(const std::string& path) {
    constexpr std::string_view field = "weights";
    if (path.size() >= field.size() && path.compare(path.size() - field.size(), field.size(), field) == 0) {
      std::string out = path.substr(0, path.size() - field.size());
      if (!out.empty() && out.back() == '.') out.pop_back();
      return out;
    }
    return path;
  }

  template <class V>
  void visit(V& visitor, const std::string& path = "") const {
    const std::string prefix = owner_prefix(path);
    for (std::size_t k = 0; k < cells.size(); ++k) {
      const std::string s = suffix(k);
      const auto& c = cells[k];
      module::visit_field(visitor, module::join_path(prefix, "weight_ih" + s), c.weight_ih);
      module::visit_field(visitor, module::join_path(prefix, "weight_hh" + s), c.weight_hh);
      module::visit_field(visitor, module::join_path(prefix, "bias_ih" + s), c.bias_ih);
      module::visit_field(visitor, module::join_path(prefix, "bias_hh" + s), c.bias_hh);
    }
  }
  template <class V>
  void visit_mut(V& visitor, const std::string& path = "") {
    const std::string prefix = owner_prefix(path);
    for (std::size_t k = 0; k < cells.size(); ++k) {
      const std::string s = suffix(k);
      auto& c = cells[k];
      module::visit_field_mut(visitor, module::join_path(prefix, "weight_ih" + s), c.weight_ih);
      module::visit_field_mut(visitor, module::join_path(prefix, "weight_hh" + s), c.weight_hh);
      module::visit_field_mut(visitor, module::join_path(prefix, "bias_ih" + s), c.bias_ih);
      module::visit_field_mut(visitor, module::join_path(prefix, "bias_hh" + s), c.bias_hh);
    }
  }
  template <class M>
  auto map(M& mapper) const {
    RnnWeights<typename M::template Target<B>> out;
    out.num_directions = num_directions;
    for (const auto& c : cells) {
      out.cells.push_back({module::map_field(mapper, c.weight_ih),
                           module::map_field(mapper, c.weight_hh),
                           module::map_field(mapper, c.bias_ih),
                           module::map_field(mapper, c.bias_hh)});
    }
    return out;
  }
  void describe(::kiln::StrOut& out) const { out << "RnnWeights {cells: " << cells.size() << "}"; }
};

/// The fields an Lstm/Gru config shares, checked: `config` names it in messages
/// ("LstmConfig::init"), `gates` is 4 (LSTM) or 3 (GRU). Throws config::FieldError for
/// d_input, d_hidden or num_layers < 1 or dropout outside [0, 1]; LimitError when a weight
/// would pass 2^31 - 1 elements. (engine/src/nn/rnn.cpp)
void check_rnn_config(const char* config, std::int64_t gates, std::int64_t d_input,
                      std::int64_t d_hidden, std::int64_t num_layers, bool bidirectional,
                      double dropout);

/// New weights, every one U(-k, k) with k = 1/sqrt(d_hidden) (torch.nn.LSTM / GRU's
/// reset_parameters). Instantiated for Cpu and Autodiff<Cpu> (engine/src/nn/rnn.cpp).
template <Backend B>
RnnWeights<B> init_rnn_weights(std::int64_t gates, std::int64_t d_input, std::int64_t d_hidden,
                               std::int64_t num_layers, bool bidirectional, bool bias,
                               const Device<B>& device);

/// The result of rnn_forward: the last layer's output sequence and the final states.
template <Backend B>
struct RnnResult {
  Tensor<B, 3> output;               ///< [batch_size, seq_length, D·d_hidden]
  Tensor<B, 3> hidden;               ///< [num_layers·D, batch_size, d_hidden]
  std::optional<Tensor<B, 3>> cell;  ///< LSTM only: [num_layers·D, batch_size, d_hidden]
};

/// Runs a stacked recurrent layer (lstm: LSTM cells i|f|g|o; else GRU cells r|z|n with the
/// reset gate applied to W_hn·h + b_hn, as PyTorch and cuDNN) over `input`. The loop is
/// compiled once per backend, for Cpu and Autodiff<Cpu> (engine/src/nn/rnn.cpp).
///
/// Shapes: input [batch_size, seq_length, d_input]; h0, c0 [num_layers·D, batch_size, d_hidden]
///         (zeros when absent) -> RnnResult.
/// Throws: ShapeError naming `op` (`Lstm::forward`) when input, h0 or c0 do not fit;
///         StateError if the layer was never initialized; LimitError for sizes past 2^31 - 1.
template <Backend B>
RnnResult<B> rnn_forward(const char* op, bool lstm, const RnnWeights<B>& w, double dropout,
                         const Tensor<B, 3>& input, const std::optional<Tensor<B, 3>>& h0,
                         const std::optional<Tensor<B, 3>>& c0);

/// The Sequential item rule of Lstm and Gru: items [seq_length, d_input] ->
/// [seq_length, out_features]. Throws ConfigError prefixed by `at` (engine/src/nn/rnn.cpp).
SequentialItem rnn_item_shape(std::int64_t d_input, std::int64_t out_features,
                              const SequentialItem& in, std::string_view at);

}  // namespace kiln::nn::detail
