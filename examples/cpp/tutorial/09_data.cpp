// Step 9 of the tutorial (web/tutorial/content/09-data.md shows the regions): datasets,
// transforms, a batcher and a data loader. Expected values by hand. Exit status 1 when a
// value is wrong.
#include <algorithm>
#include <array>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

using namespace kiln;
using B = Cpu;

// [sample]
struct Sample {
  std::vector<float> features;  // 4 values here; [x1, x2] for the XOR data below
  std::int32_t label;
};
// [/sample]

// [batcher]
template <Backend BB>
struct SampleBatch {
  Tensor<BB, 2> inputs;        // [batch_size, features]
  Tensor<BB, 1, Int> targets;  // [batch_size]
};

/// Stacks the items' features into [batch_size, features] and their labels into
/// [batch_size]; every item must have as many features as the first.
template <Backend BB>
struct SampleBatcher {
  SampleBatch<BB> batch(std::vector<Sample> items, const Device<BB>& device) const {
    const auto n = static_cast<std::int64_t>(items.size());
    const std::size_t width = items.empty() ? 0 : items.front().features.size();
    std::vector<float> inputs;
    std::vector<std::int32_t> targets;
    for (const Sample& s : items) {
      if (s.features.size() != width) {
        throw ShapeError(str_cat("SampleBatcher::batch: every item needs ", width,
                                 " features (as the first), got ", s.features.size()));
      }
      inputs.insert(inputs.end(), s.features.begin(), s.features.end());
      targets.push_back(s.label);
    }
    const auto w = static_cast<std::int64_t>(width);
    return {Tensor<BB, 2>::from_data(TensorData(Shape{n, w}, std::move(inputs)), device),
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

  // The batcher on items 0 and 2 (the JS cell's batch): inputs [2, 4], targets [0, 2].
  const auto batch = SampleBatcher<B>{}.batch({*dataset->get(0), *dataset->get(2)}, {});
  check(
      batch.inputs.dims() == std::array<std::int64_t, 2>{2, 4} &&
          batch.inputs.to_data().to_vec<float>() == std::vector<float>{1, 2, 3, 4, 9, 10, 11, 12} &&
          batch.targets.to_data().to_vec<std::int32_t>() == std::vector<std::int32_t>{0, 2},
      "batcher stacks [2, 4] and [2]");
  bool mixed_refused = false;
  try {
    SampleBatcher<B>{}.batch({{{1, 2, 3, 4}, 0}, {{1, 2}, 1}}, {});
  } catch (const ShapeError& e) {
    mixed_refused = std::string(e.what()).find(
                        "every item needs 4 features (as the first), got 2") != std::string::npos;
  }
  check(mixed_refused, "items of different widths are a ShapeError naming both");

  // [loader]
  // 200 pairs [x1, x2] of random bits, labelled x1 XOR x2. The bits come from a linear
  // congruential generator modulo 2^32 (the same one as the JS cell): the same data every run.
  std::uint32_t lcg = 12345;
  auto bit = [&lcg]() {
    lcg = lcg * 1103515245u + 12345u;  // unsigned arithmetic wraps modulo 2^32
    return static_cast<int>((lcg >> 16) & 1);
  };
  std::vector<Sample> xor_samples;  // features [x1, x2], label x1 XOR x2
  for (int i = 0; i < 200; ++i) {
    const int x1 = bit();
    const int x2 = bit();
    xor_samples.push_back({{float(x1), float(x2)}, x1 ^ x2});
  }
  const auto loader = data::DataLoaderBuilder<B, Sample, SampleBatch<B>>(SampleBatcher<B>{})
                          .batch_size(16)
                          .shuffle(42)
                          .build(data::InMemDataset(xor_samples));
  std::size_t batches = 0, items = 0;
  bool labels_are_xor = true;
  for (const SampleBatch<B>& batch : *loader) {
    const auto [n, features] = batch.inputs.dims();
    if (batches < 2 || batches == loader->num_batches() - 1) {
      std::cout << "batch " << batches << ": x [" << n << ", " << features << "] y ["
                << batch.targets.dims()[0] << "]\n";
    }
    const auto x = batch.inputs.to_data().to_vec<float>();
    const auto y = batch.targets.to_data().to_vec<std::int32_t>();
    for (std::int64_t i = 0; i < n; ++i) {
      labels_are_xor &= y[i] == (int(x[2 * i]) ^ int(x[2 * i + 1]));
    }
    ++batches;
    items += static_cast<std::size_t>(n);
  }
  // [/loader]
  check(batches == 13, "13 batches: ceil(200 / 16)");
  check(items == 200, "every item once");
  check(labels_are_xor, "every label is x1 XOR x2");
  // The generator's first pairs and its count of label 1, computed in Python:
  // s = (s * 1103515245 + 12345) % 2**32, bit = (s >> 16) & 1, starting from s = 12345.
  const std::vector<std::vector<float>> first{{0, 0}, {1, 0}, {1, 1}, {1, 0}};
  bool first_ok = true;
  for (std::size_t i = 0; i < first.size(); ++i) first_ok &= xor_samples[i].features == first[i];
  check(first_ok, "first items [0,0] [1,0] [1,1] [1,0]");
  check(std::count_if(xor_samples.begin(), xor_samples.end(),
                      [](const Sample& s) { return s.label == 1; }) == 111,
        "111 samples labelled 1");
  return ok ? 0 : 1;
}
