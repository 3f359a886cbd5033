// MapperDataset: a function applied to each item.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "data/batchers.hpp"
#include "kiln/kiln.hpp"

using namespace kiln;
using namespace kiln::data;
using ::testing::ElementsAre;

TEST(MapperDataset, AppliesTheFunctionToEachItem) {
  MapperDataset<float, float> ds(test::iota_dataset(4),
                                 [](const float& x) { return 3.f * x + 1.f; });
  EXPECT_EQ(ds.len(), 4u);
  std::vector<float> got;
  for (float v : ds) got.push_back(v);
  EXPECT_THAT(got, ElementsAre(1.f, 4.f, 7.f, 10.f));
  EXPECT_EQ(ds.get(4), std::nullopt);
}

TEST(MapperDataset, ChangesTheItemType) {
  MapperDataset ds(test::iota_dataset(3),
                   [](const float& x) { return std::to_string(static_cast<int>(x)) + "!"; });
  static_assert(std::is_same_v<decltype(ds), MapperDataset<float, std::string>>);
  EXPECT_EQ(ds.get(0), "0!");
  EXPECT_EQ(ds.get(2), "2!");
}

TEST(MapperDataset, ComposesWithOtherTransforms) {
  // Shuffle (seed 42, pinned in rng_test.cpp) then map: 10·permutation(10, 42)[i].
  auto shuffled = std::make_shared<ShuffledDataset<float>>(test::iota_dataset(10), 42);
  MapperDataset ds(shuffled, [](const float& x) { return 10.f * x; });
  EXPECT_EQ(ds.get(1), 90.f);
  EXPECT_EQ(ds.get(2), 50.f);
}

TEST(MapperDataset, EmptyMapperIsAValueError) {
  EXPECT_THROW((MapperDataset<float, float>(test::iota_dataset(1), {})), ValueError);
}
