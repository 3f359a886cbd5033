// SplitMix64, bounded draws, seed mixing and Fisher–Yates permutations (kiln/data/rng.hpp).
#include "kiln/data/rng.hpp"

#include <numeric>
#include <utility>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::data {
namespace {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;  // 2^64 / golden ratio, odd

// SplitMix64's output function (a variant of MurmurHash3's fmix64, Stafford's "Mix13").
std::uint64_t finalize(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::uint64_t SplitMix64::next_u64() {
  state_ += kGolden;
  return finalize(state_);
}

std::uint64_t SplitMix64::below(std::uint64_t n) {
  if (n == 0) throw_error<ValueError>("SplitMix64::below: n must be >= 1, got 0");
  // 2^64 mod n, computed in 64 bits: draws below it are rejected so that the remaining
  // 2^64 - threshold values are a multiple of n and `r % n` is exactly uniform.
  const std::uint64_t threshold = (0 - n) % n;
  for (;;) {
    const std::uint64_t r = next_u64();
    if (r >= threshold) return r % n;
  }
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream) {
  return finalize(seed ^ finalize(stream * kGolden + kGolden));
}

std::vector<std::size_t> permutation(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  SplitMix64 rng(seed);
  for (std::size_t i = n; i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.below(i));  // j in [0, i - 1]
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

}  // namespace kiln::data
