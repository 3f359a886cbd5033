// Tensor basics: the Burn tutorial's Exercises 1 and 2 written with Kiln (`npm start` runs
// this program). It prints each result and checks it against values computed by hand;
// it exits with status 1 if a check fails.
//
// Exercise 1: create tensors of each kind: an identity-like Float tensor, an Int tensor and
//             a Bool mask.
// Exercise 2: min-max normalisation from min/max/sub/div, and softmax from exp, sum_dim and
//             a division, compared with kiln::activation::softmax.
#include <cstdint>
#include <iomanip>
#include <iostream>

#include "kiln/kiln.hpp"

using kiln::Bool;
using kiln::Cpu;
using kiln::Int;
using kiln::Tensor;
using kiln::TensorData;
using kiln::Tolerance;

/// Scales each row to [0, 1]: (x - min) / (max - min), min and max along the last dim.
/// Shapes: x [..., n] -> [..., n]. A constant row gives nan (0 / 0), as in PyTorch.
template <kiln::Backend B, std::size_t D>
Tensor<B, D> min_max_normalize(const Tensor<B, D>& x) {
  const auto min = x.min_dim(-1);  // [..., 1]
  const auto max = x.max_dim(-1);  // [..., 1]
  return (x - min) / (max - min);  // broadcasts over the last dim
}

/// softmax(x)_i = exp(x_i - max) / sum_j exp(x_j - max) along `dim`; subtracting the max
/// keeps exp from overflowing and does not change the result.
template <kiln::Backend B, std::size_t D>
Tensor<B, D> softmax_by_hand(const Tensor<B, D>& x, std::int64_t dim) {
  const auto exps = (x - x.max_dim(dim)).exp();
  return exps / exps.sum_dim(dim);
}

int main() {
  std::cout << std::setprecision(2);
  const Cpu::Device device;
  try {
    // ---- Exercise 1: tensors of each kind ----
    const auto eye = Tensor<Cpu, 2>::eye(3, device);
    std::cout << "Identity 3x3:\n" << eye << "\n\n";
    eye.to_data().assert_eq(
        TensorData::from<float>({{1.f, 0.f, 0.f}, {0.f, 1.f, 0.f}, {0.f, 0.f, 1.f}}));

    const auto ints = Tensor<Cpu, 2, Int>::from_ints({{1, 2, 3}, {4, 5, 6}}, device);
    const auto scaled = ints * 10 + 1;
    std::cout << "Int tensor * 10 + 1:\n" << scaled << "\n\n";
    scaled.to_data().assert_eq(TensorData::from<std::int32_t>({{11, 21, 31}, {41, 51, 61}}));

    const auto values = Tensor<Cpu, 2>::from_floats({{0.5f, 2.5f}, {3.5f, -1.f}}, device);
    const Tensor<Cpu, 2, Bool> mask = values.greater_elem(1.0);
    std::cout << "Bool mask (values > 1):\n" << mask << "\n\n";
    mask.to_data().assert_eq(TensorData::from<bool>({{false, true}, {true, false}}));

    // ---- Exercise 2: min-max normalisation and softmax from primitives ----
    const auto x = Tensor<Cpu, 1>::from_floats({2.f, 4.f, 6.f, 8.f, 10.f}, device);
    const auto normalized = min_max_normalize(x);
    std::cout << "min_max_normalize([2, 4, 6, 8, 10]):\n" << normalized << "\n\n";
    normalized.to_data().assert_approx_eq(TensorData::from<float>({0.f, .25f, .5f, .75f, 1.f}),
                                          Tolerance::default_f32());

    const auto logits = Tensor<Cpu, 2>::from_floats({{1.f, 2.f, 3.f}, {1.f, 1.f, 1.f}}, device);
    const auto by_hand = softmax_by_hand(logits, 1);
    const auto library = kiln::activation::softmax(logits, 1);
    std::cout << "softmax from exp / sum_dim:\n" << by_hand << "\n\n";
    std::cout << "activation::softmax:\n" << library << "\n\n";
    by_hand.to_data().assert_approx_eq(library.to_data(), Tolerance::default_f32());
    // By hand: e^0 / (e^-2 + e^-1 + e^0) = 0.665..., and a constant row gives 1/3 each.
    library.to_data().assert_approx_eq(
        TensorData::from<float>(
            {{0.09003057f, 0.24472847f, 0.66524096f}, {1.f / 3.f, 1.f / 3.f, 1.f / 3.f}}),
        Tolerance::default_f32());
  } catch (const kiln::Error& e) {
    std::cerr << "tensor_basics: check failed: " << e.what() << "\n";
    return 1;
  }
  std::cout << "All checks passed.\n";
  return 0;
}
