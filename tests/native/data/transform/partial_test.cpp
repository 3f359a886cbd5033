// PartialDataset: a contiguous range of the source, and split.
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

namespace {
std::vector<float> all(const Dataset<float>& ds) {
  std::vector<float> out;
  for (float v : ds) out.push_back(v);
  return out;
}
}  // namespace

TEST(PartialDataset, ARangeInside) {
  PartialDataset<float> ds(test::iota_dataset(27), 10, 14);
  EXPECT_EQ(ds.len(), 4u);
  EXPECT_THAT(all(ds), ElementsAre(10.f, 11.f, 12.f, 13.f));
  EXPECT_EQ(ds.get(4), std::nullopt);  // item 14 of the source is outside the range
}

TEST(PartialDataset, FromTheStartAndEmptyRange) {
  EXPECT_THAT(all(PartialDataset<float>(test::iota_dataset(5), 0, 2)), ElementsAre(0.f, 1.f));
  PartialDataset<float> empty(test::iota_dataset(5), 5, 5);
  EXPECT_TRUE(empty.is_empty());
}

TEST(PartialDataset, RangeOutsideTheSourceIsAnIndexError) {
  EXPECT_THAT([] { PartialDataset<float>(test::iota_dataset(5), 2, 6); },
              ThrowsMessage<IndexError>(
                  HasSubstr("PartialDataset: range 2..6 is not within the dataset's 0..5")));
  EXPECT_THAT([] { PartialDataset<float>(test::iota_dataset(5), 3, 2); },
              ThrowsMessage<IndexError>(HasSubstr("range 3..2")));
}

TEST(PartialDataset, SplitGivesTheRemainderToTheLastPart) {
  // Burn's test: 27 items in 4 parts have lengths 6, 6, 6, 9 and cover the source in order.
  const auto parts = PartialDataset<float>::split(test::iota_dataset(27), 4);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].len(), 6u);
  EXPECT_EQ(parts[1].len(), 6u);
  EXPECT_EQ(parts[2].len(), 6u);
  EXPECT_EQ(parts[3].len(), 9u);
  EXPECT_THAT(all(parts[1]), ElementsAre(6.f, 7.f, 8.f, 9.f, 10.f, 11.f));
  std::vector<float> joined;
  for (const auto& part : parts) {
    for (float v : all(part)) joined.push_back(v);
  }
  EXPECT_EQ(joined, all(*test::iota_dataset(27)));
}

TEST(PartialDataset, SplitIntoZeroPartsIsAValueError) {
  EXPECT_THAT([] { PartialDataset<float>::split(test::iota_dataset(3), 0); },
              ThrowsMessage<ValueError>(HasSubstr("num must be >= 1, got 0")));
}
