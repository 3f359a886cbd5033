// SplitMix64, bounded draws and permutations: the streams every shuffle of kiln::data uses.
// Expected values come from Vigna's reference splitmix64.c (seed 0) and from a Python
// transcription of the documented algorithms (arbitrary-precision integers masked to 64
// bits), run by hand once; they also pin the streams, which must not change between
// platforms or releases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kiln/kiln.hpp"

using namespace kiln;
using namespace kiln::data;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(SplitMix64, MatchesTheReferenceStreamForSeedZero) {
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next_u64(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rng.next_u64(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(rng.next_u64(), 0x06C45D188009454Full);
}

TEST(SplitMix64, BelowIsPinnedForSeed42) {
  SplitMix64 rng(42);
  std::vector<std::uint64_t> got;
  for (int i = 0; i < 10; ++i) got.push_back(rng.below(10));
  EXPECT_THAT(got, ElementsAre(3, 1, 8, 4, 0, 2, 5, 8, 5, 4));
}

TEST(SplitMix64, BelowStaysInRangeAndReachesEveryValue) {
  SplitMix64 rng(1);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 7000; ++i) {
    const auto v = rng.below(7);
    ASSERT_LT(v, 7u);
    ++counts[v];
  }
  for (int c : counts) EXPECT_GT(c, 800);  // expected 1000 each; 800 is > 6 sigma below
  EXPECT_EQ(SplitMix64(3).below(1), 0u);
}

TEST(SplitMix64, BelowZeroIsAValueError) {
  SplitMix64 rng(0);
  EXPECT_THAT([&] { rng.below(0); },
              ThrowsMessage<ValueError>(HasSubstr("SplitMix64::below: n must be >= 1, got 0")));
}

TEST(MixSeed, IsPinnedAndSeparatesStreams) {
  EXPECT_EQ(mix_seed(42, 0), 0x4579B960BB007F46ull);
  EXPECT_EQ(mix_seed(42, 1), 0xDB6685C74BCFF7FDull);
  EXPECT_NE(mix_seed(42, 0), mix_seed(43, 0));
}

TEST(Permutation, IsPinnedForTwoSeeds) {
  EXPECT_THAT(permutation(10, 42), ElementsAre(0, 9, 5, 8, 6, 4, 7, 2, 1, 3));
  EXPECT_THAT(permutation(10, 43), ElementsAre(4, 2, 5, 6, 1, 3, 9, 8, 7, 0));
}

TEST(Permutation, ContainsEveryIndexOnce) {
  auto p = permutation(1000, 7);
  std::vector<std::size_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> iota(1000);
  std::iota(iota.begin(), iota.end(), std::size_t{0});
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(p, iota);
}

TEST(Permutation, OfZeroAndOneItems) {
  EXPECT_TRUE(permutation(0, 1).empty());
  EXPECT_THAT(permutation(1, 1), ElementsAre(0));
}
