// SamplerDataset: seeded samples with and without replacement.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
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
std::map<float, int> counts(const std::vector<float>& v) {
  std::map<float, int> c;
  for (float x : v) ++c[x];
  return c;
}
}  // namespace

TEST(SamplerDataset, WithReplacementExactValues) {
  // Item i is source[SplitMix64(mix_seed(5, i)).below(4)], by the Python transcription of
  // rng_test.cpp: 0 2 3 3 0 0 1 3 2 2. The source is 10·i so values and indices differ.
  auto source = std::make_shared<InMemDataset<float>>(std::vector<float>{0.f, 10.f, 20.f, 30.f});
  auto ds = SamplerDataset<float>::with_replacement(source, 10, 5);
  EXPECT_TRUE(ds.uses_replacement());
  EXPECT_EQ(ds.len(), 10u);
  EXPECT_THAT(all(ds), ElementsAre(0.f, 20.f, 30.f, 30.f, 0.f, 0.f, 10.f, 30.f, 20.f, 20.f));
  EXPECT_EQ(all(ds), all(ds));  // a pure function of (seed, index)
  EXPECT_EQ(ds.get(10), std::nullopt);
}

TEST(SamplerDataset, WithoutReplacementExactValues) {
  // 10 from 4: [0, 1, 2, 3] twice, then the first 2 of permutation(4, mix_seed(9, 0)),
  // shuffled by permutation(10, mix_seed(9, 1)) (Python transcription).
  auto ds = SamplerDataset<float>::without_replacement(test::iota_dataset(4), 10, 9);
  EXPECT_FALSE(ds.uses_replacement());
  EXPECT_THAT(all(ds), ElementsAre(0.f, 2.f, 1.f, 0.f, 3.f, 3.f, 2.f, 1.f, 1.f, 2.f));
}

TEST(SamplerDataset, WithoutReplacementUsesEveryItemEquallyOften) {
  // 25 from 10: every item twice, and 5 distinct items a third time.
  SamplerDataset<float> ds(test::iota_dataset(10), 25, ReplacementMode::WithoutReplacement, 3);
  const auto c = counts(all(ds));
  ASSERT_EQ(c.size(), 10u);
  int thrice = 0;
  for (const auto& [value, n] : c) {
    EXPECT_TRUE(n == 2 || n == 3) << value << " appears " << n << " times";
    thrice += n == 3;
  }
  EXPECT_EQ(thrice, 5);
}

TEST(SamplerDataset, FewerThanTheSourceWithoutReplacementAreDistinct) {
  // 3 from 5 with seed 9 (Python transcription): source items 3, 1, 4.
  SamplerDataset<float> ds(test::iota_dataset(5), 3, ReplacementMode::WithoutReplacement, 9);
  EXPECT_THAT(all(ds), ElementsAre(3.f, 1.f, 4.f));
}

TEST(SamplerDataset, SeedsGiveDifferentSamples) {
  const auto source = test::iota_dataset(50);
  EXPECT_NE(all(SamplerDataset<float>::with_replacement(source, 50, 1)),
            all(SamplerDataset<float>::with_replacement(source, 50, 2)));
  EXPECT_NE(all(SamplerDataset<float>::without_replacement(source, 50, 1)),
            all(SamplerDataset<float>::without_replacement(source, 50, 2)));
  EXPECT_EQ(all(SamplerDataset<float>::without_replacement(source, 50, 1)),
            all(SamplerDataset<float>::without_replacement(source, 50, 1)));
}

TEST(SamplerDataset, EmptySourceIsAValueErrorUnlessTheSampleIsEmpty) {
  EXPECT_THAT([] { SamplerDataset<float>::with_replacement(test::iota_dataset(0), 5, 1); },
              ThrowsMessage<ValueError>(
                  HasSubstr("SamplerDataset: cannot sample 5 items from an empty dataset")));
  EXPECT_TRUE(SamplerDataset<float>::without_replacement(test::iota_dataset(0), 0, 1).is_empty());
}
