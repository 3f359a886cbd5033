#pragma once
// Small hand-written modules for the optimizer tests, and gradients of a chosen value:
// loss = Σ sum(param · g) has gradient exactly g for each param (no rounding), so a test can
// feed an optimizer the gradients of a reference case through backward() and from_grads.
#include <optional>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::test {

using module::Param;
using AD = Autodiff<Cpu>;

/// One parameter of rank 1.
template <Backend B>
struct Vec1 {
  Param<Tensor<B, 1>> p;
  KILN_MODULE(Vec1, p)
};

/// weight [2, 3] and bias [3], as the PyTorch trajectories of make_trajectories.py.
template <Backend B>
struct Pair {
  Param<Tensor<B, 2>> weight;
  Param<Tensor<B, 1>> bias;
  KILN_MODULE(Pair, weight, bias)
};

/// A module with a Float parameter, an optional one, a nested module and an Int parameter
/// (which optimizers must pass through untouched).
template <Backend B>
struct Mixed {
  Param<Tensor<B, 1>> a;
  std::optional<Param<Tensor<B, 2>>> b;
  Vec1<B> inner;
  Param<Tensor<B, 1, Int>> counts;
  KILN_MODULE(Mixed, a, b, inner, counts)
};

inline Tensor<AD, 1> vec(std::vector<float> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return Tensor<AD, 1>::from_data(TensorData(Shape{n}, std::move(values)));
}

inline Tensor<AD, 2> mat(std::int64_t rows, std::int64_t cols, std::vector<float> values) {
  return Tensor<AD, 2>::from_data(TensorData(Shape{rows, cols}, std::move(values)));
}

template <std::size_t D>
Tensor<AD, 1> dot(const Param<Tensor<AD, D>>& p, const Tensor<AD, D>& g) {
  return (p.val() * g).sum();
}

inline Vec1<AD> make_vec1(std::vector<float> p0) {
  Vec1<AD> m;
  m.p = Param<Tensor<AD, 1>>(vec(std::move(p0)));
  return m;
}

/// GradientsParams whose gradient for m.p is exactly g.
inline optim::GradientsParams<AD> grads_for(const Vec1<AD>& m, std::vector<float> g) {
  return optim::GradientsParams<AD>::from_grads(dot(m.p, vec(std::move(g))).backward(), m);
}

/// GradientsParams whose gradients for weight and bias are exactly g_weight and g_bias.
inline optim::GradientsParams<AD> grads_for(const Pair<AD>& m, std::vector<float> g_weight,
                                            std::vector<float> g_bias) {
  const auto loss =
      dot(m.weight, mat(2, 3, std::move(g_weight))) + dot(m.bias, vec(std::move(g_bias)));
  return optim::GradientsParams<AD>::from_grads(loss.backward(), m);
}

/// The values of a parameter as floats.
template <class P>
std::vector<float> values(const P& param) {
  return param.val().to_data().template to_vec<float>();
}

}  // namespace kiln::test
