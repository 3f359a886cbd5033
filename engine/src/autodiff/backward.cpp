// AutodiffOps: the autodiff entry points (require_grad, backward, grad, grad_remove,
// grad_replace). The ops' backward rules are in the family files beside this one (unary,
// binary, reduce, shape, index, matmul, conv, pool; shared helpers in rule.hpp).
// Instantiated here for Autodiff<Cpu>.
#include <optional>
#include <utility>

#include "autodiff/rule.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::set_require_grad(Tensor x, bool require) {
  if (!require) return Tensor(std::move(x.primitive));
  if (x.node) {
    x.node->retain_grad();  // a leaf keeps its gradient anyway
    return x;
  }
  const Shape s = shape(x);
  return Tensor(std::move(x.primitive), std::make_shared<NodeT>(s));
}

template <Backend B>
autodiff::Gradients<B> AutodiffOps<B>::backward(const Tensor& root) {
  return backward(root, false);
}

template <Backend B>
autodiff::Gradients<B> AutodiffOps<B>::backward(const Tensor& root, bool retain_graph) {
  const Shape s = shape(root);
  if (s.num_elements() != 1) {
    throw_error<ShapeError>("backward: expected a tensor with one element (a loss), got shape ", s,
                            " (", s.num_elements(),
                            " elements); reduce it first, e.g. "
                            "with sum() or mean()");
  }
  if (!root.node) {
    throw_error<StateError>(
        "backward: the tensor does not require gradients (no input of its computation was "
        "marked with require_grad())");
  }
  return autodiff::Engine<B>::backward(root.node, Inner::full(s, 1.0, DType::F32, device(root)),
                                       retain_graph);
}

template <Backend B>
std::optional<typename B::FloatTensor> AutodiffOps<B>::grad(const Tensor& x, const Gradients& grads) {
  if (!x.node) return std::nullopt;
  return grads.get(x.node->id());
}

template <Backend B>
std::optional<typename B::FloatTensor> AutodiffOps<B>::grad_remove(const Tensor& x, Gradients& grads) {
  if (!x.node) return std::nullopt;
  return grads.remove(x.node->id());
}

template <Backend B>
void AutodiffOps<B>::grad_replace(const Tensor& x, Gradients& grads, Prim grad) {
  if (!x.node) {
    throw_error<StateError>(
        "grad_replace: the tensor does not require gradients (call require_grad())");
  }
  if (!(Inner::shape(grad) == shape(x))) {
    throw_error<ShapeError>("grad_replace: the gradient's shape ", Inner::shape(grad),
                            " differs from the tensor's ", shape(x));
  }
  grads.insert(x.node->id(), std::move(grad));
}

// The backend instantiated here: Cpu, or the one a TU that includes this file defines
// (engine/src/wgpu/autodiff_instances.cpp: Wgpu).
#ifndef KILN_AUTODIFF_BACKEND
#define KILN_AUTODIFF_BACKEND Cpu
#endif
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::set_require_grad(AutodiffTensor<KILN_AUTODIFF_BACKEND>, bool);
template autodiff::Gradients<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::backward(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&);
template autodiff::Gradients<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::backward(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&, bool);
template std::optional<KILN_AUTODIFF_BACKEND::FloatTensor> AutodiffOps<KILN_AUTODIFF_BACKEND>::grad(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                         const autodiff::Gradients<KILN_AUTODIFF_BACKEND>&);
template std::optional<KILN_AUTODIFF_BACKEND::FloatTensor> AutodiffOps<KILN_AUTODIFF_BACKEND>::grad_remove(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                                autodiff::Gradients<KILN_AUTODIFF_BACKEND>&);
template void AutodiffOps<KILN_AUTODIFF_BACKEND>::grad_replace(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                             autodiff::Gradients<KILN_AUTODIFF_BACKEND>&, KILN_AUTODIFF_BACKEND::FloatTensor);

}  // namespace kiln
