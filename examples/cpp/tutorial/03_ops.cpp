// Tutorial Step 3 (web/tutorial/content/03-ops.md): arithmetic, float math, matmul,
// reductions, shapes, cat/stack, slicing and comparisons. Each result is checked against
// the value worked out by hand; the program exits 1 if one differs.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>

#include "kiln/kiln.hpp"

using namespace kiln;
using B = Cpu;

// [exercise-functions]
/// (t - min) / (max - min) over all elements. Shapes: [n] -> [n].
Tensor<B, 1> min_max_normalize(const Tensor<B, 1>& t) {
  const auto min = t.min();  // [1]: broadcasts over t
  const auto max = t.max();
  return (t - min) / (max - min);
}

/// exp(t) / sum(exp(t)) along dim 1. Shapes: [rows, n] -> [rows, n].
Tensor<B, 2> softmax_by_hand(const Tensor<B, 2>& t) {
  const auto e = t.exp();
  return e / e.sum_dim(1);  // [rows, n] / [rows, 1]
}
// [/exercise-functions]

int main() {
  try {
    const Device<B> device;
    const auto tol = Tolerance::default_f32();
    // [arithmetic]
    const auto a = Tensor<B, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}}, device);
    const auto b = Tensor<B, 2>::from_data({{10.f, 20.f}, {30.f, 40.f}}, device);
    const auto sum = a + b;
    const auto prod = a * b;
    const auto scaled = a * 2.f + 1.f;  // scalars on either side
    const auto row = Tensor<B, 2>::from_data({{100.f, 200.f}}, device);
    const auto broadcast = a + row;  // [2, 2] + [1, 2] -> [2, 2]
    // [/arithmetic]
    sum.to_data().assert_eq(TensorData::from<float>({{11.f, 22.f}, {33.f, 44.f}}));
    prod.to_data().assert_eq(TensorData::from<float>({{10.f, 40.f}, {90.f, 160.f}}));
    scaled.to_data().assert_eq(TensorData::from<float>({{3.f, 5.f}, {7.f, 9.f}}));
    broadcast.to_data().assert_eq(TensorData::from<float>({{101.f, 202.f}, {103.f, 204.f}}));
    (a - b).to_data().assert_eq(TensorData::from<float>({{-9.f, -18.f}, {-27.f, -36.f}}));
    (a / b).to_data().assert_approx_eq(TensorData::from<float>({{.1f, .1f}, {.1f, .1f}}), tol);
    a.neg().to_data().assert_eq(TensorData::from<float>({{-1.f, -2.f}, {-3.f, -4.f}}));

    // [math]
    const auto x = Tensor<B, 1>::from_floats({0.f, 1.f, 2.f}, device);
    const auto e = x.exp();
    const auto root = x.sqrt();
    const auto squared = x.powf_scalar(2.0);
    const auto inverse = x.recip();  // 1 / 0 = inf, as IEEE 754
    // [/math]
    e.to_data().assert_approx_eq(TensorData::from<float>({1.f, std::exp(1.f), std::exp(2.f)}), tol);
    root.to_data().assert_approx_eq(TensorData::from<float>({0.f, 1.f, std::sqrt(2.f)}), tol);
    squared.to_data().assert_eq(TensorData::from<float>({0.f, 1.f, 4.f}));
    inverse.to_data().assert_eq(
        TensorData::from<float>({std::numeric_limits<float>::infinity(), 1.f, .5f}));

    // [matmul]
    const auto m1 = Tensor<B, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}}, device);
    const auto m2 = Tensor<B, 2>::from_data({{5.f, 6.f}, {7.f, 8.f}}, device);
    const auto product = m1.matmul(m2);  // [2, 2] · [2, 2] -> [2, 2]
    const auto batched =
        Tensor<B, 3>::ones({4, 2, 3}, device)
            .matmul(Tensor<B, 3>::ones({1, 3, 5}, device));  // [4, 2, 3] · [1, 3, 5] -> [4, 2, 5]
    // [/matmul]
    product.to_data().assert_eq(TensorData::from<float>({{19.f, 22.f}, {43.f, 50.f}}));
    if (batched.shape() != Shape{4, 2, 5} || batched.max().into_scalar() != 3.f) return 1;

    // [reductions]
    const auto t = Tensor<B, 2>::from_data({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}, device);
    const float total = t.sum().into_scalar();  // 21: sum() is a [1] tensor in C++
    const auto columns = t.sum_dim(0);          // [1, 3]: the reduced dim is kept
    const auto rows = t.sum_dim(1);             // [2, 1]
    const float mean = t.mean().into_scalar();  // 3.5
    const auto argmax = t.argmax(1);            // Int [2, 1]
    // [/reductions]
    if (total != 21.f || mean != 3.5f || t.max().into_scalar() != 6.f) return 1;
    columns.to_data().assert_eq(TensorData::from<float>({{5.f, 7.f, 9.f}}));
    rows.to_data().assert_eq(TensorData::from<float>({{6.f}, {15.f}}));
    argmax.to_data().assert_eq(TensorData::from<std::int32_t>({{2}, {2}}));

    // [shapes]
    const auto r = Tensor<B, 1>::from_floats({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, device)
                       .reshape<2>({2, 3});              // the new rank is a template argument
    const auto flat = r.flatten<1>(0, 1);                // [6]
    const auto unsqueezed = r.unsqueeze_dim<3>(0);       // [1, 2, 3]
    const auto squeezed = unsqueezed.squeeze_dim<2>(0);  // [2, 3]
    const auto swapped = r.swap_dims(0, 1);              // [3, 2], same as r.transpose()
    // [/shapes]
    if (flat.shape() != Shape{6} || unsqueezed.shape() != Shape{1, 2, 3} ||
        squeezed.shape() != Shape{2, 3}) {
      return 1;
    }
    swapped.to_data().assert_eq(TensorData::from<float>({{1.f, 4.f}, {2.f, 5.f}, {3.f, 6.f}}));
    r.transpose().to_data().assert_eq(swapped.to_data());

    // [cat]
    const auto c1 = Tensor<B, 2>::from_data({{1.f, 2.f}}, device);
    const auto c2 = Tensor<B, 2>::from_data({{3.f, 4.f}}, device);
    const auto catted = Tensor<B, 2>::cat({c1, c2}, 0);        // an existing dim: [2, 2]
    const auto stacked = Tensor<B, 2>::stack<3>({c1, c2}, 0);  // a new dim: [2, 1, 2]
    // [/cat]
    catted.to_data().assert_eq(TensorData::from<float>({{1.f, 2.f}, {3.f, 4.f}}));
    if (stacked.shape() != Shape{2, 1, 2}) return 1;

    // [slice]
    const auto s =
        Tensor<B, 2>::from_data({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}, {7.f, 8.f, 9.f}}, device);
    const auto row0 = s.slice({{0, 1}, {0, 3}});                     // [[1, 2, 3]]
    const auto col01 = s.slice({{0, 3}, {0, 2}});                    // [[1, 2], [4, 5], [7, 8]]
    const auto last_col = s.slice({Slice::all(), Slice::from(-1)});  // [[3], [6], [9]]
    // [/slice]
    row0.to_data().assert_eq(TensorData::from<float>({{1.f, 2.f, 3.f}}));
    col01.to_data().assert_eq(TensorData::from<float>({{1.f, 2.f}, {4.f, 5.f}, {7.f, 8.f}}));
    last_col.to_data().assert_eq(TensorData::from<float>({{3.f}, {6.f}, {9.f}}));

    // [compare]
    const auto q = Tensor<B, 1>::from_floats({1.f, 5.f, 3.f}, device);
    const Tensor<B, 1, Bool> gt3 = q.greater_elem(3.f);  // [false, true, false]
    const Tensor<B, 1, Bool> eq5 = q.equal_elem(5.f);    // [false, true, false]
    const auto clipped = q.mask_fill(gt3, 3.f);          // [1, 3, 3]
    // [/compare]
    gt3.to_data().assert_eq(TensorData::from<bool>({false, true, false}));
    eq5.to_data().assert_eq(TensorData::from<bool>({false, true, false}));
    clipped.to_data().assert_eq(TensorData::from<float>({1.f, 3.f, 3.f}));

    // [exercise]
    const auto normalized =
        min_max_normalize(Tensor<B, 1>::from_floats({2.f, 4.f, 6.f, 8.f, 10.f}, device));
    const auto probs =
        softmax_by_hand(Tensor<B, 2>::from_data({{1.f, 2.f, 3.f}, {1.f, 1.f, 1.f}}, device));
    // [/exercise]
    normalized.to_data().assert_approx_eq(TensorData::from<float>({0.f, .25f, .5f, .75f, 1.f}),
                                          tol);
    // softmax of [1, 2, 3]: e^k / (e + e^2 + e^3); of a constant row: 1/3 each.
    const float z = std::exp(1.f) + std::exp(2.f) + std::exp(3.f);
    probs.to_data().assert_approx_eq(
        TensorData::from<float>({{std::exp(1.f) / z, std::exp(2.f) / z, std::exp(3.f) / z},
                                 {1.f / 3, 1.f / 3, 1.f / 3}}),
        tol);
  } catch (const Error& e) {
    std::cerr << "03_ops: check failed: " << e.what() << "\n";
    return 1;
  }
  std::cout << "All checks passed.\n";
  return 0;
}
