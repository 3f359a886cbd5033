// Autodiff of the JS Tensor: requireGrad, detach, backward -> RawGradients, grad lookups
// (kiln-dl/inference's engine: the answers of a backend without autodiff, below).
// Gradients live on the inner backend (Cpu): a gradient tensor is an untracked float32.
#include <emscripten/bind.h>

#include "js_tensor.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

using kiln::DType;

#if KILN_JS_AUTODIFF
using Ops = AD::FloatOps;

JsTensor set_require_grad(const JsTensor& x, bool require) {
  return guarded([&] {
    check_dtype(require ? "requireGrad" : "setRequireGrad", x, DType::F32);
    return JsTensor(Ops::set_require_grad(x.value, require));
  });
}

JsTensor detach(const JsTensor& x) {
  return guarded([&] {
    if (!x.is_float()) return x;
    return JsTensor(Ops::detach(x.value));
  });
}

/// backward(); with retain_graph the graph is kept for a later backward through it (PyTorch's
/// retain_graph), else a second backward through it is a StateError.
Gradients backward_retain(const JsTensor& x, bool retain_graph) {
  return guarded([&] {
    check_dtype("backward", x, DType::F32);
    if (!x.is_tracked()) {
      kiln::throw_error<kiln::StateError>(
          "backward: the tensor (shape ", x.shape(),
          ") does not require gradients: no input of the computation called requireGrad()",
          " (or it ran inside noGrad)");
    }
    return Ops::backward(x.value, retain_graph);
  });
}

Gradients backward(const JsTensor& x) { return backward_retain(x, false); }

/// The gradient of x in grads (a RawTensor), or undefined.
val grad(const JsTensor& x, const Gradients& grads) {
  return guarded([&] {
    if (!x.is_float()) return val::undefined();
    auto g = Ops::grad(x.value, grads);
    if (!g) return val::undefined();
    return val(JsTensor(std::move(*g)));
  });
}

val grad_remove(const JsTensor& x, Gradients& grads) {
  return guarded([&] {
    if (!x.is_float()) return val::undefined();
    auto g = Ops::grad_remove(x.value, grads);
    if (!g) return val::undefined();
    return val(JsTensor(std::move(*g)));
  });
}

void grad_replace(const JsTensor& x, Gradients& grads, const JsTensor& g) {
  guarded([&] {
    check_dtype("gradReplace", x, DType::F32);
    check_dtype("gradReplace", g, DType::F32);
    Ops::grad_replace(x.value, grads, g.primitive());
  });
}

#else
// kiln-dl/inference's engine (KILN_JS_NO_AUTODIFF): its tensors live on the inner backend and
// record no graph (Burn's inference backend), so nothing requires gradients and detach is the
// identity; requireGrad and backward say where gradients are. tGrad, tGradRemove and
// tGradReplace take the Gradients that only a backward makes: that engine does not have them
// (the JS layer's stubs say so, engine_profile.ts installInferenceGaps).

[[noreturn]] void no_autodiff(const char* op) {
  kiln::throw_error<kiln::StateError>(
      op, ": kiln-dl/inference runs models on the inner backend and records no graph, as Burn's "
      "inference does; gradients and training are kiln-dl's: import { init } from 'kiln-dl'");
}

JsTensor set_require_grad(const JsTensor& x, bool require) {
  return guarded([&] {
    check_dtype(require ? "requireGrad" : "setRequireGrad", x, DType::F32);
    if (require) no_autodiff("requireGrad");
    return x;
  });
}

JsTensor detach(const JsTensor& x) { return x; }

val backward_retain(const JsTensor& x, bool) {
  return guarded([&]() -> val {
    check_dtype("backward", x, DType::F32);
    no_autodiff("backward");
  });
}

val backward(const JsTensor& x) { return backward_retain(x, false); }
#endif

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_tensor_autodiff) {
  using namespace kiln_js;
  using emscripten::function;
  function("tSetRequireGrad", &set_require_grad);
  function("tDetach", &detach);
  function("tBackward", &backward);
  function("tBackwardRetain", &backward_retain);
#if KILN_JS_AUTODIFF
  function("tGrad", &grad);
  function("tGradRemove", &grad_remove);
  function("tGradReplace", &grad_replace);
#endif
}
