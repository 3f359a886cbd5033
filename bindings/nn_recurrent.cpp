// The JS layers lstm and gru beyond forward(x) (bindings/js/nn_recurrent.ts):
// forwardWithState(x, state?) runs the single layer of a RawModel (kiln.nn.lstm(...) /
// kiln.nn.gru(...)) with an initial state and returns its output and final state, one call
// per sequence (the time loop is the engine's, engine/src/nn/rnn.cpp). In training mode on
// Autodiff<Cpu> (gradients reach the input, the state and the weights); in eval mode on the
// inference layer (valid(): no dropout, no graph); inside kiln.noGrad without a graph.
#include <emscripten/bind.h>

#include <optional>

#include "kiln/nn/gru.hpp"
#include "kiln/nn/lstm.hpp"
#include "train_common.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

/// [output, hidden, cell, hasCell]: owned RawTensors (an Embind value_array, as
/// BatchNormResult); cell is an empty placeholder for a GRU.
struct RecurrentResult {
  JsTensor output;
  JsTensor hidden;
  JsTensor cell;
  bool has_cell = false;
};

/// A float tensor of rank 3 (detached inside kiln.noGrad), or nullopt for null/undefined.
std::optional<kiln::Tensor<AD, 3>> optional_state(const val& v, const char* op, const char* what) {
  if (v.isNull() || v.isUndefined()) return std::nullopt;
  const JsTensor t = v.as<JsTensor>();
  check_dtype(op, t, kiln::DType::F32);
  if (t.shape().rank() != 3) {
    kiln::throw_error<kiln::ShapeError>(op, ": expected ", what,
                                        " [num_layers·D, batch_size, d_hidden], got ", t.shape());
  }
  return kiln::Tensor<AD, 3>(op_input(t));
}

JsTensor out(const kiln::Tensor<AD, 3>& t) {
  return grad_enabled() ? from_typed(t) : JsTensor(Prim(t.primitive().primitive));
}
JsTensor out(const kiln::Tensor<Inner, 3>& t) { return from_typed(t); }

/// forwardWithState of a single lstm or gru layer: x [batch_size, seq_length, d_input],
/// hidden and cell [num_layers·D, batch_size, d_hidden] or null (zeros; cell only for lstm,
/// both or neither).
/// Throws: StateError if the model is not a single lstm/gru layer or was disposed;
///         DTypeError, ShapeError (the engine's `Lstm::forward: ...`) for bad tensors.
RecurrentResult recurrent_forward_with_state(const JsModel& m, const JsTensor& x, val hidden,
                                             val cell) {
  return guarded([&] {
    if (!m.state) kiln::throw_error<kiln::StateError>("forwardWithState: the layer was disposed");
    const ModelState& s = *m.state;
    const char* op = "forwardWithState";
    check_dtype(op, x, kiln::DType::F32);
    if (x.shape().rank() != 3) {
      kiln::throw_error<kiln::ShapeError>(
          op, ": expected input [batch_size, seq_length, d_input] (rank 3), got ", x.shape());
    }
    const kiln::Tensor<AD, 3> input(op_input(x));
    const auto h0 = optional_state(hidden, op, "hidden");
    const auto c0 = optional_state(cell, op, "cell");
    RecurrentResult r;
    if (s.model.layers.size() == 1) {
      if (const auto* lstm = s.model.layers[0].get_if<kiln::nn::Lstm<AD>>()) {
        if (h0.has_value() != c0.has_value()) {
          kiln::throw_error<kiln::ValueError>(
              op, ": an lstm state needs both hidden and cell, got only ", h0 ? "hidden" : "cell");
        }
        r.has_cell = true;
        if (!s.training) {
          std::optional<kiln::nn::LstmState<Inner>> state;
          if (h0) state = kiln::nn::LstmState<Inner>{c0->inner(), h0->inner()};
          const auto y = lstm->valid().forward(input.inner(), state);
          r.output = out(y.output), r.hidden = out(y.state.hidden), r.cell = out(y.state.cell);
          return r;
        }
        std::optional<kiln::nn::LstmState<AD>> state;
        if (h0) state = kiln::nn::LstmState<AD>{*c0, *h0};
        const auto y = lstm->forward(input, state);
        r.output = out(y.output), r.hidden = out(y.state.hidden), r.cell = out(y.state.cell);
        return r;
      }
      if (const auto* gru = s.model.layers[0].get_if<kiln::nn::Gru<AD>>()) {
        if (c0) kiln::throw_error<kiln::ValueError>(op, ": a gru state has no cell (only hidden)");
        if (!s.training) {
          std::optional<kiln::Tensor<Inner, 3>> h;
          if (h0) h = h0->inner();
          const auto y = gru->valid().forward(input.inner(), h);
          r.output = out(y.output), r.hidden = out(y.hidden);
          return r;
        }
        const auto y = gru->forward(input, h0);
        r.output = out(y.output), r.hidden = out(y.hidden);
        return r;
      }
    }
    kiln::throw_error<kiln::StateError>(op, ": the model is not a single lstm or gru layer");
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_nn_recurrent) {
  using namespace kiln_js;
  emscripten::value_array<RecurrentResult>("RecurrentResult")
      .element(&RecurrentResult::output)
      .element(&RecurrentResult::hidden)
      .element(&RecurrentResult::cell)
      .element(&RecurrentResult::has_cell);
  emscripten::function("recurrentForwardWithState", &recurrent_forward_with_state);
}
