// Dataset<I> and InMemDataset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

using namespace kiln;
using namespace kiln::data;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

// A lazy dataset: item i is i * i; claims one more item than it has (a broken source).
class SquaresWithHole : public Dataset<int> {
 public:
  std::optional<int> get(std::size_t index) const override {
    if (index >= 3) return std::nullopt;
    return static_cast<int>(index * index);
  }
  std::size_t len() const override { return 4; }
};

}  // namespace

TEST(InMemDataset, GetLenAndIsEmpty) {
  InMemDataset<std::string> ds({"a", "b", "c"});
  EXPECT_EQ(ds.len(), 3u);
  EXPECT_FALSE(ds.is_empty());
  EXPECT_EQ(ds.get(0), "a");
  EXPECT_EQ(ds.get(2), "c");
  EXPECT_EQ(ds.get(3), std::nullopt);
  EXPECT_EQ(ds.get(1000), std::nullopt);
}

TEST(InMemDataset, Empty) {
  InMemDataset<float> ds(std::vector<float>{});
  EXPECT_EQ(ds.len(), 0u);
  EXPECT_TRUE(ds.is_empty());
  EXPECT_EQ(ds.get(0), std::nullopt);
  EXPECT_EQ(ds.begin(), ds.end());
}

TEST(InMemDataset, IteratesInIndexOrder) {
  InMemDataset ds(std::vector<int>{5, 6, 7});  // CTAD: InMemDataset<int>
  std::vector<int> seen;
  for (int v : ds) seen.push_back(v);
  EXPECT_THAT(seen, ElementsAre(5, 6, 7));
}

TEST(InMemDataset, ThroughASharedPointerToTheBase) {
  DatasetPtr<int> ds = std::make_shared<InMemDataset<int>>(std::vector<int>{1, 2});
  EXPECT_EQ(ds->len(), 2u);
  EXPECT_EQ(ds->get(1), 2);
}

TEST(InMemDataset, FromDatasetCopiesEveryItem) {
  class Squares : public Dataset<int> {
   public:
    std::optional<int> get(std::size_t i) const override {
      return i < 4 ? std::optional<int>(static_cast<int>(i * i)) : std::nullopt;
    }
    std::size_t len() const override { return 4; }
  };
  const auto ds = InMemDataset<int>::from_dataset(Squares{});
  EXPECT_THAT(ds.items(), ElementsAre(0, 1, 4, 9));
}

TEST(Dataset, IteratingOverAMissingItemNamesTheIndex) {
  SquaresWithHole ds;
  EXPECT_THAT(([&] {
                std::vector<int> all;
                for (int v : ds) all.push_back(v);
              }),
              ThrowsMessage<StateError>(HasSubstr("get(3) returned no item, len() = 4")));
}
