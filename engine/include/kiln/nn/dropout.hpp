#pragma once
/// Dropout (Burn's `nn::Dropout`, PyTorch's `nn.Dropout`): inverted dropout, active only
/// while training.
///
///   auto dropout = nn::DropoutConfig(0.5).init();
///   auto y = dropout.forward(x);  // Autodiff<Cpu>: zeroes ~half, scales the rest by 2
///                                 // Cpu (after model.valid()): y is x
///
/// "Training" is Burn's rule: the layer is active when the tensor's backend is an autodiff
/// backend (`Autodiff<Cpu>`), and the identity on an inference backend, which is what
/// `model.valid()` maps a model to. Dropout has no parameters and no backend parameter (as
/// in Burn), so it is a plain value: as a KILN_MODULE field it is copied by `valid()`, and
/// printed, and nothing is recorded for it.
#include <cmath>
#include <cstdint>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

struct Dropout;

/// Configuration of Dropout (Burn's DropoutConfig).
struct DropoutConfig {
  double prob;  ///< probability in [0, 1] that an element is zeroed while training

  explicit DropoutConfig(double prob) : prob(prob) {}
  KILN_CONFIG(DropoutConfig, (prob), ())

  /// Throws: ConfigError unless 0 <= prob <= 1.
  void check() const {
    if (!(prob >= 0.0 && prob <= 1.0)) {
      throw_error<ConfigError>("DropoutConfig::init: prob must be in [0, 1], got ", prob);
    }
  }
  /// The layer. Throws: ConfigError as check().
  Dropout init() const;
};

/// In a Sequential: keeps the item's shape.
template <>
struct SequentialRules<DropoutConfig> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(DropoutConfig, "dropout");

/// Inverted dropout: while training each element is zeroed with probability `prob` and the
/// kept ones are scaled by 1/(1 - prob), so the expected output equals the input; at
/// inference the identity. prob = 1 gives zeros (x·0, no nan from 1/0), prob = 0 the input.
struct Dropout {
  double prob = 0.5;  ///< zeroing probability in [0, 1]

  /// Active (random mask) on an autodiff backend, the identity otherwise (see the file
  /// comment). The mask is drawn from the backend's generator (`B::seed(n)`).
  /// Shapes: input [...] -> [...] (same shape).
  /// Throws: ValueError unless 0 <= prob <= 1 (a Dropout built without its config).
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    check_prob("Dropout::forward");
    if constexpr (!AutodiffBackend<B>) {
      return input;
    } else {
      if (prob == 0.0) return input;
      return train_forward<B>(std::move(input).into_primitive()).template typed<D>();
    }
  }

  /// The training computation with a given keep-mask, on any backend:
  /// input·keep_mask/(1 - prob), or input·0 when prob = 1. The gradient with respect to
  /// input is keep_mask/(1 - prob) (0 for prob = 1). For tests and reproducible runs (the
  /// reference case dropout_inverted_scaling supplies its mask).
  /// Shapes: input [...], keep_mask broadcastable to it, 1 = keep, 0 = drop -> input's shape.
  /// Throws: ShapeError if the shapes do not broadcast; ValueError for prob outside [0, 1].
  template <Backend B, std::size_t D>
  Tensor<B, D> forward_with_mask(Tensor<B, D> input, Tensor<B, D> keep_mask) const {
    check_prob("Dropout::forward_with_mask");
    return apply_mask(std::move(input), std::move(keep_mask));
  }

  friend bool operator==(const Dropout&, const Dropout&) = default;
  /// `Dropout {prob: 0.5}` (Burn's Display).
  friend void append_to(std::string& kiln_text, const Dropout& d) {
    ::kiln::StrOut{kiln_text} << "Dropout {prob: " << d.prob << "}";
  }

 private:
  void check_prob(const char* op) const {
    if (!(prob >= 0.0 && prob <= 1.0)) {
      throw_error<ValueError>(op, ": prob must be in [0, 1], got ", prob);
    }
  }
  template <Backend B, std::size_t D>
  Tensor<B, D> apply_mask(Tensor<B, D> input, Tensor<B, D> keep) const {
    return apply_mask<B>(kiln::detail::ErasedFloat<B>(std::move(input).into_primitive()),
                         kiln::detail::ErasedFloat<B>(std::move(keep).into_primitive()))
        .template typed<D>();
  }
  /// apply_mask, rank-erased (one copy of the code for every rank).
  template <Backend B>
  kiln::detail::ErasedFloat<B> apply_mask(kiln::detail::ErasedFloat<B> input,
                                          kiln::detail::ErasedFloat<B> keep) const {
    // One scaled mask, then one product: x·(m/(1-p)); for p = 1 the factor is 0 (PyTorch
    // computes x·0 there too).
    const double scale = prob < 1.0 ? 1.0 / (1.0 - prob) : 0.0;
    return std::move(input) * (std::move(keep) * scale);
  }
  /// forward's training path (prob > 0, autodiff backend), rank-erased: a Bernoulli keep-mask
  /// drawn as Tensor<B, D>::random draws it, then apply_mask.
  template <Backend B>
  kiln::detail::ErasedFloat<B> train_forward(typename B::FloatTensor input) const {
    using Ops = typename B::FloatOps;
    auto keep = Ops::random(Ops::shape(input), Distribution::bernoulli(1.0 - prob), Float::dtype,
                            Ops::device(input));
    return apply_mask<B>(kiln::detail::ErasedFloat<B>(std::move(input)),
                         kiln::detail::ErasedFloat<B>(std::move(keep)));
  }
};

inline Dropout DropoutConfig::init() const {
  check();
  return Dropout{prob};
}

}  // namespace kiln::nn
