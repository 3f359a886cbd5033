// The activations of issue 19 that compose primitives (kiln/tensor/activation_more.hpp):
// the JS Tensor methods elu, celu, glu and kiln.activation.prelu (also in
// kiln.nn.functional). Each is one call into the engine's rank-erased form, on
// Autodiff<Cpu> (graph recorded unless in noGrad); the op-table activations (selu, mish,
// hardSigmoid, hardSwish) need no binding of their own (tUnary).
#include <emscripten/bind.h>

#include <cmath>

#include "js_tensor.hpp"
#include "kiln/tensor/activation_more.hpp"

namespace kiln_js {
namespace {

using kiln::DType;
namespace prim = kiln::activation::prim;

JsTensor elu(const JsTensor& a, double alpha) {
  return guarded([&] {
    check_dtype("elu", a, DType::F32);
    return JsTensor(prim::elu<AD>(op_input(a), alpha, 1.0));
  });
}

JsTensor celu(const JsTensor& a, double alpha) {
  return guarded([&] {
    check_dtype("celu", a, DType::F32);
    return JsTensor(prim::celu<AD>("celu", op_input(a), alpha));
  });
}

JsTensor glu(const JsTensor& a, double dim) {
  return guarded([&] {
    check_dtype("glu", a, DType::F32);
    if (!(std::abs(dim) <= 1e15)) {
      kiln::throw_error<kiln::IndexError>("glu: dim ", dim, " is out of range");
    }
    return JsTensor(prim::glu<AD>("glu", op_input(a), static_cast<std::int64_t>(dim)));
  });
}

JsTensor prelu(const JsTensor& a, const JsTensor& weight) {
  return guarded([&] {
    check_dtype("prelu", a, DType::F32);
    check_dtype("prelu", weight, DType::F32);
    return JsTensor(prim::prelu<AD>("prelu", op_input(a), op_input(weight)));
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_nn_activation_more) {
  using namespace kiln_js;
  using emscripten::function;
  function("tElu", &elu);
  function("tCelu", &celu);
  function("tGlu", &glu);
  function("tPrelu", &prelu);
}
