// ComposedDataset: concatenation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "data/batchers.hpp"
#include "kiln/kiln.hpp"

using namespace kiln;
using namespace kiln::data;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(ComposedDataset, ConcatenatesInOrder) {
  ComposedDataset<float> ds(
      {std::make_shared<InMemDataset<float>>(std::vector<float>{1.f, 2.f}), test::iota_dataset(0),
       std::make_shared<InMemDataset<float>>(std::vector<float>{3.f}), test::iota_dataset(2)});
  EXPECT_EQ(ds.len(), 5u);
  std::vector<float> got;
  for (float v : ds) got.push_back(v);
  EXPECT_THAT(got, ElementsAre(1.f, 2.f, 3.f, 0.f, 1.f));
  EXPECT_EQ(ds.get(2), 3.f);
  EXPECT_EQ(ds.get(5), std::nullopt);
}

TEST(ComposedDataset, OfNothingIsEmpty) {
  ComposedDataset<float> ds({});
  EXPECT_TRUE(ds.is_empty());
  EXPECT_EQ(ds.get(0), std::nullopt);
}

TEST(ComposedDataset, NullPartIsAValueErrorNamingIt) {
  EXPECT_THAT(
      [] {
        ComposedDataset<float>({test::iota_dataset(1), nullptr});
      },
      ThrowsMessage<ValueError>(HasSubstr("ComposedDataset: dataset 1 is null")));
}
