// Tutorial Step 1 (web/tutorial/content/01-tensors.md): creating tensors of each kind,
// their shapes, reading values back. The page shows the regions between `// [name]` and
// `// [/name]` beside the JS cells; every value is checked here against the value worked
// out by hand, and the program exits 1 if one differs.
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <vector>

#include "kiln/kiln.hpp"

using namespace kiln;
using B = Cpu;  // the SIMD CPU backend (Burn's NdArray)

int main() {
  try {
    const Device<B> device;
    // [create]
    // Rank 2, kind Float: the rank is part of the type, the shape is a run-time value.
    const auto a = Tensor<B, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}}, device);
    const auto b = Tensor<B, 1>::from_floats({10.f, 20.f, 30.f}, device);
    const auto [rows, cols] = a.dims();  // 2, 2
    std::cout << a << "\n";
    // [/create]
    a.to_data().assert_eq(TensorData::from<float>({{1.f, 2.f}, {3.f, 4.f}}));
    b.to_data().assert_eq(TensorData::from<float>({10.f, 20.f, 30.f}));
    if (rows != 2 || cols != 2) return 1;

    // [factories]
    const auto zeros = Tensor<B, 2>::zeros({3, 4}, device);
    const auto ones = Tensor<B, 2>::ones({2, 2}, device);
    const auto full = Tensor<B, 1>::full({5}, 3.14f, device);
    const auto like_a = ones_like(a);  // shape of a, all ones
    B::seed(42);                       // the same seed gives the same random values
    const auto uniform = Tensor<B, 2>::random({4, 4}, Distribution::uniform(0.0, 1.0), device);
    const auto normal = Tensor<B, 2>::random({4, 4}, Distribution::normal(0.0, 1.0), device);
    // [/factories]
    if (zeros.shape() != Shape{3, 4} || zeros.sum().into_scalar() != 0.f) return 1;
    ones.to_data().assert_eq(TensorData::from<float>({{1.f, 1.f}, {1.f, 1.f}}));
    full.to_data().assert_eq(TensorData::from<float>({3.14f, 3.14f, 3.14f, 3.14f, 3.14f}));
    like_a.to_data().assert_eq(ones.to_data());
    for (const float v : uniform.to_data().to_vec<float>()) {
      if (!(v >= 0.f && v < 1.f)) return 1;
    }
    if (normal.shape() != Shape{4, 4}) return 1;

    // [kinds]
    const auto labels = Tensor<B, 1, Int>::from_ints({0, 1, 2, 1}, device);
    const auto range = Tensor<B, 1, Int>::arange(0, 5, device);  // [0, 1, 2, 3, 4]
    const Tensor<B, 2, Bool> mask = a.greater_elem(2.f);         // true where a > 2
    // [/kinds]
    labels.to_data().assert_eq(TensorData::from<std::int32_t>({0, 1, 2, 1}));
    range.to_data().assert_eq(TensorData::from<std::int32_t>({0, 1, 2, 3, 4}));
    mask.to_data().assert_eq(TensorData::from<bool>({{false, false}, {true, true}}));

    // [read]
    const std::vector<float> flat = a.to_data().to_vec<float>();  // row-major: 1, 2, 3, 4
    const float answer = Tensor<B, 1>::from_floats({42.f}, device).into_scalar();
    std::cout << std::fixed << std::setprecision(2) << a << "\n";  // Burn's {:.2}
    // [/read]
    if (flat != std::vector<float>{1.f, 2.f, 3.f, 4.f} || answer != 42.f) return 1;

    // [exercise]
    const auto identity =
        Tensor<B, 2>::from_data({{1.f, 0.f, 0.f}, {0.f, 1.f, 0.f}, {0.f, 0.f, 1.f}}, device);
    const auto ints = Tensor<B, 1, Int>::from_ints({10, 20, 30}, device);
    const auto positive = identity.greater_elem(0.f);
    std::cout << identity << "\n" << ints << "\n" << positive << "\n";
    // [/exercise]
    identity.to_data().assert_eq(Tensor<B, 2>::eye(3, device).to_data());
    ints.to_data().assert_eq(TensorData::from<std::int32_t>({10, 20, 30}));
    positive.to_data().assert_eq(
        TensorData::from<bool>({{true, false, false}, {false, true, false}, {false, false, true}}));
  } catch (const Error& e) {
    std::cerr << "01_tensors: check failed: " << e.what() << "\n";
    return 1;
  }
  std::cout << "All checks passed.\n";
  return 0;
}
