#pragma once
/// Padding of the convolution layers (Burn's `PaddingConfig1d` / `PaddingConfig2d`):
/// `Valid` (none), `Same` (output size = input size, stride 1 only, as PyTorch's
/// padding='same'), or `Explicit` sizes applied on both sides.
///
///   nn::Conv2dConfig({1, 8}, {3, 3}).with_padding(nn::PaddingConfig2d::same())
///
/// JSON is Burn's serde form: "Valid", "Same", {"Explicit": [1, 1]} (2-D) or
/// {"Explicit": 1} (1-D).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "kiln/config/config.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::nn {

/// Padding of an N-D convolution layer (N = 1, 2 or 3; use the aliases below).
template <std::size_t N>
class PaddingConfig {
 public:
  enum class Kind { Valid, Same, Explicit };

  /// No padding (the default).
  PaddingConfig() { sizes_.fill(0); }
  static PaddingConfig valid() { return PaddingConfig(); }
  /// Output size equal to the input size with stride 1: total padding dilation·(kernel - 1)
  /// per dim, half (rounded down) before the input and the rest after, so an even kernel
  /// gets its extra element on the end side (bottom/right), as PyTorch's padding='same'.
  static PaddingConfig same() {
    PaddingConfig p;
    p.kind_ = Kind::Same;
    return p;
  }
  /// The given zeros on both sides of each spatial dim ({height, width} for 2-D).
  static PaddingConfig explicit_(std::array<std::int64_t, N> sizes) {
    PaddingConfig p;
    p.kind_ = Kind::Explicit;
    p.sizes_ = sizes;
    return p;
  }

  Kind kind() const noexcept { return kind_; }
  /// The Explicit sizes (zeros otherwise).
  const std::array<std::int64_t, N>& sizes() const noexcept { return sizes_; }

  /// Padding before (first) and after (second) the input of each spatial dim.
  /// Throws: ConfigError (naming `op`) for Same with a stride other than 1 (PyTorch:
  /// "padding='same' is not supported for strided convolutions") or a negative Explicit size.
  std::pair<std::array<std::int64_t, N>, std::array<std::int64_t, N>> resolve(
      const char* op, const std::array<std::int64_t, N>& kernel_size,
      const std::array<std::int64_t, N>& stride,
      const std::array<std::int64_t, N>& dilation) const {
    std::array<std::int64_t, N> begin{}, end{};
    for (std::size_t d = 0; d < N; ++d) {
      switch (kind_) {
        case Kind::Valid: break;
        case Kind::Explicit:
          if (sizes_[d] < 0) {
            throw_error<ConfigError>(op, ": explicit padding must be >= 0, got ", sizes_[d],
                                     " in spatial dim ", d);
          }
          begin[d] = end[d] = sizes_[d];
          break;
        case Kind::Same: {
          if (stride[d] != 1) {
            throw_error<ConfigError>(op, ": padding Same requires stride 1, got stride ", stride[d],
                                     " in spatial dim ", d,
                                     " (as PyTorch, which rejects padding='same' for strided "
                                     "convolutions)");
          }
          const std::int64_t total = checked::mul(op, dilation[d], kernel_size[d] - 1,
                                                  "Same padding's dilation · (kernel_size - 1)");
          begin[d] = total / 2;
          end[d] = total - begin[d];
          break;
        }
      }
    }
    return {begin, end};
  }

  friend bool operator==(const PaddingConfig&, const PaddingConfig&) = default;

  /// `Valid`, `Same`, `Explicit([1, 1])`.
  friend void append_to(std::string& kiln_text, const PaddingConfig& p) {
    ::kiln::StrOut out(kiln_text);
    switch (p.kind_) {
      case Kind::Valid: out << "Valid"; return;
      case Kind::Same: out << "Same"; return;
      case Kind::Explicit: break;
    }
    out << "Explicit(";
    if (N > 1) out << '[';
    for (std::size_t d = 0; d < N; ++d) out << (d ? ", " : "") << p.sizes_[d];
    if (N > 1) out << ']';
    out << ')';
  }

 private:
  Kind kind_ = Kind::Valid;
  std::array<std::int64_t, N> sizes_;
};

using PaddingConfig1d = PaddingConfig<1>;
using PaddingConfig2d = PaddingConfig<2>;
using PaddingConfig3d = PaddingConfig<3>;  ///< {depth, height, width} (Burn's PaddingConfig3d)

}  // namespace kiln::nn

/// JSON of PaddingConfig (Burn's serde form, see the file comment).
template <std::size_t N>
struct kiln::config::Codec<kiln::nn::PaddingConfig<N>> {
  using P = kiln::nn::PaddingConfig<N>;
  static Value encode(const P& p) {
    switch (p.kind()) {
      case P::Kind::Valid: return Value("Valid");
      case P::Kind::Same: return Value("Same");
      case P::Kind::Explicit: break;
    }
    if constexpr (N == 1) {
      return Value::object({{"Explicit", Value(p.sizes()[0])}});
    } else {
      Value sizes = Value::array();
      for (std::int64_t s : p.sizes()) sizes.push_back(Value(s));
      return Value::object({{"Explicit", std::move(sizes)}});
    }
  }
  /// Throws: ConfigError for anything but the three forms.
  static P decode(const Value& j) {
    if (j.is_string("Valid")) return P::valid();
    if (j.is_string("Same")) return P::same();
    const Value* v = j.size() == 1 ? j.find("Explicit") : nullptr;
    if (v) {
      std::array<std::int64_t, N> sizes{};
      if constexpr (N == 1) {
        if (v->is_number_integer()) {
          sizes[0] = v->get_int();
          return P::explicit_(sizes);
        }
      } else {
        if (v->is_array() && v->size() == N) {
          bool ok = true;
          for (std::size_t d = 0; d < N; ++d) {
            ok = ok && (*v)[d].is_number_integer();
            if (ok) sizes[d] = (*v)[d].get_int();
          }
          if (ok) return P::explicit_(sizes);
        }
      }
    }
    kiln::throw_error<kiln::ConfigError>("PaddingConfig", N,
                                         "d: expected \"Valid\", \"Same\" or {\"Explicit\": ",
                                         N == 1   ? "n"
                                         : N == 2 ? "[h, w]"
                                                  : "[d, h, w]",
                                         "}, got ", j.dump());
  }
};
