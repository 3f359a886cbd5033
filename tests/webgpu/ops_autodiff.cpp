// Harness cases of Autodiff<Wgpu> (engine/src/wgpu/autodiff_*.cpp: the Cpu backend's backward
// rules instantiated for Wgpu): the same graph built with the typed front end on
// Autodiff<Cpu> and on Autodiff<Wgpu>, and its loss and gradients compared.
#include "harness.hpp"

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/tensor/activation.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::harness {
namespace {

template <class B, std::size_t D>
Tensor<Autodiff<B>, D> tracked(const typename B::FloatTensor& p) {
  return Tensor<Autodiff<B>, D>(AutodiffTensor<B>(p)).require_grad();
}

// A two-layer perceptron with a squared-error loss:
//   in: x [n, i], w1 [i, h], b1 [1, h], w2 [h, o], y [n, o]
//   loss = mean((relu(x·w1 + b1)·w2 - y)²)
// a.output: 0 the loss, 1 dloss/dw1, 2 dloss/db1, 3 dloss/dw2, 4 dloss/dx.
KILN_HARNESS_BACKEND_OP(mlp_grad, {
  auto x = tracked<B, 2>(in[0]);
  auto w1 = tracked<B, 2>(in[1]);
  auto b1 = tracked<B, 2>(in[2]);
  auto w2 = tracked<B, 2>(in[3]);
  const Tensor<Autodiff<B>, 2> y{AutodiffTensor<B>(in[4])};
  auto h = activation::relu(x.matmul(w1) + b1);
  auto d = h.matmul(w2) - y;
  auto loss = (d * d).mean();
  const int output = a.value("output", 0);
  if (output == 0) return loss.inner().into_primitive();
  auto grads = loss.backward();
  const Tensor<Autodiff<B>, 2>* of[] = {nullptr, &w1, &b1, &w2, &x};
  return of[output]->grad(grads).value().into_primitive();
});

// Softmax cross-entropy by hand: z [n, c] logits, t [n, c] one-hot targets,
//   loss = -sum(log_softmax(z, 1) · t) / n
// a.output: 0 the loss, 1 dloss/dz.
KILN_HARNESS_BACKEND_OP(cross_entropy_grad, {
  auto z = tracked<B, 2>(in[0]);
  const Tensor<Autodiff<B>, 2> t{AutodiffTensor<B>(in[1])};
  const double n = static_cast<double>(z.shape()[0]);
  auto loss = (activation::log_softmax(z, 1) * t).sum() * (-1.0 / n);
  if (a.value("output", 0) == 0) return loss.inner().into_primitive();
  auto grads = loss.backward();
  return z.grad(grads).value().into_primitive();
});

// Reductions and shape ops under autodiff: x [a, b, c],
//   loss = sum(max_dim(permute(x, [2, 0, 1]), 0) · sum_dim(x, 2)...) — kept simple:
//   loss = sum(exp(slice(x)) ) + mean(x.sum_dim(1) · 2)
// a.output: 0 the loss, 1 dloss/dx.
KILN_HARNESS_BACKEND_OP(shape_reduce_grad, {
  auto x = tracked<B, 3>(in[0]);
  auto s = x.slice({Slice(0, 2), Slice(1, 3)});
  auto loss = s.exp().sum() + (x.sum_dim(1) * 2.0).mean();
  if (a.value("output", 0) == 0) return loss.inner().into_primitive();
  auto grads = loss.backward();
  return x.grad(grads).value().into_primitive();
});

}  // namespace
}  // namespace kiln::harness
