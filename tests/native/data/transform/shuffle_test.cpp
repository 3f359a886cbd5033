// ShuffledDataset: a seeded permutation of the source.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "data/batchers.hpp"
#include "kiln/kiln.hpp"

using namespace kiln;
using namespace kiln::data;
using ::testing::ElementsAre;

namespace {
std::vector<float> all(const Dataset<float>& ds) {
  std::vector<float> out;
  for (float v : ds) out.push_back(v);
  return out;
}
}  // namespace

TEST(ShuffledDataset, ExactOrderForSeed42) {
  // Item i is source[permutation(10, 42)[i]]; that permutation is pinned in rng_test.cpp.
  ShuffledDataset<float> ds(test::iota_dataset(10), 42);
  EXPECT_EQ(ds.len(), 10u);
  EXPECT_THAT(all(ds), ElementsAre(0.f, 9.f, 5.f, 8.f, 6.f, 4.f, 7.f, 2.f, 1.f, 3.f));
  EXPECT_THAT(ds.indices(), ElementsAre(0, 9, 5, 8, 6, 4, 7, 2, 1, 3));
  EXPECT_EQ(ds.get(10), std::nullopt);
}

TEST(ShuffledDataset, MapsIndicesOfANonIdentitySource) {
  // Source items 10·i: item i is 10·permutation(10, 43)[i].
  std::vector<float> tens;
  for (int i = 0; i < 10; ++i) tens.push_back(10.f * static_cast<float>(i));
  ShuffledDataset ds(InMemDataset<float>(tens), 43);  // by value, CTAD
  EXPECT_THAT(all(ds), ElementsAre(40.f, 20.f, 50.f, 60.f, 10.f, 30.f, 90.f, 80.f, 70.f, 0.f));
}

TEST(ShuffledDataset, SameSeedSameOrderDifferentSeedDifferentOrder) {
  const auto source = test::iota_dataset(100);
  const auto a = all(ShuffledDataset<float>(source, 1));
  EXPECT_EQ(a, all(ShuffledDataset<float>::with_seed(source, 1)));
  EXPECT_NE(a, all(ShuffledDataset<float>(source, 2)));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, all(*source));
}

TEST(ShuffledDataset, EmptySource) {
  ShuffledDataset<float> ds(test::iota_dataset(0), 3);
  EXPECT_TRUE(ds.is_empty());
  EXPECT_EQ(ds.get(0), std::nullopt);
}

TEST(ShuffledDataset, NullSourceIsAValueError) {
  EXPECT_THROW(ShuffledDataset<float>(DatasetPtr<float>{}, 1), ValueError);
}
