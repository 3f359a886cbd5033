#pragma once
// Conversions between SIMD lane masks and Kiln's Bool storage (one byte per element, 0 or
// 1). xsimd 8.1 converts batch_bool <-> bytes through a scalar buffer; these helpers go
// through a lane bitmask instead: movemask (SSE/AVX, and SIMD128's i32x4.bitmask in WASM)
// or the AVX-512 mask register, then a 256-entry table that spreads 8 bits to 8 bytes.
// Every helper is a template on Arch so that each instruction set gets its own copy.
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <xsimd/xsimd.hpp>

namespace kiln::cpu::kernels {

namespace detail {
constexpr std::array<std::uint64_t, 256> make_byte_spread() {
  std::array<std::uint64_t, 256> table{};
  for (std::uint64_t bits = 0; bits < 256; ++bits) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= ((bits >> i) & 1u) << (8 * i);
    table[bits] = v;
  }
  return table;
}
/// kByteSpread[b] holds byte i = bit i of b (little-endian, as x86 and WebAssembly).
inline constexpr std::array<std::uint64_t, 256> kByteSpread = make_byte_spread();

/// Lane i of the batch holds 1 << i (i < 32).
template <class T, class Arch>
inline xsimd::batch<T, Arch> lane_bits() {
  using Batch = xsimd::batch<T, Arch>;
  alignas(64) T bits[Batch::size];
  for (std::size_t i = 0; i < Batch::size; ++i) bits[i] = static_cast<T>(1u << i);
  return Batch::load_aligned(bits);
}
}  // namespace detail

/// Bit i set when lane i of the mask is true.
template <class Arch>
inline std::uint32_t bitmask(const xsimd::batch_bool<float, Arch>& mask) {
#if !defined(__EMSCRIPTEN__)
  if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
    return static_cast<std::uint32_t>(mask.data);
  } else if constexpr (std::is_base_of_v<xsimd::avx, Arch>) {
    return static_cast<std::uint32_t>(_mm256_movemask_ps(mask));
  } else
#endif
      if constexpr (std::is_base_of_v<xsimd::sse2, Arch>) {
    return static_cast<std::uint32_t>(_mm_movemask_ps(mask));
  } else {
    constexpr std::size_t size = xsimd::batch_bool<float, Arch>::size;
    alignas(64) bool lanes[size];
    mask.store_aligned(lanes);
    std::uint32_t bits = 0;
    for (std::size_t i = 0; i < size; ++i) bits |= static_cast<std::uint32_t>(lanes[i]) << i;
    return bits;
  }
}
template <class Arch>
inline std::uint32_t bitmask(const xsimd::batch_bool<std::int32_t, Arch>& mask) {
  return bitmask<Arch>(xsimd::bool_cast(mask));
}

/// Writes `count` bytes 0/1, byte i = bit i of `bits` (count <= 32).
template <class Arch>
inline void store_bits(std::uint32_t bits, std::uint8_t* out, std::size_t count) {
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    std::memcpy(out + i, &detail::kByteSpread[(bits >> i) & 0xFFu], 8);
  }
  if (i < count) std::memcpy(out + i, &detail::kByteSpread[(bits >> i) & 0xFFu], count - i);
}

/// Stores the mask as Batch::size bytes 0/1.
template <class T, class Arch>
inline void store_mask(const xsimd::batch_bool<T, Arch>& mask, std::uint8_t* out) {
  store_bits<Arch>(bitmask<Arch>(mask), out, xsimd::batch_bool<T, Arch>::size);
}

/// Reads `count` Bool bytes (0 or 1) into a bitmask (count <= 32).
template <class Arch>
inline std::uint32_t load_bits(const std::uint8_t* in, std::size_t count) {
  std::uint32_t bits = 0;
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    std::uint64_t v;
    std::memcpy(&v, in + i, 8);
    // Gathers the low bit of each byte into the top byte (bit-twiddling folklore).
    bits |= static_cast<std::uint32_t>(((v & 0x0101010101010101ull) * 0x0102040810204080ull) >> 56)
            << i;
  }
  for (; i < count; ++i) bits |= static_cast<std::uint32_t>(in[i] & 1u) << i;
  return bits;
}

/// The lane mask of T-sized lanes whose lane i is bit i of `bits`.
template <class T, class Arch>
inline xsimd::batch_bool<T, Arch> mask_from_bits(std::uint32_t bits) {
  using IntBatch = xsimd::batch<std::int32_t, Arch>;
  const auto set = (IntBatch(static_cast<std::int32_t>(bits)) &
                    detail::lane_bits<std::int32_t, Arch>()) != IntBatch(0);
  if constexpr (std::is_same_v<T, float>) {
    return xsimd::bool_cast(set);
  } else {
    return set;
  }
}

/// Batch::size Bool bytes as a lane mask of T-sized lanes (T float or int32_t).
template <class T, class Arch>
inline xsimd::batch_bool<T, Arch> load_mask(const std::uint8_t* in) {
  return mask_from_bits<T, Arch>(load_bits<Arch>(in, xsimd::batch_bool<T, Arch>::size));
}

}  // namespace kiln::cpu::kernels
