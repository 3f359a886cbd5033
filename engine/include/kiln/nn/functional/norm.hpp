#pragma once
/// Normalisations as functions of tensors (torch.nn.functional.layer_norm, group_norm,
/// batch_norm), for layers written outside the engine (kiln.nn.functional in JS). The layers
/// (LayerNorm, GroupNorm, BatchNorm) hold their parameters and running statistics; these
/// take them as arguments. Composed of tensor ops, so Autodiff<B> differentiates them.
///
///   auto y = nn::functional::layer_norm(x, {4}, w, b, 1e-5);  // [batch, 4] -> same shape
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::functional {

namespace detail {
/// `[3, 4]`.
inline std::string dims_string(const std::vector<std::int64_t>& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}
/// Throws ValueError `<op>: epsilon must be >= 0, got ...` (nan included).
inline void check_epsilon(const char* op, double epsilon) {
  if (!(epsilon >= 0.0)) throw_error<ValueError>(op, ": epsilon must be >= 0, got ", epsilon);
}
/// t ([n]) as rank D [1, n, 1, ...] (broadcast over a channel dim 1).
template <std::size_t D, class T>
auto per_channel(const T& t, std::int64_t channels) {
  std::array<std::int64_t, D> dims{};
  dims.fill(1);
  dims[1] = channels;
  return t.template reshape<D>(dims);
}
/// Throws ShapeError unless p (a per-channel parameter or statistic) has shape [channels].
inline void check_per_channel(const char* op, const char* what, const Shape& p,
                              std::int64_t channels) {
  if (p.rank() != 1 || p[0] != channels) {
    throw_error<ShapeError>(op, ": ", what, " must be [", channels, "] (one per channel), got ", p);
  }
}
/// t cut from the graph (running statistics are not trained).
template <Backend B, std::size_t D>
Tensor<B, D> untracked(const Tensor<B, D>& t) {
  if constexpr (AutodiffBackend<B>) {
    return t.detach();
  } else {
    return t;
  }
}

/// [1, C, 1, ...] of rank `rank` (dims to broadcast a per-channel [C] over dim 1).
inline std::vector<std::int64_t> per_channel_dims(std::size_t rank, std::int64_t channels) {
  std::vector<std::int64_t> dims(rank, 1);
  dims[1] = channels;
  return dims;
}

/// layer_norm of an input of rank `rank`, rank-erased (the typed function is a wrapper);
/// the same ops in the same order as written on Tensor<B, D>.
template <Backend B>
kiln::detail::ErasedFloat<B> layer_norm_erased(
    const kiln::detail::ErasedFloat<B>& x, std::size_t rank,
    const std::vector<std::int64_t>& normalized_shape,
    const std::optional<kiln::detail::ErasedFloat<B>>& weight,
    const std::optional<kiln::detail::ErasedFloat<B>>& bias, double epsilon) {
  using E = kiln::detail::ErasedFloat<B>;
  const char* op = "layer_norm";
  const std::size_t D = rank;
  check_epsilon(op, epsilon);
  const Shape s = x.shape();
  const std::size_t k = normalized_shape.size();
  bool fits = k >= 1 && k <= D;
  for (std::size_t i = 0; fits && i < k; ++i) fits = s[D - k + i] == normalized_shape[i];
  if (!fits) {
    throw_error<ShapeError>(op, ": normalized_shape ", dims_string(normalized_shape),
                            " must be the trailing dims of the input (1 to ", D,
                            " of them), got input ", s);
  }
  for (const auto* p : {&weight, &bias}) {
    if (!*p) continue;
    const Shape ps = (*p)->shape();
    bool ok = true;
    for (std::size_t i = 0; i < D; ++i) ok = ok && ps[i] == (i < D - k ? 1 : s[i]);
    if (!ok) {
      throw_error<ShapeError>(op, ": ", p == &weight ? "weight" : "bias", " must have shape ",
                              dims_string(normalized_shape), " (normalized_shape)");
    }
  }
  E mean = x;
  for (std::size_t i = 0; i < k; ++i) mean = mean.mean_dim(static_cast<std::int64_t>(D - 1 - i));
  const auto centered = x - mean;
  E var = centered * centered;
  for (std::size_t i = 0; i < k; ++i) var = var.mean_dim(static_cast<std::int64_t>(D - 1 - i));
  auto y = centered / (var + epsilon).sqrt();
  if (weight) y = y * *weight;
  if (bias) y = y + *bias;
  return y;
}

/// group_norm of an input of rank >= 2, rank-erased (the typed function is a wrapper).
template <Backend B>
kiln::detail::ErasedFloat<B> group_norm_erased(
    const kiln::detail::ErasedFloat<B>& x, std::int64_t num_groups,
    const std::optional<kiln::detail::ErasedFloat<B>>& weight,
    const std::optional<kiln::detail::ErasedFloat<B>>& bias, double epsilon) {
  const char* op = "group_norm";
  check_epsilon(op, epsilon);
  const Shape s = x.shape();
  const std::int64_t channels = s[1];
  if (num_groups < 1 || channels % num_groups != 0) {
    throw_error<ValueError>(op, ": num_groups must be >= 1 and divide the ", channels,
                            " channels of input ", s, ", got ", num_groups);
  }
  if (weight) check_per_channel(op, "weight", weight->shape(), channels);
  if (bias) check_per_channel(op, "bias", bias->shape(), channels);
  const std::array<std::int64_t, 3> grouped_dims{s[0], num_groups, -1};
  const auto grouped = x.reshape(grouped_dims);
  const auto [var, mean] = grouped.var_mean(2, /*unbiased=*/false);
  auto y = ((grouped - mean) / (var + epsilon).sqrt()).reshape(s.dims());
  const std::vector<std::int64_t> pc = per_channel_dims(s.rank(), channels);
  if (weight) y = y * weight->reshape(pc);
  if (bias) y = y + bias->reshape(pc);
  return y;
}

/// batch_norm's result, rank-erased.
template <Backend B>
struct BatchNormErased {
  kiln::detail::ErasedFloat<B> output;
  std::optional<kiln::detail::ErasedFloat<B>> running_mean;
  std::optional<kiln::detail::ErasedFloat<B>> running_var;
};

/// batch_norm of an input of rank 2 to 5, rank-erased (the typed function is a wrapper).
template <Backend B>
BatchNormErased<B> batch_norm_erased(const kiln::detail::ErasedFloat<B>& x,
                                     const std::optional<kiln::detail::ErasedFloat<B>>& running_mean,
                                     const std::optional<kiln::detail::ErasedFloat<B>>& running_var,
                                     const std::optional<kiln::detail::ErasedFloat<B>>& weight,
                                     const std::optional<kiln::detail::ErasedFloat<B>>& bias,
                                     bool training, double momentum, double epsilon) {
  using E = kiln::detail::ErasedFloat<B>;
  const char* op = "batch_norm";
  check_epsilon(op, epsilon);
  if (!(momentum >= 0.0 && momentum <= 1.0)) {
    throw_error<ValueError>(op, ": momentum must be in [0, 1], got ", momentum);
  }
  const Shape s = x.shape();
  const std::size_t D = s.rank();
  const std::int64_t c = s[1];
  if (running_mean) check_per_channel(op, "running_mean", running_mean->shape(), c);
  if (running_var) check_per_channel(op, "running_var", running_var->shape(), c);
  if (weight) check_per_channel(op, "weight", weight->shape(), c);
  if (bias) check_per_channel(op, "bias", bias->shape(), c);
  if (running_mean.has_value() != running_var.has_value()) {
    throw_error<ValueError>(op, ": give both running_mean and running_var, or neither");
  }
  BatchNormErased<B> out{x, running_mean, running_var};
  E y = x;
  const std::vector<std::int64_t> pc = per_channel_dims(D, c);
  if (training || !running_mean) {
    const std::int64_t n = s.num_elements() / (c > 0 ? c : 1);
    if (n <= 1) {
      throw_error<ShapeError>(op,
                              ": expected more than 1 value per channel when training, "
                              "got input ",
                              s);
    }
    E mean = x.mean_dim(0);
    for (std::size_t d = 2; d < D; ++d) mean = mean.mean_dim(static_cast<std::int64_t>(d));
    const auto centered = x - mean;
    E var = (centered * centered).mean_dim(0);
    for (std::size_t d = 2; d < D; ++d) var = var.mean_dim(static_cast<std::int64_t>(d));
    y = centered / (var + epsilon).sqrt();
    if (running_mean) {
      const std::array<std::int64_t, 1> flat{c};
      const auto batch_mean = mean.untracked().reshape(flat);
      const auto batch_var = var.untracked().reshape(flat) *
                             (static_cast<double>(n) / static_cast<double>(n - 1));
      out.running_mean = running_mean->untracked() * (1.0 - momentum) + batch_mean * momentum;
      out.running_var = running_var->untracked() * (1.0 - momentum) + batch_var * momentum;
    }
  } else {
    y = (x - running_mean->reshape(pc)) / (running_var->reshape(pc) + epsilon).sqrt();
  }
  if (weight) y = y * weight->reshape(pc);
  if (bias) y = y + bias->reshape(pc);
  out.output = y;
  return out;
}
}  // namespace detail

/// Layer normalisation over the trailing dims `normalized_shape` (1 to D dims):
/// (x - mean)/sqrt(var + epsilon)·weight + bias, var biased.
/// Shapes:    x [..., normalized_shape], weight and bias [normalized_shape] given as rank D
///            tensors [1, ..., 1, normalized_shape] (or nullopt) -> x's shape.
/// Throws:    ShapeError if x's trailing dims are not normalized_shape or weight/bias do not
///            have its shape; ValueError for epsilon < 0.
/// Semantics: torch.nn.functional.layer_norm.
template <Backend B, std::size_t D>
Tensor<B, D> layer_norm(const Tensor<B, D>& x, const std::vector<std::int64_t>& normalized_shape,
                        const std::optional<Tensor<B, D>>& weight,
                        const std::optional<Tensor<B, D>>& bias, double epsilon) {
  using E = kiln::detail::ErasedFloat<B>;
  return detail::layer_norm_erased<B>(E(x), D, normalized_shape,
                                      weight ? std::optional<E>(E(*weight)) : std::nullopt,
                                      bias ? std::optional<E>(E(*bias)) : std::nullopt, epsilon)
      .template typed<D>();
}

/// Group normalisation: the channels of each sample split into num_groups groups, each
/// normalised over its channels and positions (biased var), then weight·y + bias per channel.
/// Shapes:    x [batch_size, channels, ...] (rank D >= 2), weight and bias [channels] ->
///            x's shape.
/// Throws:    ValueError if num_groups < 1 or does not divide channels, or epsilon < 0;
///            ShapeError if weight or bias is not [channels].
/// Semantics: torch.nn.functional.group_norm.
template <Backend B, std::size_t D>
Tensor<B, D> group_norm(const Tensor<B, D>& x, std::int64_t num_groups,
                        const std::optional<Tensor<B, 1>>& weight,
                        const std::optional<Tensor<B, 1>>& bias, double epsilon) {
  static_assert(D >= 2, "group_norm: input rank must be >= 2");
  using E = kiln::detail::ErasedFloat<B>;
  return detail::group_norm_erased<B>(E(x), num_groups,
                                      weight ? std::optional<E>(E(*weight)) : std::nullopt,
                                      bias ? std::optional<E>(E(*bias)) : std::nullopt, epsilon)
      .template typed<D>();
}

/// What batch_norm returns: the output, and the running statistics after it (updated in
/// training mode, as PyTorch updates its buffers in place; the given ones otherwise).
template <Backend B, std::size_t D>
struct BatchNormOutput {
  Tensor<B, D> output;
  std::optional<Tensor<B, 1>> running_mean;
  std::optional<Tensor<B, 1>> running_var;
};

/// Batch normalisation over channel dim 1. Training (or no running statistics): the batch's
/// mean and biased variance normalise, and the running statistics move:
///   running = (1 - momentum)·running + momentum·batch (running_var with the unbiased
///   variance, n/(n - 1)); untracked.
/// Inference: running_mean and running_var normalise.
/// Shapes:    x [batch_size, channels, ...] (rank D in 2..5), running_mean, running_var,
///            weight, bias [channels] -> output x's shape, statistics [channels].
/// Throws:    ShapeError if a statistic or parameter is not [channels], or training with one
///            value per channel; ValueError for momentum outside [0, 1] or epsilon < 0, or
///            inference without running statistics.
/// Semantics: torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias,
///            training, momentum, eps).
template <Backend B, std::size_t D>
BatchNormOutput<B, D> batch_norm(const Tensor<B, D>& x,
                                 const std::optional<Tensor<B, 1>>& running_mean,
                                 const std::optional<Tensor<B, 1>>& running_var,
                                 const std::optional<Tensor<B, 1>>& weight,
                                 const std::optional<Tensor<B, 1>>& bias, bool training,
                                 double momentum, double epsilon) {
  static_assert(D >= 2 && D <= 5, "batch_norm: input rank must be 2 to 5");
  using E = kiln::detail::ErasedFloat<B>;
  auto erase = [](const std::optional<Tensor<B, 1>>& t) {
    return t ? std::optional<E>(E(*t)) : std::nullopt;
  };
  auto typed = [](std::optional<E> t) {
    return t ? std::optional<Tensor<B, 1>>(std::move(*t).template typed<1>()) : std::nullopt;
  };
  auto out = detail::batch_norm_erased<B>(E(x), erase(running_mean), erase(running_var),
                                          erase(weight), erase(bias), training, momentum,
                                          epsilon);
  return BatchNormOutput<B, D>{std::move(out.output).template typed<D>(),
                               typed(std::move(out.running_mean)),
                               typed(std::move(out.running_var))};
}

}  // namespace kiln::nn::functional
