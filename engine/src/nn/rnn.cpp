// The time loop of nn::Lstm and nn::Gru (kiln/nn/rnn.hpp, lstm.hpp, gru.hpp), compiled once
// per engine backend (Cpu and Autodiff<Cpu>), one function for both cells, and their config
// checks, initialisation and Sequential shape rule.
#include "kiln/nn/rnn.hpp"

#include <array>
#include <cmath>

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/nn/dropout.hpp"

namespace kiln::nn::detail {

#if !defined(KILN_RNN_BACKEND)  // once, in the Cpu instantiation of this file
/// The fields an Lstm/Gru config shares, checked: `config` names it in messages
/// ("LstmConfig::init"). Throws config::FieldError for d_input, d_hidden or num_layers < 1,
/// dropout outside [0, 1]; LimitError when a weight would pass 2^31 - 1 elements.
void check_rnn_config(const char* config, std::int64_t gates, std::int64_t d_input,
                             std::int64_t d_hidden, std::int64_t num_layers, bool bidirectional,
                             double dropout) {
  const auto field = [&](const char* name, std::int64_t value) {
    if (value < 1) {
      throw config::FieldError(
          str_cat(config, ": ", name, " must be >= 1, got ", value,
                  " (d_input = ", d_input, ", d_hidden = ", d_hidden, ", num_layers = ", num_layers, ")"),
          str_cat(name, " must be >= 1, got ", value));
    }
  };
  field("d_input", d_input);
  field("d_hidden", d_hidden);
  field("num_layers", num_layers);
  if (!(dropout >= 0.0 && dropout <= 1.0)) {
    throw config::FieldError(str_cat(config, ": dropout must be in [0, 1], got ", dropout),
                             str_cat("dropout must be in [0, 1], got ", dropout));
  }
  const std::int64_t rows = checked::mul(config, gates, d_hidden, "gates·d_hidden");
  const std::int64_t dirs = bidirectional ? 2 : 1;
  const std::int64_t above = checked::mul(config, dirs, d_hidden, "D·d_hidden");
  for (const std::int64_t cols : {d_input, d_hidden, above}) {
    checked::numel(config, std::array<std::int64_t, 2>{rows, cols}, "weight shape");
  }
}

/// New weights, every one U(-k, k) with k = 1/sqrt(d_hidden) (torch.nn.LSTM / GRU's
/// reset_parameters).
#endif

template <Backend B>
RnnWeights<B> init_rnn_weights(std::int64_t gates, std::int64_t d_input, std::int64_t d_hidden,
                               std::int64_t num_layers, bool bidirectional, bool bias,
                               const Device<B>& device) {
  const double k = 1.0 / std::sqrt(static_cast<double>(d_hidden));
  const Distribution u = Distribution::uniform(-k, k);
  RnnWeights<B> w;
  w.num_directions = bidirectional ? 2 : 1;
  for (std::int64_t layer = 0; layer < num_layers; ++layer) {
    const std::int64_t d_in = layer == 0 ? d_input : w.num_directions * d_hidden;
    for (std::int64_t dir = 0; dir < w.num_directions; ++dir) {
      RnnCellWeights<B> c;
      c.weight_ih = module::Param<Tensor<B, 2>>(
          Tensor<B, 2>::random(Shape{gates * d_hidden, d_in}, u, device));
      c.weight_hh = module::Param<Tensor<B, 2>>(
          Tensor<B, 2>::random(Shape{gates * d_hidden, d_hidden}, u, device));
      if (bias) {
        c.bias_ih = module::Param<Tensor<B, 1>>(Tensor<B, 1>::random(Shape{gates * d_hidden}, u, device));
        c.bias_hh = module::Param<Tensor<B, 1>>(Tensor<B, 1>::random(Shape{gates * d_hidden}, u, device));
      }
      w.cells.push_back(std::move(c));
    }
  }
  return w;
}

/// Runs a stacked recurrent layer (lstm: LSTM cells i|f|g|o; else GRU cells r|z|n with the
/// reset gate applied to W_hn·h + b_hn, as PyTorch and cuDNN) over `input`.
///
/// Shapes: input [batch_size, seq_length, d_input]; h0, c0 [num_layers·D, batch_size, d_hidden]
///         (zeros when absent) -> RnnResult.
/// Throws: ShapeError naming `op` (`Lstm::forward`) when input, h0 or c0 do not fit;
///         StateError if the layer was never initialized; LimitError for sizes past 2^31 - 1.
template <Backend B>
RnnResult<B> rnn_forward(const char* op, bool lstm, const RnnWeights<B>& w, double dropout,
                         const Tensor<B, 3>& input, const std::optional<Tensor<B, 3>>& h0,
                         const std::optional<Tensor<B, 3>>& c0) {
  const std::int64_t gates = lstm ? 4 : 3;
  const std::int64_t num_dirs = w.num_directions;
  if (w.cells.empty()) {
    throw_error<StateError>(op, ": the layer has no weights (it was never initialized or loaded)");
  }
  const std::int64_t d_input = w.cells[0].weight_ih.shape()[1];
  const std::int64_t d_hidden = w.cells[0].weight_hh.shape()[1];
  const auto num_cells = static_cast<std::int64_t>(w.cells.size());
  const std::int64_t num_layers = num_cells / num_dirs;
  const Shape s = input.shape();
  if (s[2] != d_input || s[0] < 1 || s[1] < 1) {
    throw_error<ShapeError>(
        op, ": expected input [batch_size, seq_length, d_input] with d_input = ", d_input,
        " (batch_size and seq_length >= 1), got ", s);
  }
  const std::int64_t batch = s[0], seq = s[1];
  const std::int64_t rows = checked::mul(op, batch, seq, "batch_size·seq_length");
  checked::numel(op, std::array<std::int64_t, 2>{rows, checked::mul(op, gates, d_hidden, "gates·d_hidden")},
                 "input projection");
  checked::numel(op, std::array<std::int64_t, 3>{batch, seq, checked::mul(op, num_dirs, d_hidden, "D·d_hidden")},
                 "output");
  const Shape state_shape{num_cells, batch, d_hidden};
  const auto check_state = [&](const std::optional<Tensor<B, 3>>& t, const char* name) {
    if (t && t->shape() != state_shape) {
      throw_error<ShapeError>(
          op, ": expected ", name, " [num_layers·D, batch_size, d_hidden] = ", state_shape,
          " (num_layers = ", num_layers, ", D = ", num_dirs, "), got ", t->shape());
    }
  };
  check_state(h0, lstm ? "state.hidden" : "hidden");
  if (lstm) check_state(c0, "state.cell");

  // The initial state of cell k: [batch, d_hidden].
  std::vector<Tensor<B, 2>> h_init, c_init;
  const auto initial = [&](const std::optional<Tensor<B, 3>>& t, std::vector<Tensor<B, 2>>& out) {
    if (!t) return;
    for (auto& piece : t->split(1, 0)) {
      out.push_back(piece.template reshape<2>(std::array<std::int64_t, 2>{batch, d_hidden}));
    }
  };
  initial(h0, h_init);
  if (lstm) initial(c0, c_init);
  const auto zeros = [&] { return Tensor<B, 2>::zeros(Shape{batch, d_hidden}, input.device()); };

  // Per layer, the input of every step [batch, d_in]: layer 0 splits x once (time-major);
  // a layer above reads the steps of the one below as they were produced.
  //
  // The input projection x·W_ihᵀ: on an autodiff backend one GEMM per step, because the
  // backward of a slice of one whole-sequence projection [seq·batch, G·H] is a full-size
  // zero gradient per step (O(seq²) memory traffic; measured: LSTM batch 32, seq 64,
  // d_hidden 128, backward 2-3x slower); on an inference backend one GEMM for all steps
  // (torch.nn.LSTM's form), whose slices cost nothing.
  Tensor<B, 2> x_rows = input.swap_dims(0, 1).template reshape<2>(
      std::array<std::int64_t, 2>{rows, d_input});
  std::vector<Tensor<B, 2>> step_inputs = x_rows.split(batch, 0);
  std::vector<Tensor<B, 2>> h_final, c_final;
  for (std::int64_t layer = 0; layer < num_layers; ++layer) {
    if (layer > 0 && dropout > 0.0) {
      for (auto& x : step_inputs) x = Dropout{dropout}.forward(std::move(x));
    }
    if (layer > 0 && !AutodiffBackend<B>) x_rows = Tensor<B, 2>::cat(step_inputs, 0);
    std::vector<std::vector<Tensor<B, 2>>> directions;
    for (std::int64_t dir = 0; dir < num_dirs; ++dir) {
      const auto k = static_cast<std::size_t>(layer * num_dirs + dir);
      const RnnCellWeights<B>& c = w.cells[k];
      const Tensor<B, 2>& w_ih = c.weight_ih.val();
      const Tensor<B, 2>& w_hh = c.weight_hh.val();
      // b_ih (LSTM: b_ih + b_hh, added unchanged) once per layer and direction.
      std::optional<Tensor<B, 2>> b_x, b_hh;
      if (c.bias_hh) b_hh = c.bias_hh->val().template unsqueeze<2>();
      if (c.bias_ih) b_x = c.bias_ih->val().template unsqueeze<2>();
      if (lstm && b_hh) b_x = b_x ? *b_x + *b_hh : *b_hh;

      std::vector<Tensor<B, 2>> projections;  // inference: x·W_ihᵀ + b of every step
      if constexpr (!AutodiffBackend<B>) {
        Tensor<B, 2> all = x_rows.matmul_transposed(w_ih, false, true);
        if (b_x) all = std::move(all) + *b_x;
        projections = all.split(batch, 0);
      }

      Tensor<B, 2> h = h_init.empty() ? zeros() : h_init[k];
      Tensor<B, 2> cs = lstm ? (c_init.empty() ? zeros() : c_init[k]) : h;
      std::vector<Tensor<B, 2>> outs(static_cast<std::size_t>(seq), h);
      for (std::int64_t i = 0; i < seq; ++i) {
        const std::int64_t t = dir == 0 ? i : seq - 1 - i;
        Tensor<B, 2> xw = projections.empty()
                              ? step_inputs[static_cast<std::size_t>(t)].matmul_transposed(w_ih, false, true)
                              : projections[static_cast<std::size_t>(t)];
        if (b_x && projections.empty()) xw = std::move(xw) + *b_x;
        Tensor<B, 2> hh = h.matmul_transposed(w_hh, false, true);
        if (lstm) {
          const auto g = (std::move(xw) + std::move(hh)).chunk(4, 1);
          const auto in_gate = g[0].sigmoid();
          const auto forget_gate = g[1].sigmoid();
          const auto cell_gate = g[2].tanh();
          const auto out_gate = g[3].sigmoid();
          cs = forget_gate * cs + in_gate * cell_gate;
          h = out_gate * cs.tanh();
        } else {
          if (b_hh) hh = std::move(hh) + *b_hh;
          const auto xg = xw.chunk(3, 1);
          const auto hg = hh.chunk(3, 1);
          const auto reset = (xg[0] + hg[0]).sigmoid();
          const auto update = (xg[1] + hg[1]).sigmoid();
          const auto candidate = (xg[2] + reset * hg[2]).tanh();
          h = (1.0f - update) * candidate + update * h;
        }
        outs[static_cast<std::size_t>(t)] = h;
      }
      directions.push_back(std::move(outs));
      h_final.push_back(h);
      if (lstm) c_final.push_back(cs);
    }
    for (std::size_t t = 0; t < static_cast<std::size_t>(seq); ++t) {
      step_inputs[t] = num_dirs == 1 ? directions[0][t]
                                     : Tensor<B, 2>::cat({directions[0][t], directions[1][t]}, 1);
    }
  }
  const Tensor<B, 3> output = Tensor<B, 2>::template stack<3>(step_inputs, 1);
  RnnResult<B> out{output, Tensor<B, 2>::template stack<3>(h_final, 0), std::nullopt};
  if (lstm) out.cell = Tensor<B, 2>::template stack<3>(c_final, 0);
  return out;
}

#if !defined(KILN_RNN_BACKEND)
/// The Sequential item rule of Lstm and Gru: items [seq_length, d_input] ->
/// [seq_length, D·d_hidden]. Throws ConfigError prefixed by `at`.
SequentialItem rnn_item_shape(std::int64_t d_input, std::int64_t out_features,
                                     const SequentialItem& in, std::string_view at) {
  sequential::need_item_rank(in, 2, at, "[batch_size, seq_length, d_input]");
  if (const auto last = in.last_dim(); last && *last != d_input) {
    throw_error<ConfigError>(at, "d_input is ", d_input, " but the previous layer outputs ",
                             in.describe());
  }
  SequentialItem out;
  out.dims = std::vector<std::int64_t>{in.dims ? (*in.dims)[0] : -1, out_features};
  return out;
}
#define KILN_RNN_BACKEND Cpu
#endif

// The explicit instantiations for KILN_RNN_BACKEND and its Autodiff: Cpu here, Wgpu in
// engine/src/wgpu/nn_rnn.cpp (which includes this file with KILN_RNN_BACKEND defined).
using RnnBase = KILN_RNN_BACKEND;
using RnnAd = Autodiff<KILN_RNN_BACKEND>;
template RnnWeights<RnnBase> init_rnn_weights<RnnBase>(std::int64_t, std::int64_t, std::int64_t,
                                                       std::int64_t, bool, bool,
                                                       const Device<RnnBase>&);
template RnnWeights<RnnAd> init_rnn_weights<RnnAd>(std::int64_t, std::int64_t, std::int64_t,
                                                   std::int64_t, bool, bool, const Device<RnnAd>&);
template RnnResult<RnnBase> rnn_forward<RnnBase>(const char*, bool, const RnnWeights<RnnBase>&,
                                                 double, const Tensor<RnnBase, 3>&,
                                                 const std::optional<Tensor<RnnBase, 3>>&,
                                                 const std::optional<Tensor<RnnBase, 3>>&);
template RnnResult<RnnAd> rnn_forward<RnnAd>(const char*, bool, const RnnWeights<RnnAd>&, double,
                                             const Tensor<RnnAd, 3>&,
                                             const std::optional<Tensor<RnnAd, 3>>&,
                                             const std::optional<Tensor<RnnAd, 3>>&);

}  // namespace kiln::nn::detail
