#pragma once
// Batchers and datasets shared by the data-pipeline tests.
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::test {

/// Stacks float items x into a Float tensor [n, 1] on B.
template <class B>
struct FloatBatcher {
  Tensor<B, 2> batch(std::vector<float> items, const Device<B>& device) const {
    const auto n = static_cast<std::int64_t>(items.size());
    return Tensor<B, 2>::from_data(TensorData(Shape{n, 1}, std::move(items)), device);
  }
};

/// The values of a [n, 1] batch, in order.
template <class B>
std::vector<float> values(const Tensor<B, 2>& batch) {
  return batch.to_data().template to_vec<float>();
}

/// An in-memory dataset of the floats 0, 1, ..., n-1.
inline std::shared_ptr<const data::InMemDataset<float>> iota_dataset(std::size_t n) {
  std::vector<float> items(n);
  std::iota(items.begin(), items.end(), 0.f);
  return std::make_shared<const data::InMemDataset<float>>(std::move(items));
}

}  // namespace kiln::test
