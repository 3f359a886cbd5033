#pragma once
/// The data pipeline's random numbers: SplitMix64, a bounded draw, seed mixing and seeded
/// permutations. Every shuffle and sample of kiln::data comes from here, so a seed gives
/// the same order natively (libstdc++) and in WebAssembly (libc++): std::shuffle and
/// std::uniform_int_distribution are implementation-defined and differ between the two.
/// Burn uses `rand`'s StdRng for the same job; its streams are not reproduced.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::data {

/// SplitMix64 (Steele, Lea and Flood 2014; Vigna's reference `splitmix64.c`): 64 bits of
/// state, a Weyl step of 0x9E3779B97F4A7C15 and a 64-bit finaliser. Seeded with 0, its first
/// outputs are 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F.
/// Not thread-safe: one generator per thread (the data pipeline derives one per use).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  /// The next 64 random bits.
  std::uint64_t next_u64();

  /// A uniform integer in [0, n), unbiased (rejection of the 2^64 mod n lowest draws, then
  /// `r mod n`), the same on every platform.
  /// Throws: ValueError if n == 0.
  std::uint64_t below(std::uint64_t n);

 private:
  std::uint64_t state_;
};

/// A seed for stream `stream` of `seed` (the loader's epoch, the sampler's index): the
/// SplitMix64 finaliser of `seed` combined with the finaliser of `stream`. Different
/// streams of one seed give unrelated generators.
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream);

/// A random permutation of 0..n-1: Durstenfeld's Fisher–Yates shuffle of the identity with
/// `SplitMix64(seed)`, swapping position i = n-1 down to 1 with `below(i + 1)`.
/// Deterministic across platforms (all arithmetic is 64-bit, also where size_t has 32).
std::vector<std::size_t> permutation(std::size_t n, std::uint64_t seed);

}  // namespace kiln::data
