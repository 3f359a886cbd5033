// The orders kiln-dl's JS data pipeline shares with C++ (tests/js/data_*.test.mjs assert the
// same numbers): a DataLoader's shuffled epochs, ShuffledDataset and SamplerDataset for
// fixed seeds. Expected values come from a Python transcription of SplitMix64, mix_seed
// and Fisher–Yates (arbitrary-precision integers masked to 64 bits), written from the
// documented algorithms of kiln/data/rng.hpp, not from this code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "data/batchers.hpp"
#include "kiln/kiln.hpp"

using namespace kiln;
using namespace kiln::data;
using ::testing::ElementsAre;

namespace {

using Batches = std::vector<std::vector<float>>;

template <class L>
Batches epoch(const L& loader) {
  Batches out;
  for (const auto& batch : *loader) out.push_back(test::values(batch));
  return out;
}

}  // namespace

TEST(JsOrders, DataLoaderEpochsOfSeed42) {
  auto loader = DataLoaderBuilder<Cpu, float, Tensor<Cpu, 2>>(test::FloatBatcher<Cpu>{})
                    .batch_size(4)
                    .shuffle(42)
                    .build(test::iota_dataset(10));
  // permutation(10, mix_seed(42, e)) for e = 0, 1, 2, cut into batches of 4.
  EXPECT_EQ(epoch(loader), (Batches{{6, 7, 9, 8}, {2, 0, 1, 3}, {5, 4}}));
  EXPECT_EQ(epoch(loader), (Batches{{7, 6, 0, 1}, {8, 3, 9, 2}, {5, 4}}));
  EXPECT_EQ(epoch(loader), (Batches{{2, 6, 5, 8}, {1, 3, 7, 4}, {0, 9}}));
}

TEST(JsOrders, ShuffledDatasetIndices) {
  EXPECT_THAT(ShuffledDataset<float>(test::iota_dataset(10), 42).indices(),
              ElementsAre(0, 9, 5, 8, 6, 4, 7, 2, 1, 3));
  EXPECT_THAT(ShuffledDataset<float>(test::iota_dataset(6), 5).indices(),
              ElementsAre(0, 1, 5, 3, 4, 2));
  // The largest seed JS numbers hold exactly (2^53 - 1).
  EXPECT_THAT(ShuffledDataset<float>(test::iota_dataset(5), 9007199254740991ull).indices(),
              ElementsAre(1, 4, 3, 0, 2));
}

TEST(JsOrders, SamplerDatasetIndices) {
  auto sources = [](const SamplerDataset<float>& s) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < s.len(); ++i) out.push_back(*s.source_index(i));
    return out;
  };
  EXPECT_THAT(sources(SamplerDataset<float>::with_replacement(test::iota_dataset(10), 5, 7)),
              ElementsAre(0, 2, 2, 0, 2));
  EXPECT_THAT(sources(SamplerDataset<float>::without_replacement(test::iota_dataset(10), 15, 7)),
              ElementsAre(1, 9, 5, 6, 8, 3, 4, 3, 1, 4, 5, 2, 6, 0, 7));
  EXPECT_THAT(sources(SamplerDataset<float>::with_replacement(test::iota_dataset(4), 8, 3)),
              ElementsAre(1, 1, 3, 2, 2, 1, 0, 0));
  EXPECT_THAT(sources(SamplerDataset<float>::without_replacement(test::iota_dataset(4), 6, 3)),
              ElementsAre(3, 2, 0, 1, 0, 3));
}
