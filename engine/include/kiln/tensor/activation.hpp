#pragma once
/// Activation functions (Burn's `burn::tensor::activation`), PyTorch semantics.
/// Each maps a Float tensor to one of the same shape: [...] -> [...]. The input is taken by
/// value: pass an rvalue (`relu(std::move(x))`) and the result reuses its buffer.
#include <cstdint>

#include "kiln/tensor/tensor.hpp"

namespace kiln::activation {

/// max(0, x); the gradient at 0 is 0 (torch.relu).
template <Backend B, std::size_t D>
Tensor<B, D> relu(Tensor<B, D> x) {
  return Tensor<B, D>(B::FloatOps::unary(UnaryOp::Relu, std::move(x).into_primitive()));
}
/// 1 / (1 + exp(-x)), exact to 0 and 1 for large |x| without overflow.
template <Backend B, std::size_t D>
Tensor<B, D> sigmoid(Tensor<B, D> x) {
  return Tensor<B, D>(B::FloatOps::unary(UnaryOp::Sigmoid, std::move(x).into_primitive()));
}
/// Hyperbolic tangent.
template <Backend B, std::size_t D>
Tensor<B, D> tanh(Tensor<B, D> x) {
  return std::move(x).tanh();
}
/// GELU, x·Φ(x) with the exact erf form (torch.nn.functional.gelu, approximate="none"), or
/// the tanh approximation 0.5x(1 + tanh(sqrt(2/π)(x + 0.044715x³))) when `tanh_approximation`
/// (Hendrycks & Gimpel 2016, arXiv:1606.08415).
template <Backend B, std::size_t D>
Tensor<B, D> gelu(Tensor<B, D> x, bool tanh_approximation = false) {
  return Tensor<B, D>(B::FloatOps::unary(tanh_approximation ? UnaryOp::GeluTanh : UnaryOp::Gelu,
                                         std::move(x).into_primitive()));
}
/// SiLU / swish, x·sigmoid(x) (Elfwing et al. 2017).
template <Backend B, std::size_t D>
Tensor<B, D> silu(Tensor<B, D> x) {
  return Tensor<B, D>(B::FloatOps::unary(UnaryOp::Silu, std::move(x).into_primitive()));
}
/// x for x >= 0, negative_slope·x otherwise (default 0.01, as torch).
template <Backend B, std::size_t D>
Tensor<B, D> leaky_relu(Tensor<B, D> x, double negative_slope = 0.01) {
  return Tensor<B, D>(B::FloatOps::leaky_relu(std::move(x).into_primitive(), negative_slope));
}
/// log(1 + exp(beta·x)) / beta; x itself where beta·x > threshold (torch.nn.Softplus,
/// defaults beta 1, threshold 20). Throws ValueError if beta <= 0.
template <Backend B, std::size_t D>
Tensor<B, D> softplus(Tensor<B, D> x, double beta = 1.0, double threshold = 20.0) {
  return Tensor<B, D>(B::FloatOps::softplus(std::move(x).into_primitive(), beta, threshold));
}
/// exp(x - max) / sum(exp(x - max)) along dim: stable for logits of ±1e4; entries of -inf
/// get exactly 0; a row that is all -inf gives nan (as PyTorch).
/// Throws IndexError if dim is out of range.
template <Backend B, std::size_t D>
Tensor<B, D> softmax(Tensor<B, D> x, std::int64_t dim) {
  return Tensor<B, D>(B::FloatOps::softmax(std::move(x).into_primitive(), dim));
}
/// x - max - log(sum(exp(x - max))) along dim, computed without forming the softmax.
template <Backend B, std::size_t D>
Tensor<B, D> log_softmax(Tensor<B, D> x, std::int64_t dim) {
  return Tensor<B, D>(B::FloatOps::log_softmax(std::move(x).into_primitive(), dim));
}

}  // namespace kiln::activation
