// Looking inside a model (bindings/js/nn.ts: Sequential.forwardAll): every layer's output of
// a Sequential in one call (Keras' Model(inputs, [l.output for l in layers]), PyTorch's
// torchvision feature_extraction), computed by the engine's layers one after the other as
// Sequential::forward_any does (one virtual call per layer), so the page can show hidden
// neurons and feature maps without a second forward pass in JS.
#include <emscripten/bind.h>

#include <utility>

#include "train_common.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

/// Rethrows a layer's ShapeError/RankError as Sequential::forward does: naming the layer.
template <class L, class A>
A apply_layer(const L& layer, A input, std::size_t i) {
  try {
    return layer.forward(std::move(input));
  } catch (const kiln::ShapeError& e) {
    kiln::throw_error<kiln::ShapeError>("Sequential.forwardAll: layer ", i, " (", layer.type(),
                                        "): ", e.what());
  } catch (const kiln::RankError& e) {
    kiln::throw_error<kiln::ShapeError>("Sequential.forwardAll: layer ", i, " (", layer.type(),
                                        "): ", e.what());
  }
}

/// [output of layer 0, output of layer 1, ..., the model's output]: RawTensors, the last one
/// equal to forward(x). Eval mode: the inference backend (no graph, dropout off); training
/// mode with grad enabled: tracked tensors on one graph (a backward from any of them reaches
/// the parameters and a tracked x).
val model_forward_all(const JsModel& m, const JsTensor& x) {
  return guarded([&] {
    constexpr const char* op = "Sequential.forwardAll";
    if (!m.state) kiln::throw_error<kiln::StateError>("Sequential: the model was disposed");
    const ModelState& s = *m.state;
    Activation input = activation_from_js(x, op);
    val out = val::array();
#if KILN_JS_AUTODIFF
    if (!s.training) {
      const InferenceModel inference = s.model.valid();
      InferenceActivation h = std::visit(
          [](const auto& t) -> InferenceActivation { return t.inner(); }, input);
      for (std::size_t i = 0; i < inference.layers.size(); ++i) {
        h = apply_layer(inference.layers[i], std::move(h), i);
        out.call<void>("push", val(js_from_activation(h)));
      }
      return out;
    }
#endif
    Activation h = std::move(input);
    const bool tracked = grad_enabled();
    for (std::size_t i = 0; i < s.model.layers.size(); ++i) {
      h = apply_layer(s.model.layers[i], std::move(h), i);
      if (tracked) {
        out.call<void>("push", val(js_from_activation(h)));
      } else {
        out.call<void>("push", val(std::visit(
                                   [](const auto& t) {
                                     return JsTensor(Prim(primitive_of(t.primitive())));
                                   },
                                   h)));
      }
    }
    return out;
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_nn_inspect) {
  emscripten::function("modelForwardAll", &kiln_js::model_forward_all);
}
