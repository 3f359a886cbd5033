#pragma once
/// Initializer: how a layer fills its parameters at `init` (Burn's `nn::Initializer`, with
/// torch.nn.init's formulas and fan-in/fan-out rule).
///
///   auto w = nn::Initializer::kaiming_uniform(1.0 / std::sqrt(3.0))
///                .init<Cpu, 2>(Shape{128, 784}, /*fan_in=*/784, /*fan_out=*/128, device);
///
/// Fans. A layer passes its own fans (Linear: fan_in = d_input, fan_out = d_output, for the
/// weight and the bias alike, as Burn). Without them, `init(shape, device)` takes them from
/// the shape as PyTorch's `torch.nn.init._calculate_fan_in_and_fan_out` does
/// (`fan_in_and_fan_out`): for a weight [d_output, d_input] fan_in = d_input and
/// fan_out = d_output; for a conv weight [out, in/groups, k...] fan_in = in/groups·prod(k)
/// and fan_out = out·prod(k).
///
/// Formulas (torch.nn.init; `fan` is fan_in, or fan_out when `fan_out_only`, PyTorch's
/// mode="fan_out"; `gain` is PyTorch's `calculate_gain(nonlinearity, a)` already evaluated,
/// e.g. sqrt(2) for relu, 1/sqrt(3) for kaiming_uniform_ with a = sqrt(5)):
///   Constant{value}               every element = value                 (nn.init.constant_)
///   Zeros, Ones                   0, 1                                  (zeros_, ones_)
///   Uniform{min, max}             U[min, max)                           (uniform_)
///   Normal{mean, std}             N(mean, std²)                         (normal_)
///   KaimingUniform{gain, ...}     U[-b, b), b = gain·sqrt(3 / fan)      (kaiming_uniform_)
///   KaimingNormal{gain, ...}      N(0, s²), s = gain / sqrt(fan)        (kaiming_normal_)
///   XavierUniform{gain}           U[-b, b), b = gain·sqrt(6 / (fan_in + fan_out))  (xavier_uniform_)
///   XavierNormal{gain}            N(0, s²), s = gain·sqrt(2 / (fan_in + fan_out))  (xavier_normal_)
/// Random draws use the backend's generator (`B::seed(n)` makes them reproducible).
///
/// JSON (for configs) is Burn's serde form, so a Burn config file's initializer reads as is:
/// `"Zeros"`, `"Ones"`, `{"Constant": {"value": 0.5}}`, `{"Uniform": {"min": -1, "max": 1}}`,
/// `{"Normal": {"mean": 0, "std": 1}}`, `{"KaimingUniform": {"gain": 0.577, "fan_out_only":
/// false}}`, `{"KaimingNormal": {...}}`, `{"XavierUniform": {"gain": 1}}`, `{"XavierNormal":
/// {"gain": 1}}`. Every field is required; unknown variants or fields throw ConfigError.
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "kiln/backend/backend.hpp"
#include "kiln/config/value.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

/// Fan-in and fan-out of a weight (see `fan_in_and_fan_out`).
struct Fans {
  std::int64_t fan_in = 0;
  std::int64_t fan_out = 0;
  friend bool operator==(const Fans&, const Fans&) = default;
};

/// PyTorch's `_calculate_fan_in_and_fan_out`: for shape [out, in, k...] (rank >= 2),
/// fan_in = in·prod(k), fan_out = out·prod(k). [d_output, d_input] -> {d_input, d_output};
/// a conv weight [out, in/groups, kh, kw] -> {in/groups·kh·kw, out·kh·kw}.
/// Throws: ValueError for rank < 2 (as PyTorch: fans need at least 2 dims).
Fans fan_in_and_fan_out(const Shape& shape);

/// How to fill a parameter; see the file comment for each variant's formula.
class Initializer {
 public:
  /// Every element = value.
  struct Constant {
    double value = 0.0;
    friend bool operator==(const Constant&, const Constant&) = default;
  };
  /// Every element 0.
  struct Zeros {
    friend bool operator==(const Zeros&, const Zeros&) = default;
  };
  /// Every element 1.
  struct Ones {
    friend bool operator==(const Ones&, const Ones&) = default;
  };
  /// U[min, max); min == max gives that constant. Requires finite min <= max.
  struct Uniform {
    double min = 0.0;
    double max = 1.0;
    friend bool operator==(const Uniform&, const Uniform&) = default;
  };
  /// N(mean, std²). Requires finite mean and std >= 0.
  struct Normal {
    double mean = 0.0;
    double std = 1.0;
    friend bool operator==(const Normal&, const Normal&) = default;
  };
  /// U[-b, b), b = gain·sqrt(3 / fan) (He et al. 2015); fan = fan_out if fan_out_only.
  struct KaimingUniform {
    double gain = 1.0;
    bool fan_out_only = false;
    friend bool operator==(const KaimingUniform&, const KaimingUniform&) = default;
  };
  /// N(0, s²), s = gain / sqrt(fan); fan = fan_out if fan_out_only.
  struct KaimingNormal {
    double gain = 1.0;
    bool fan_out_only = false;
    friend bool operator==(const KaimingNormal&, const KaimingNormal&) = default;
  };
  /// U[-b, b), b = gain·sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010).
  struct XavierUniform {
    double gain = 1.0;
    friend bool operator==(const XavierUniform&, const XavierUniform&) = default;
  };
  /// N(0, s²), s = gain·sqrt(2 / (fan_in + fan_out)).
  struct XavierNormal {
    double gain = 1.0;
    friend bool operator==(const XavierNormal&, const XavierNormal&) = default;
  };

  using Variant = std::variant<Constant, Zeros, Ones, Uniform, Normal, KaimingUniform,
                               KaimingNormal, XavierUniform, XavierNormal>;

  /// From a variant: `Initializer(Initializer::Normal{0.0, 0.02})`.
  template <class T>
  requires(std::is_constructible_v<Variant, T>) Initializer(T kind)
      : kind_(std::move(kind)) {}  // NOLINT: implicit, as a Rust enum value

  static Initializer constant(double value) { return Constant{value}; }
  static Initializer zeros() { return Zeros{}; }
  static Initializer ones() { return Ones{}; }
  static Initializer uniform(double min, double max) { return Uniform{min, max}; }
  static Initializer normal(double mean, double std) { return Normal{mean, std}; }
  static Initializer kaiming_uniform(double gain, bool fan_out_only = false) {
    return KaimingUniform{gain, fan_out_only};
  }
  static Initializer kaiming_normal(double gain, bool fan_out_only = false) {
    return KaimingNormal{gain, fan_out_only};
  }
  static Initializer xavier_uniform(double gain = 1.0) { return XavierUniform{gain}; }
  static Initializer xavier_normal(double gain = 1.0) { return XavierNormal{gain}; }

  /// The variant (`std::get_if<Initializer::Uniform>(&init.kind())`).
  const Variant& kind() const noexcept { return kind_; }
  /// Burn's variant name: "KaimingUniform", "Zeros", ...
  std::string_view name() const noexcept;

  /// What `init` produces for these fans: a constant, or a distribution.
  struct Sampling {
    std::optional<double> constant;  ///< set: every element is this value
    Distribution distribution;       ///< otherwise: i.i.d. draws from it
  };
  /// The constant or distribution for these fans (the formulas of the file comment).
  /// Throws: ConfigError if a variant needs a fan that is missing or < 1, or a parameter is
  ///         out of range (non-finite values, min > max, std < 0, gain < 0).
  Sampling sampling(std::optional<std::int64_t> fan_in, std::optional<std::int64_t> fan_out) const;

  /// A tensor of `shape` (rank D) filled by this initializer with the given fans (Burn's
  /// `init_with`). Fans may be omitted (nullopt) for the variants that do not use them.
  /// Shapes:  shape -> Tensor<B, D> of that shape (an empty shape gives an empty tensor).
  /// Throws:  RankError if shape's rank is not D; ConfigError as `sampling`.
  template <Backend B, std::size_t D>
  Tensor<B, D> init(const Shape& shape, std::optional<std::int64_t> fan_in,
                    std::optional<std::int64_t> fan_out, const Device<B>& device = {}) const {
    check::rank("Initializer::init", D, shape);
    if (shape.num_elements() == 0) return Tensor<B, D>::zeros(shape, device);  // nothing to draw
    const Sampling s = sampling(fan_in, fan_out);
    if (s.constant) return Tensor<B, D>::full(shape, static_cast<float>(*s.constant), device);
    return Tensor<B, D>::random(shape, s.distribution, device);
  }
  /// Same, with the fans PyTorch computes from the shape (`fan_in_and_fan_out`; none for
  /// rank 1, where only Constant, Zeros, Ones, Uniform and Normal work).
  template <Backend B, std::size_t D>
  Tensor<B, D> init(const Shape& shape, const Device<B>& device = {}) const {
    std::optional<std::int64_t> fan_in, fan_out;
    if (shape.rank() >= 2) {
      const Fans fans = fan_in_and_fan_out(shape);
      fan_in = fans.fan_in;
      fan_out = fans.fan_out;
    }
    return init<B, D>(shape, fan_in, fan_out, device);
  }

  friend bool operator==(const Initializer&, const Initializer&) = default;
  /// Burn's Debug form: `KaimingUniform { gain: 0.5773502691896258, fan_out_only: false }`,
  /// `Zeros`.
  friend void append_to(std::string& out, const Initializer& init);

 private:
  Variant kind_;
};

}  // namespace kiln::nn

/// JSON for configs (Burn's serde form, see the file comment); defined in
/// engine/src/module/initializer.cpp.
template <>
struct kiln::config::Codec<kiln::nn::Initializer> {
  static Value encode(const kiln::nn::Initializer& init);
  /// Throws ConfigError naming the variant and field.
  static kiln::nn::Initializer decode(const Value& j);
};
