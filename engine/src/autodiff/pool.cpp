// AutodiffOps pooling family: forward on the inner backend and the backward steps (PyTorch's
// derivatives.yaml: max_pool2d_with_indices_backward, avg_pool2d_backward,
// _adaptive_avg_pool2d_backward). Instantiated here for Autodiff<Cpu>.
#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "autodiff/rule.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {

template <Backend B>
std::pair<AutodiffTensor<B>, typename B::IntTensor> AutodiffOps<B>::max_pool2d_with_indices(
    const Tensor& x, const MaxPool2dOptions& options) {
  // No structured binding: clang 14 (Emscripten 3.1.6) cannot capture one in a lambda.
  auto pooled = Inner::max_pool2d_with_indices(x.primitive, options);
  auto out = std::move(pooled.first);
  auto indices = std::move(pooled.second);
  if (!x.node) return {Tensor(std::move(out)), std::move(indices)};
  const Shape xs = shape(x);
  auto result = autodiff::detail::record<B>(
      std::move(out), {x.node}, [xs, indices](P g, autodiff::GradSink<B>& sink) {
        sink.add(0, Inner::max_pool2d_backward(xs, g, indices));
      });
  return {std::move(result), std::move(indices)};
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::max_pool2d(const Tensor& x, const MaxPool2dOptions& options) {
  if (!x.node) return Tensor(Inner::max_pool2d(x.primitive, options));
  return max_pool2d_with_indices(x, options).first;
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::avg_pool2d(const Tensor& x, const AvgPool2dOptions& options) {
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::avg_pool2d(x.primitive, options); },
      [&](const P&) {
        return [xs = shape(x), options](P g, autodiff::GradSink<B>& sink) {
          sink.add(0, Inner::avg_pool2d_backward(xs, g, options));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::adaptive_avg_pool2d(
    const Tensor& x, const std::array<std::int64_t, 2>& output_size) {
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::adaptive_avg_pool2d(x.primitive, output_size); },
      [&](const P&) {
        return [xs = shape(x)](P g, autodiff::GradSink<B>& sink) {
          sink.add(0, Inner::adaptive_avg_pool2d_backward(xs, g));
        };
      });
}

// The backend instantiated here: Cpu, or the one a TU that includes this file defines
// (engine/src/wgpu/autodiff_instances.cpp: Wgpu).
#ifndef KILN_AUTODIFF_BACKEND
#define KILN_AUTODIFF_BACKEND Cpu
#endif
template std::pair<AutodiffTensor<KILN_AUTODIFF_BACKEND>, KILN_AUTODIFF_BACKEND::FloatTensor> AutodiffOps<KILN_AUTODIFF_BACKEND>::max_pool2d_with_indices(
    const AutodiffTensor<KILN_AUTODIFF_BACKEND>&, const MaxPool2dOptions&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::max_pool2d(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                          const MaxPool2dOptions&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::avg_pool2d(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                          const AvgPool2dOptions&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::adaptive_avg_pool2d(
    const AutodiffTensor<KILN_AUTODIFF_BACKEND>&, const std::array<std::int64_t, 2>&);

}  // namespace kiln
