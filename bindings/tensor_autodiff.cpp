// Autodiff of the JS Tensor: requireGrad, detach, backward -> RawGradients, grad lookups.
// Gradients live on the inner backend (Cpu): a gradient tensor is an untracked float32.
#include <emscripten/bind.h>

#include "js_tensor.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

using kiln::DType;
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

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_tensor_autodiff) {
  using namespace kiln_js;
  using emscripten::function;
  function("tSetRequireGrad", &set_require_grad);
  function("tDetach", &detach);
  function("tBackward", &backward);
  function("tBackwardRetain", &backward_retain);
  function("tGrad", &grad);
  function("tGradRemove", &grad_remove);
  function("tGradReplace", &grad_replace);
}
