// Step 9 of the tutorial (web/tutorial/content/09-data.md shows the regions): datasets,
// transforms, a batcher and a data loader. Expected values by hand. Exit status 1 when a
// value is wrong.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <vector>

#include "kiln/kiln.hpp"

using namespace kiln;
using B = Cpu;

// [sample]
struct Sample {
  std::vector<float> features;  // 4 values
  std::int32_t label;
};
// [/sample]

// [batcher]
template <Backend BB>
struct SampleBatch {
  Tensor<BB, 2> inputs;        // [batch_size, 4]
  Tensor<BB, 1, Int> targets;  // [batch_size]
};

/// Stacks the items' features into [batch_size, 4] and their labels into [batch_size].
template <Backend BB>
struct SampleBatcher {
  SampleBatch<BB> batch(std::vector<Sample> items, const Device<BB>& device) const {
    const auto n = static_cast<std::int64_t>(items.size());
    std::vector<float> inputs;
    std::vector<std::int32_t> targets;
    for (const Sample& s : items) {
      inputs.insert(inputs.end(), s.features.begin(), s.features.end());
      targets.push_back(s.label);
    }
    return {Tensor<BB, 2>::from_data(TensorData(Shape{n, 4}, std::move(inputs)), device),
            Tensor<BB, 1, Int>::from_data(TensorData(Shape{n}, std::move(targets)), device)};
  }
};
// [/batcher]

int main() {
  bool ok = true;
  auto check = [&ok](bool cond, const char* what) {
    std::cout << what << ": " << (cond ? "ok" : "WRONG") << "\n";
    ok &= cond;
  };

  // [dataset]
  const auto dataset = data::share(data::InMemDataset<Sample>({
      {{1, 2, 3, 4}, 0},
      {{5, 6, 7, 8}, 1},
      {{9, 10, 11, 12}, 2},
  }));
  std::cout << "dataset.len: " << dataset->len() << "\n";                   // 3
  std::cout << "dataset.get(1).label: " << dataset->get(1)->label << "\n";  // 1
  const data::MapperDataset<Sample, Sample> doubled(dataset, [](const Sample& s) {
    Sample d = s;
    for (float& v : d.features) v *= 2;
    return d;
  });
  const data::PartialDataset<Sample> first_two(dataset, 0, 2);  // items [0, 2)
  const data::ShuffledDataset<Sample> shuffled(dataset, 42);    // a fixed order for seed 42
  // [/dataset]
  check(dataset->len() == 3 && dataset->get(1)->label == 1 && !dataset->get(3), "dataset");
  check(doubled.get(0)->features == std::vector<float>{2, 4, 6, 8}, "mapper doubles");
  check(first_two.len() == 2, "partial has 2 items");
  std::vector<int> order;
  for (std::size_t i = 0; i < shuffled.len(); ++i) order.push_back(shuffled.get(i)->label);
  std::sort(order.begin(), order.end());
  check(order == std::vector<int>{0, 1, 2}, "shuffled is a permutation");

  // [loader]
  // 200 XOR samples: the four corners, 50 times each; labels x1 XOR x2.
  std::vector<Sample> xor_samples;
  for (int i = 0; i < 200; ++i) {
    const int x1 = i & 1, x2 = (i >> 1) & 1;
    xor_samples.push_back({{float(x1), float(x2), 0, 0}, x1 ^ x2});
  }
  const auto loader = data::DataLoaderBuilder<B, Sample, SampleBatch<B>>(SampleBatcher<B>{})
                          .batch_size(16)
                          .shuffle(42)
                          .build(data::InMemDataset(xor_samples));
  std::size_t batches = 0, items = 0;
  for (const SampleBatch<B>& batch : *loader) {
    const auto [n, features] = batch.inputs.dims();
    std::cout << "batch " << batches << ": inputs [" << n << ", " << features << "] targets ["
              << batch.targets.dims()[0] << "]\n";
    ++batches;
    items += static_cast<std::size_t>(n);
  }
  // [/loader]
  check(batches == 13, "13 batches: ceil(200 / 16)");
  check(items == 200, "every item once");
  return ok ? 0 : 1;
}
