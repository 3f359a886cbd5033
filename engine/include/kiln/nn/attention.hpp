#pragma once
/// Multi-head attention (Burn's `nn::attention::MultiHeadAttention`, PyTorch's
/// nn.MultiheadAttention with batch_first=True; Vaswani et al. 2017, "Attention Is All You
/// Need", https://arxiv.org/abs/1706.03762), its config, input and output.
///
///   auto mha = nn::MultiHeadAttentionConfig(/*d_model=*/64, /*n_heads=*/4).init<Cpu>();
///   auto out = mha.forward(nn::MhaInput<Cpu>::self_attn(x));     // x [batch, seq, 64]
///   out.context;  // [batch, seq, 64]     out.weights;  // [batch, seq, seq]
///
/// Parameters are PyTorch's (they are the record keys): `in_proj_weight [3·d_model,
/// d_model]` (rows W_q | W_k | W_v), `in_proj_bias [3·d_model]`, `out_proj.weight
/// [d_model, d_model]`, `out_proj.bias [d_model]`. Heads take contiguous slices of
/// head_dim = d_model / n_heads features of the projections; scores are scaled by
/// 1/sqrt(head_dim).
///
/// Masks follow PyTorch's boolean convention (and Burn's): true = the key is NOT attended.
/// A query whose keys are all masked gives PyTorch 1.13's answer: softmax over -inf only is
/// 0/0, so its weights and its context row are nan (later PyTorch's
/// scaled_dot_product_attention and ONNX flush them to 0; Kiln keeps 1.13's nan, see the
/// reference case mha_fully_masked_row).
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/initializer.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/dropout.hpp"
#include "kiln/nn/linear.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/activation.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

/// The causal mask of Burn's `generate_autoregressive_mask`: true above the diagonal, so
/// query i attends keys 0..i only (torch.nn.Transformer.generate_square_subsequent_mask,
/// as booleans).
/// Shapes: -> [batch_size, seq_length, seq_length] (Bool).
/// Throws: ValueError if batch_size < 1 or seq_length < 1; LimitError if too large.
template <Backend B>
Tensor<B, 3, Bool> generate_autoregressive_mask(std::int64_t batch_size, std::int64_t seq_length,
                                                const Device<B>& device = {}) {
  constexpr std::string_view op = "generate_autoregressive_mask";
  if (batch_size < 1 || seq_length < 1) {
    throw_error<ValueError>(op, ": batch_size and seq_length must be >= 1, got batch_size = ",
                            batch_size, ", seq_length = ", seq_length);
  }
  checked::numel(op, std::array<std::int64_t, 3>{batch_size, seq_length, seq_length},
                 "mask shape");
  std::vector<bool> values(static_cast<std::size_t>(seq_length * seq_length));
  for (std::int64_t i = 0; i < seq_length; ++i) {
    for (std::int64_t j = i + 1; j < seq_length; ++j) {
      values[static_cast<std::size_t>(i * seq_length + j)] = true;
    }
  }
  const auto one = Tensor<B, 3, Bool>::from_data(
      TensorData(Shape{1, seq_length, seq_length}, std::move(values)), device);
  if (batch_size == 1) return one;
  return one.repeat_dim(0, batch_size);
}

/// The input of MultiHeadAttention::forward (Burn's MhaInput).
template <Backend B>
struct MhaInput {
  Tensor<B, 3> query;  ///< [batch_size, seq_q, d_model]
  Tensor<B, 3> key;    ///< [batch_size, seq_k, d_model]
  Tensor<B, 3> value;  ///< [batch_size, seq_k, d_model]
  /// [batch_size, seq_k], true = ignore that key (PyTorch's key_padding_mask).
  std::optional<Tensor<B, 2, Bool>> mask_pad;
  /// [batch_size, seq_q, seq_k] or [1, seq_q, seq_k] (every item), true = query i does not
  /// attend key j (PyTorch's boolean attn_mask; Burn's mask_attn).
  std::optional<Tensor<B, 3, Bool>> mask_attn;

  /// Cross-attention: query attends key/value (Burn's MhaInput::new).
  MhaInput(Tensor<B, 3> query, Tensor<B, 3> key, Tensor<B, 3> value)
      : query(std::move(query)), key(std::move(key)), value(std::move(value)) {}
  /// Self-attention: query = key = value = x (Burn's MhaInput::self_attn).
  static MhaInput self_attn(const Tensor<B, 3>& x) { return MhaInput(x, x, x); }

  /// The same input with a key-padding mask [batch_size, seq_k] (true = ignore the key).
  MhaInput with_mask_pad(Tensor<B, 2, Bool> mask) const {
    auto c = *this;
    c.mask_pad = std::move(mask);
    return c;
  }
  /// The same input with an attention mask [batch_size or 1, seq_q, seq_k] (true = masked).
  MhaInput with_mask_attn(Tensor<B, 3, Bool> mask) const {
    auto c = *this;
    c.mask_attn = std::move(mask);
    return c;
  }
  /// The same input with one attention mask [seq_q, seq_k] for every item (PyTorch's 2-D
  /// attn_mask).
  MhaInput with_mask_attn(const Tensor<B, 2, Bool>& mask) const {
    return with_mask_attn(mask.template unsqueeze<3>());
  }
};

/// The output of MultiHeadAttention::forward (Burn's MhaOutput).
template <Backend B>
struct MhaOutput {
  Tensor<B, 3> context;  ///< [batch_size, seq_q, d_model]
  /// [batch_size, seq_q, seq_k]: the attention weights averaged over the heads (PyTorch's
  /// need_weights=True, average_attn_weights=True), after dropout as PyTorch 1.13.
  Tensor<B, 3> weights;
};

namespace detail {

/// Attention of MultiHeadAttention and the transformers: projections, per-head scaled dot
/// products, masks, softmax over keys, dropout on the weights, output projection.
/// Returns the context [batch, seq_q, d_model] and the per-head weights
/// [batch, n_heads, seq_q, seq_k].
/// Throws: ShapeError naming `op` for inputs or masks of the wrong shape.
template <Backend B>
std::pair<Tensor<B, 3>, Tensor<B, 4>> mha_attention(
    std::string_view op, const Tensor<B, 2>& in_proj_weight,
    const std::optional<module::Param<Tensor<B, 1>>>& in_proj_bias, const Linear<B>& out_proj,
    std::int64_t n_heads, double dropout, const MhaInput<B>& in) {
  const std::int64_t d_model = in_proj_weight.shape()[1];
  const Shape qs = in.query.shape(), ks = in.key.shape(), vs = in.value.shape();
  if (qs[2] != d_model) {
    throw_error<ShapeError>(
        op, ": expected query [batch_size, seq_q, d_model] with d_model = ", d_model, ", got ", qs);
  }
  if (ks[0] != qs[0] || ks[2] != d_model || vs != ks) {
    throw_error<ShapeError>(op,
                            ": expected key and value [batch_size, seq_k, d_model] with "
                            "batch_size = ",
                            qs[0], " and d_model = ", d_model, ", got key ", ks, ", value ", vs);
  }
  const std::int64_t batch = qs[0], seq_q = qs[1], seq_k = ks[1];
  const std::int64_t head_dim = d_model / n_heads;
  checked::numel(op, std::array<std::int64_t, 4>{batch, n_heads, seq_q, seq_k},
                 "attention scores [batch_size, n_heads, seq_q, seq_k]");
  if (in.mask_pad && in.mask_pad->shape() != Shape{batch, seq_k}) {
    throw_error<ShapeError>(op, ": expected mask_pad [batch_size, seq_k] = [", batch, ", ", seq_k,
                            "], got ", in.mask_pad->shape());
  }
  if (in.mask_attn) {
    const Shape ms = in.mask_attn->shape();
    if ((ms[0] != batch && ms[0] != 1) || ms[1] != seq_q || ms[2] != seq_k) {
      throw_error<ShapeError>(op, ": expected mask_attn [batch_size, seq_q, seq_k] = [", batch,
                              ", ", seq_q, ", ", seq_k, "] (or batch_size 1), got ", ms);
    }
  }

  // One projection per role: x·W_roleᵀ + b_role, then [batch, seq, heads, head_dim] ->
  // [batch, heads, seq, head_dim].
  const auto project = [&](const Tensor<B, 3>& x, std::int64_t role) {
    const std::int64_t seq = x.shape()[1];
    auto flat = x.template reshape<2>(std::array<std::int64_t, 2>{batch * seq, d_model});
    auto y = flat.matmul_transposed(in_proj_weight.narrow(0, role * d_model, d_model), false,
                                    true);
    if (in_proj_bias) {
      y = std::move(y) +
          in_proj_bias->val().narrow(0, role * d_model, d_model).template unsqueeze<2>();
    }
    return std::move(y)
        .template reshape<4>(std::array<std::int64_t, 4>{batch, seq, n_heads, head_dim})
        .swap_dims(1, 2);
  };
  // PyTorch 1.13 scales the query before the product.
  const auto q = project(in.query, 0) * (1.0 / std::sqrt(static_cast<double>(head_dim)));
  const auto k = project(in.key, 1);
  const auto v = project(in.value, 2);

  auto scores = q.matmul_transposed(k, false, true);  // [batch, heads, seq_q, seq_k]
  if (in.mask_pad || in.mask_attn) {
    std::optional<Tensor<B, 4, Bool>> mask;
    if (in.mask_pad) {
      mask = in.mask_pad->template reshape<4>(std::array<std::int64_t, 4>{batch, 1, 1, seq_k});
    }
    if (in.mask_attn) {
      auto m = in.mask_attn->template unsqueeze_dim<4>(1);  // [batch|1, 1, seq_q, seq_k]
      mask = mask ? mask->bool_or(m) : m;
    }
    scores = scores.mask_fill(*mask, -std::numeric_limits<float>::infinity());
  }
  auto weights = activation::softmax(std::move(scores), 3);
  if (dropout > 0.0) weights = Dropout{dropout}.forward(std::move(weights));
  auto context = weights.matmul(v)  // [batch, heads, seq_q, head_dim]
                     .swap_dims(1, 2)
                     .template reshape<3>(std::array<std::int64_t, 3>{batch, seq_q, d_model});
  return {out_proj.forward(context), std::move(weights)};
}

}  // namespace detail

template <Backend B>
struct MultiHeadAttention;

/// Configuration of MultiHeadAttention (Burn's MultiHeadAttentionConfig).
struct MultiHeadAttentionConfig {
  std::int64_t d_model;  ///< features of query, key, value and output (PyTorch's embed_dim)
  std::int64_t n_heads;  ///< heads; must divide d_model (PyTorch's num_heads)
  double dropout = 0.1;  ///< dropout probability on the attention weights while training
  bool bias = true;      ///< learn in_proj_bias and out_proj.bias

  MultiHeadAttentionConfig(std::int64_t d_model, std::int64_t n_heads)
      : d_model(d_model), n_heads(n_heads) {}
  KILN_CONFIG(MultiHeadAttentionConfig, (d_model, n_heads), (dropout, bias))

  /// Throws: ConfigError if d_model < 1, n_heads < 1, n_heads does not divide d_model, or
  ///         dropout is outside [0, 1]; LimitError if the weights are too large.
  void check() const {
    if (d_model < 1 || n_heads < 1 || d_model % n_heads != 0) {
      throw_error<ConfigError>(
          "MultiHeadAttentionConfig::init: d_model must be a positive "
          "multiple of n_heads, got d_model = ",
          d_model, ", n_heads = ", n_heads);
    }
    if (!(dropout >= 0.0 && dropout <= 1.0)) {
      throw_error<ConfigError>("MultiHeadAttentionConfig::init: dropout must be in [0, 1], got ",
                               dropout);
    }
    checked::numel("MultiHeadAttentionConfig::init",
                   std::array<std::int64_t, 2>{checked::mul("MultiHeadAttentionConfig::init", 3,
                                                            d_model, "3·d_model"),
                                               d_model},
                   "in_proj_weight shape");
  }

  /// PyTorch's initialisation: in_proj_weight Xavier-uniform, out_proj.weight as a Linear
  /// (U(-k, k), k = 1/sqrt(d_model)), biases zero.
  /// Throws: ConfigError as check().
  template <Backend B>
  MultiHeadAttention<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential ("multi_head_attention"): self-attention over items [seq_length,
/// d_model] (activations [batch_size, seq_length, d_model]); the items keep their shape.
template <>
struct SequentialRules<MultiHeadAttentionConfig> {
  static SequentialItem item_shape(const MultiHeadAttentionConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    if (in.dims && in.dims->size() != 2) {
      throw_error<ConfigError>(at,
                               "expects input [batch_size, seq_length, d_model] but the "
                               "previous layer outputs ",
                               in.describe());
    }
    if (const auto last = in.last_dim(); last && *last != c.d_model) {
      throw_error<ConfigError>(at, "d_model is ", c.d_model, " but the previous layer outputs ",
                               in.describe());
    }
    return in;
  }
};
KILN_REGISTER_LAYER(MultiHeadAttentionConfig, "multi_head_attention");

/// Multi-head scaled dot-product attention (see the file comment): per head h,
/// softmax(q_h·k_hᵀ/sqrt(head_dim) + mask)·v_h, the heads concatenated and projected by
/// out_proj. Dropout on the weights only while training (an autodiff backend).
template <Backend B>
struct MultiHeadAttention {
  module::Param<Tensor<B, 2>> in_proj_weight;               ///< [3·d_model, d_model]
  std::optional<module::Param<Tensor<B, 1>>> in_proj_bias;  ///< [3·d_model]
  Linear<B> out_proj;                                       ///< d_model -> d_model
  std::int64_t n_heads = 1;
  double dropout = 0.0;

  KILN_MODULE(MultiHeadAttention, in_proj_weight, in_proj_bias, out_proj, n_heads, dropout)

  std::int64_t d_model() const { return in_proj_weight.shape()[1]; }

  /// Shapes: query [batch_size, seq_q, d_model], key and value [batch_size, seq_k, d_model],
  ///         mask_pad [batch_size, seq_k], mask_attn [batch_size or 1, seq_q, seq_k]
  ///         -> context [batch_size, seq_q, d_model], weights [batch_size, seq_q, seq_k].
  /// Throws: ShapeError if a shape does not fit (naming MultiHeadAttention::forward);
  ///         LimitError if the scores [batch_size, n_heads, seq_q, seq_k] are too large.
  MhaOutput<B> forward(const MhaInput<B>& input) const {
    auto [context, weights] =
        detail::mha_attention("MultiHeadAttention::forward", in_proj_weight.val(), in_proj_bias,
                              out_proj, n_heads, dropout, input);
    return {std::move(context), weights.mean_dim(1).template squeeze_dim<3>(1)};
  }

  /// As forward, with the weights of every head: [batch_size, n_heads, seq_q, seq_k]
  /// (PyTorch's average_attn_weights=False).
  std::pair<Tensor<B, 3>, Tensor<B, 4>> forward_per_head(const MhaInput<B>& input) const {
    return detail::mha_attention("MultiHeadAttention::forward", in_proj_weight.val(),
                                 in_proj_bias, out_proj, n_heads, dropout, input);
  }

  /// Inside a Sequential: self-attention without masks.
  /// Shapes: [batch_size, seq_length, d_model] -> the same shape.
  Tensor<B, 3> sequential_forward(const Tensor<B, 3>& x) const {
    return forward(MhaInput<B>::self_attn(x)).context;
  }

  /// `d_model: 64, n_heads: 4, dropout: 0.1, bias: true`
  void describe_fields(::kiln::StrOut& out) const {
    out << "d_model: " << (in_proj_weight.is_initialized() ? d_model() : 0)
        << ", n_heads: " << n_heads << ", dropout: " << dropout
        << ", bias: " << (in_proj_bias ? "true" : "false");
  }
};

template <Backend B>
MultiHeadAttention<B> MultiHeadAttentionConfig::init(const Device<B>& device) const {
  check();
  MultiHeadAttention<B> out;
  out.n_heads = n_heads;
  out.dropout = dropout;
  out.in_proj_weight = module::Param<Tensor<B, 2>>(Initializer::xavier_uniform().init<B, 2>(
      Shape{3 * d_model, d_model}, d_model, 3 * d_model, device));
  if (bias) {
    out.in_proj_bias =
        module::Param<Tensor<B, 1>>(Tensor<B, 1>::zeros(Shape{3 * d_model}, device));
  }
  out.out_proj = LinearConfig(d_model, d_model).with_bias(bias).init<B>(device);
  if (bias) out.out_proj.bias->set(Tensor<B, 1>::zeros(Shape{d_model}, device));
  return out;
}

}  // namespace kiln::nn
