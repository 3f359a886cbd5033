#pragma once
/// BatchNorm (Burn's `nn::BatchNorm`, PyTorch's nn.BatchNorm1d/2d/3d in one module) and its
/// config.
///
///   auto bn = nn::BatchNormConfig(16).init<Autodiff<Cpu>>(device);
///   auto y = bn.forward(x);          // x [batch_size, 16, height, width]; training: batch stats,
///                                    // and bn.running_mean/running_var are updated
///   auto eval = bn.valid();          // BatchNorm<Cpu>: normalises with the running stats
///
/// Training or inference is decided as for nn::Dropout (Burn's rule): on an autodiff backend
/// forward normalises with the batch statistics and updates the running statistics; on an
/// inference backend (what `valid()` maps to) it uses the running statistics.
///
/// Running statistics in a module world of values. Burn keeps them in a `RunningState`
/// (an Arc<Mutex> shared by clones) so that `forward(&self)` can update them. Kiln keeps
/// them as ordinary parameters that do not require gradients (so records save them with
/// PyTorch's keys, and optimizers and `GradientsParams` leave them alone), declared
/// `mutable` so that a `const` forward (as every layer's, and Sequential's) can replace
/// them. The update therefore lands in the module object whose forward ran; copies taken
/// before (a `clone()`, a `valid()`) keep the statistics they had. The usual loop
///     auto y = model.forward(x); ... model = optim.step(lr, model, grads);
/// carries them on, because the optimizer copies the module after the forward. Two threads
/// must not run forward on the same BatchNorm object at once (the update is a plain write).
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <optional>
#include <string>
#include <vector>

#include "kiln/backend/device_reads.hpp"
#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct BatchNorm;

/// Configuration of BatchNorm (Burn's BatchNormConfig).
struct BatchNormConfig {
  std::int64_t num_features;  ///< C in [batch_size, C, ...]
  double epsilon = 1e-5;      ///< added to the variance before the square root (PyTorch's eps)
  /// running = (1 - momentum)·running + momentum·batch, as PyTorch; none (JSON null,
  /// PyTorch's momentum=None): the cumulative average, factor 1/num_batches_tracked.
  std::optional<double> momentum = 0.1;

  explicit BatchNormConfig(std::int64_t num_features) : num_features(num_features) {}
  KILN_CONFIG(BatchNormConfig, (num_features), (epsilon, momentum))

  /// Throws: config::FieldError if num_features < 1, epsilon < 0 (or NaN) or momentum
  /// outside [0, 1].
  void check() const {
    std::string problem;
    if (num_features < 1) {
      problem = str_cat("num_features must be >= 1, got ", num_features);
    } else if (!(epsilon >= 0.0)) {
      problem = str_cat("epsilon must be >= 0, got ", epsilon);
    } else if (momentum && !(*momentum >= 0.0 && *momentum <= 1.0)) {
      problem = str_cat("momentum must be in [0, 1], got ", *momentum);
    } else {
      return;
    }
    throw config::FieldError(
        str_cat("BatchNormConfig::init: need num_features >= 1, epsilon >= 0 and momentum in "
                "[0, 1], got num_features = ", num_features, ", epsilon = ", epsilon,
                ", momentum = ", momentum ? str_cat(*momentum) : std::string("none")),
        problem);
  }

  /// weight = 1, bias = 0, running_mean = 0, running_var = 1, num_batches_tracked = 0.
  /// Throws: ConfigError as check().
  template <Backend B>
  BatchNorm<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential: over dim 1 of [batch_size, C] or [batch_size, C, ...] (items of rank 1
/// to 3), C = num_features.
template <>
struct SequentialRules<BatchNormConfig> {
  static SequentialItem item_shape(const BatchNormConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    if (in.dims && (in.dims->empty() || in.dims->size() > 3)) {
      throw_error<ConfigError>(at,
                               "expects input [batch_size, num_features, ...] (items of "
                               "rank 1 to 3) but the previous layer outputs ",
                               in.describe());
    }
    if (in.dims && (*in.dims)[0] >= 0 && (*in.dims)[0] != c.num_features) {
      throw_error<ConfigError>(at, "num_features is ", c.num_features,
                               " but the previous layer outputs ", in.describe(), " (",
                               (*in.dims)[0], " features in dim 1)");
    }
    return in;  // items of unknown rank: dim 1 is unknown (the last dim may not be it)
  }
};
KILN_REGISTER_LAYER(BatchNormConfig, "batch_norm");

/// Batch normalisation over the channel dim 1 of [batch_size, channels, ...] (rank 2 to 5):
///   y = (x - mean) / sqrt(var + epsilon) · weight + bias,
/// per channel, mean and var over every other dim. Training uses the batch's mean and
/// biased variance, and updates
///   running_mean = (1 - momentum)·running_mean + momentum·mean
///   running_var  = (1 - momentum)·running_var  + momentum·var·n/(n - 1)   (unbiased, n = the
///                                                                          elements per channel)
///   num_batches_tracked += 1
/// as torch.nn.BatchNorm2d (training=True, track_running_stats=True); inference uses the
/// running statistics. Stored state has PyTorch's names and types.
template <Backend B>
struct BatchNorm {
  module::Param<Tensor<B, 1>> weight;                       ///< γ [channels]
  module::Param<Tensor<B, 1>> bias;                         ///< β [channels]
  mutable module::Param<Tensor<B, 1>> running_mean;         ///< [channels], not trained
  mutable module::Param<Tensor<B, 1>> running_var;          ///< [channels], not trained
  mutable module::Param<Tensor<B, 1, Int>> num_batches_tracked;  ///< [1] (I64 on disk)
  std::optional<double> momentum = 0.1;  ///< none: cumulative average (PyTorch's None)
  double epsilon = 1e-5;

  KILN_MODULE(BatchNorm, weight, bias, running_mean, running_var, num_batches_tracked, momentum,
              epsilon)

  /// Channels (the weight's size). Throws StateError before init/load.
  std::int64_t num_features() const { return weight.shape()[0]; }

  /// Shapes:    input [batch_size, channels, ...] (rank D in 2..5) -> the same shape.
  /// Throws:    ShapeError if dim 1 is not num_features, or (training) if a channel has
  ///            only one value (PyTorch: "Expected more than 1 value per channel when
  ///            training"); StateError if the module was never initialized or loaded.
  /// Effects:   on an autodiff backend, replaces running_mean, running_var and
  ///            num_batches_tracked of this object (see the file comment).
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    static_assert(D >= 2 && D <= 5, "BatchNorm::forward: input rank must be 2 to 5");
    const Shape s = input.shape();
    const std::int64_t channels = num_features();
    if (s[1] != channels) {
      throw_error<ShapeError>("BatchNorm::forward: expected input [batch_size, ", channels,
                              ", ...] (num_features = ", channels, "), got ", s);
    }
    const Erased x(input);
    if constexpr (AutodiffBackend<B>) {
      return forward_train(x).template typed<D>();
    } else {
      return forward_eval(x).template typed<D>();
    }
  }

  /// `num_features: 16, momentum: 0.1, epsilon: 0.00001`
  void describe_fields(::kiln::StrOut& out) const {
    if (!weight.is_initialized()) {
      out << "weight: <empty>";
    } else {
      out << "num_features: " << num_features();
    }
    out << ", momentum: ";
    if (momentum) out << *momentum; else out << "None";
    out << ", epsilon: " << epsilon;
  }

 private:
  // The forward paths are rank-erased (one copy of the code for every rank; the same ops in
  // the same order as written on Tensor<B, D>): forward<D> checks and wraps them.
  using Erased = kiln::detail::ErasedFloat<B>;

  /// [C] -> [1, C, 1, ...] (the input's rank), to broadcast over input.
  static Erased per_channel(const Erased& t, std::int64_t channels, std::size_t rank) {
    std::vector<std::int64_t> dims(rank, 1);
    dims[1] = channels;
    return t.reshape(dims);
  }
  /// Mean over every dim but 1, kept: [N, C, ...] -> [1, C, 1, ...].
  static Erased mean_but_channel(const Erased& x, std::size_t rank) {
    Erased out = x.mean_dim(0);
    for (std::size_t d = 2; d < rank; ++d) out = out.mean_dim(static_cast<std::int64_t>(d));
    return out;
  }

  Erased forward_eval(const Erased& input) const {
    const std::int64_t c = num_features();
    const std::size_t rank = input.shape().rank();
    // y = x·scale + shift, scale = γ/sqrt(running_var + ε), shift = β - running_mean·scale.
    const auto scale = Erased(weight.val()) / (Erased(running_var.val()) + epsilon).sqrt();
    const auto shift = Erased(bias.val()) - Erased(running_mean.val()) * scale;
    return input * per_channel(scale, c, rank) + per_channel(shift, c, rank);
  }

  Erased forward_train(const Erased& input) const {
    const Shape s = input.shape();
    const std::size_t rank = s.rank();
    const std::int64_t c = num_features();
    const std::int64_t n = s.num_elements() / c;
    if (n <= 1) {
      throw_error<ShapeError>(
          "BatchNorm::forward: expected more than 1 value per channel "
          "when training, got input ",
          s);
    }
    const auto mean = mean_but_channel(input, rank);           // [1, C, 1, ...]
    const auto centered = input - mean;
    const auto var = mean_but_channel(centered * centered, rank);  // biased, normalises
    const auto y = centered / (var + epsilon).sqrt();
    update_running(mean, var, n);
    return y * per_channel(Erased(weight.val()), c, rank) +
           per_channel(Erased(bias.val()), c, rank);
  }

  void update_running(const Erased& mean, const Erased& var, std::int64_t n) const {
    using I = typename B::Inner;
    using Ops = typename B::FloatOps;
    const std::int64_t c = num_features();
    const std::array<std::int64_t, 1> flat{c};
    const Tensor<I, 1> batch_mean(I::FloatOps::reshape(Ops::inner(mean.primitive()), flat));
    // Unbiased for the running estimate (torch.nn.BatchNorm), biased for normalising.
    const Tensor<I, 1> batch_var =
        Tensor<I, 1>(I::FloatOps::reshape(Ops::inner(var.primitive()), flat)) *
        (static_cast<double>(n) / static_cast<double>(n - 1));
    const auto tracked = num_batches_tracked.val() + 1;
    if constexpr (kDeviceOnlyReads<I>) {
      if (!momentum) {
        // The count lives on the device (Wgpu): the factor 1/n as a [1] tensor there.
        const Tensor<I, 1> factor = tracked.inner().float_().recip();
        const Tensor<I, 1> keep = -factor + 1.0;
        running_mean.set(Tensor<B, 1>::from_inner(running_mean.val().inner() * keep + batch_mean * factor));
        running_var.set(Tensor<B, 1>::from_inner(running_var.val().inner() * keep + batch_var * factor));
        num_batches_tracked.set(tracked);
        return;
      }
    }
    // momentum none: the cumulative average, factor 1/n with n the batches tracked so far
    // including this one (PyTorch's exponential_average_factor).
    const double factor =
        momentum ? *momentum
                 : 1.0 / static_cast<double>(
                             tracked.to_data().template to_vec<std::int32_t>().at(0));
    const Tensor<I, 1> rm = running_mean.val().inner() * (1.0 - factor) + batch_mean * factor;
    const Tensor<I, 1> rv = running_var.val().inner() * (1.0 - factor) + batch_var * factor;
    running_mean.set(Tensor<B, 1>::from_inner(rm));
    running_var.set(Tensor<B, 1>::from_inner(rv));
    num_batches_tracked.set(tracked);
  }
};

template <Backend B>
BatchNorm<B> BatchNormConfig::init(const Device<B>& device) const {
  check();
  BatchNorm<B> out;
  const Shape shape{num_features};
  out.weight = module::Param<Tensor<B, 1>>(Tensor<B, 1>::ones(shape, device));
  out.bias = module::Param<Tensor<B, 1>>(Tensor<B, 1>::zeros(shape, device));
  out.running_mean = module::Param<Tensor<B, 1>>(Tensor<B, 1>::zeros(shape, device), false);
  out.running_var = module::Param<Tensor<B, 1>>(Tensor<B, 1>::ones(shape, device), false);
  out.num_batches_tracked =
      module::Param<Tensor<B, 1, Int>>(Tensor<B, 1, Int>::zeros(Shape{1}, device), false);
  out.momentum = momentum;
  out.epsilon = epsilon;
  return out;
}

}  // namespace kiln::nn
