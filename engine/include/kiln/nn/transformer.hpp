#pragma once
/// Transformer blocks (Vaswani et al. 2017, https://arxiv.org/abs/1706.03762):
/// PositionWiseFeedForward (Burn's), TransformerEncoder and TransformerDecoder (Burn's
/// names and configs; PyTorch's nn.TransformerEncoder(layer, n) / nn.TransformerDecoder
/// (layer, n) with batch_first=True and norm=None for semantics and record keys:
/// `layers.0.self_attn.in_proj_weight`, `layers.0.linear1.weight`, `layers.0.norm1.weight`,
/// decoder `layers.0.multihead_attn.*`, `layers.0.norm3.*`).
///
///   auto enc = nn::TransformerEncoderConfig(/*d_model=*/64, /*d_ff=*/256, /*n_heads=*/4,
///                                           /*n_layers=*/2).init<Cpu>();
///   auto y = enc.forward(nn::TransformerEncoderInput<Cpu>(x));  // [batch, seq, 64] -> same
///
/// A layer, post-norm (norm_first = false, PyTorch's default and the paper's):
///   x = norm1(x + dropout1(self_attn(x)));  x = norm2(x + dropout2(ff(x)))
/// pre-norm (norm_first = true):
///   x = x + dropout1(self_attn(norm1(x)));  x = x + dropout2(ff(norm2(x)))
/// with ff(x) = linear2(dropout(act(linear1(x)))). The decoder adds cross-attention on the
/// memory (multihead_attn, norm2) before the feed-forward block (norm3). Dropout is active
/// only while training (an autodiff backend), as nn::Dropout.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/nn/attention.hpp"
#include "kiln/nn/dropout.hpp"
#include "kiln/nn/layer_norm.hpp"
#include "kiln/nn/linear.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/activation.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

namespace detail {
/// Throws ConfigError naming `op` unless activation is "relu" or "gelu".
inline void check_transformer_activation(std::string_view op, const std::string& activation) {
  if (activation != "relu" && activation != "gelu") {
    throw_error<ConfigError>(op, ": activation must be \"relu\" or \"gelu\", got \"", activation,
                             "\"");
  }
}
/// relu(x) or gelu(x) (exact erf form, as torch's "gelu").
template <Backend B, std::size_t D>
Tensor<B, D> transformer_activation(const std::string& activation, Tensor<B, D> x) {
  return activation == "relu" ? activation::relu(std::move(x)) : activation::gelu(std::move(x));
}
/// Dropout with probability p (the identity when p = 0 or at inference).
template <Backend B, std::size_t D>
Tensor<B, D> transformer_dropout(double p, Tensor<B, D> x) {
  return p > 0.0 ? Dropout{p}.forward(std::move(x)) : x;
}
/// Throws ConfigError naming `op` for sizes < 1, n_heads not dividing d_model, dropout outside
/// [0, 1] or layer_norm_eps < 0.
inline void check_transformer_sizes(std::string_view op, std::int64_t d_model, std::int64_t d_ff,
                                    std::int64_t n_heads, std::int64_t n_layers, double dropout,
                                    double layer_norm_eps, const std::string& activation) {
  if (d_model < 1 || d_ff < 1 || n_heads < 1 || n_layers < 1 || d_model % n_heads != 0) {
    throw_error<ConfigError>(op,
                             ": d_model, d_ff, n_heads and n_layers must be >= 1 and "
                             "n_heads must divide d_model, got d_model = ",
                             d_model, ", d_ff = ", d_ff, ", n_heads = ", n_heads,
                             ", n_layers = ", n_layers);
  }
  if (!(dropout >= 0.0 && dropout <= 1.0)) {
    throw_error<ConfigError>(op, ": dropout must be in [0, 1], got ", dropout);
  }
  if (!(layer_norm_eps >= 0.0)) {
    throw_error<ConfigError>(op, ": layer_norm_eps must be >= 0, got ", layer_norm_eps);
  }
  check_transformer_activation(op, activation);
  LinearConfig(d_model, d_ff).check();
}
}  // namespace detail

// ---------------------------------------------------------------- PositionWiseFeedForward

template <Backend B>
struct PositionWiseFeedForward;

/// Configuration of PositionWiseFeedForward (Burn's PositionWiseFeedForwardConfig).
struct PositionWiseFeedForwardConfig {
  std::int64_t d_model;             ///< input and output features
  std::int64_t d_ff;                ///< hidden features
  double dropout = 0.1;             ///< dropout after the activation, while training
  std::string activation = "gelu";  ///< "gelu" (Burn's default) or "relu"

  PositionWiseFeedForwardConfig(std::int64_t d_model, std::int64_t d_ff)
      : d_model(d_model), d_ff(d_ff) {}
  KILN_CONFIG(PositionWiseFeedForwardConfig, (d_model, d_ff), (dropout, activation))

  /// Throws: ConfigError if d_model or d_ff < 1, dropout outside [0, 1] or an unknown
  ///         activation.
  void check() const {
    detail::check_transformer_sizes("PositionWiseFeedForwardConfig::init", d_model, d_ff, 1, 1,
                                    dropout, 0.0, activation);
  }
  /// Linear layers initialised as nn::Linear. Throws: ConfigError as check().
  template <Backend B>
  PositionWiseFeedForward<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential ("position_wise_feed_forward"): the last dim must be d_model; kept.
template <>
struct SequentialRules<PositionWiseFeedForwardConfig> {
  static SequentialItem item_shape(const PositionWiseFeedForwardConfig& c,
                                   const SequentialItem& in, std::string_view at) {
    if (const auto last = in.last_dim(); last && *last != c.d_model) {
      throw_error<ConfigError>(at, "d_model is ", c.d_model, " but the previous layer outputs ",
                               in.describe());
    }
    return in;
  }
  static SequentialInputSize input_item_size(const PositionWiseFeedForwardConfig& c) {
    return SequentialInputSize::fixed(c.d_model);
  }
};
KILN_REGISTER_LAYER(PositionWiseFeedForwardConfig, "position_wise_feed_forward");

/// linear_outer(dropout(act(linear_inner(x)))) (Burn's PositionWiseFeedForward; the
/// transformer's feed-forward block). Keys `linear_inner.*`, `linear_outer.*` (Burn's).
template <Backend B>
struct PositionWiseFeedForward {
  Linear<B> linear_inner;  ///< d_model -> d_ff
  Linear<B> linear_outer;  ///< d_ff -> d_model
  double dropout = 0.1;
  std::string activation = "gelu";

  KILN_MODULE(PositionWiseFeedForward, linear_inner, linear_outer, dropout, activation)

  /// Shapes: [..., d_model] -> [..., d_model].
  /// Throws: ShapeError if the last dim is not d_model.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    auto h = detail::transformer_activation(activation, linear_inner.forward(input));
    return linear_outer.forward(detail::transformer_dropout(dropout, std::move(h)));
  }

  /// `d_model: 64, d_ff: 256, dropout: 0.1, activation: gelu`
  void describe_fields(::kiln::StrOut& out) const {
    out << "d_model: " << linear_inner.d_input() << ", d_ff: " << linear_inner.d_output()
        << ", dropout: " << dropout << ", activation: " << activation;
  }
};

template <Backend B>
PositionWiseFeedForward<B> PositionWiseFeedForwardConfig::init(const Device<B>& device) const {
  check();
  PositionWiseFeedForward<B> out;
  out.linear_inner = LinearConfig(d_model, d_ff).init<B>(device);
  out.linear_outer = LinearConfig(d_ff, d_model).init<B>(device);
  out.dropout = dropout;
  out.activation = activation;
  return out;
}

// ---------------------------------------------------------------- encoder

/// The input of TransformerEncoder::forward (Burn's TransformerEncoderInput).
template <Backend B>
struct TransformerEncoderInput {
  Tensor<B, 3> tensor;                          ///< [batch_size, seq_length, d_model]
  std::optional<Tensor<B, 2, Bool>> mask_pad;   ///< [batch_size, seq_length], true = padding
                                                ///< (PyTorch's src_key_padding_mask)
  std::optional<Tensor<B, 3, Bool>> mask_attn;  ///< [batch_size or 1, seq, seq], true =
                                                ///< masked (PyTorch's boolean src_mask)

  explicit TransformerEncoderInput(Tensor<B, 3> tensor) : tensor(std::move(tensor)) {}
  TransformerEncoderInput with_mask_pad(Tensor<B, 2, Bool> mask) const {
    auto c = *this;
    c.mask_pad = std::move(mask);
    return c;
  }
  TransformerEncoderInput with_mask_attn(Tensor<B, 3, Bool> mask) const {
    auto c = *this;
    c.mask_attn = std::move(mask);
    return c;
  }
  /// One mask [seq, seq] for every item (PyTorch's 2-D src_mask).
  TransformerEncoderInput with_mask_attn(const Tensor<B, 2, Bool>& mask) const {
    return with_mask_attn(mask.template unsqueeze<3>());
  }
};

/// One encoder layer (PyTorch's nn.TransformerEncoderLayer; see the file comment).
template <Backend B>
struct TransformerEncoderLayer {
  MultiHeadAttention<B> self_attn;
  Linear<B> linear1;  ///< d_model -> d_ff
  Linear<B> linear2;  ///< d_ff -> d_model
  LayerNorm<B> norm1;
  LayerNorm<B> norm2;
  double dropout = 0.1;
  bool norm_first = false;
  std::string activation = "gelu";

  KILN_MODULE(TransformerEncoderLayer, self_attn, linear1, linear2, norm1, norm2, dropout,
              norm_first, activation)

  /// Shapes: x [batch_size, seq_length, d_model], masks as TransformerEncoderInput -> x's.
  /// Throws: ShapeError as MultiHeadAttention::forward.
  Tensor<B, 3> forward(const Tensor<B, 3>& x, const std::optional<Tensor<B, 2, Bool>>& mask_pad,
                       const std::optional<Tensor<B, 3, Bool>>& mask_attn) const {
    const auto sa = [&](const Tensor<B, 3>& h) {
      MhaInput<B> in = MhaInput<B>::self_attn(h);
      in.mask_pad = mask_pad;
      in.mask_attn = mask_attn;
      auto ctx = detail::mha_attention("TransformerEncoder::forward", self_attn.in_proj_weight.val(),
                                       self_attn.in_proj_bias, self_attn.out_proj,
                                       self_attn.n_heads, self_attn.dropout, in)
                     .first;
      return detail::transformer_dropout(dropout, std::move(ctx));
    };
    const auto ff = [&](const Tensor<B, 3>& h) {
      auto a = detail::transformer_activation(activation, linear1.forward(h));
      auto y = linear2.forward(detail::transformer_dropout(dropout, std::move(a)));
      return detail::transformer_dropout(dropout, std::move(y));
    };
    if (norm_first) {
      auto h = x + sa(norm1.forward(x));
      return h + ff(norm2.forward(h));
    }
    auto h = norm1.forward(x + sa(x));
    return norm2.forward(h + ff(h));
  }
};

template <Backend B>
struct TransformerEncoder;

/// Configuration of TransformerEncoder (Burn's TransformerEncoderConfig).
struct TransformerEncoderConfig {
  std::int64_t d_model;             ///< features per position
  std::int64_t d_ff;                ///< hidden features of the feed-forward block
  std::int64_t n_heads;             ///< attention heads (divides d_model)
  std::int64_t n_layers;            ///< stacked layers
  double dropout = 0.1;             ///< dropout probability while training (everywhere)
  bool norm_first = false;          ///< pre-norm layers (true) or post-norm (PyTorch's default)
  std::string activation = "gelu";  ///< "gelu" (Burn's default) or "relu" (PyTorch's default)
  double layer_norm_eps = 1e-5;     ///< LayerNorm epsilon

  TransformerEncoderConfig(std::int64_t d_model, std::int64_t d_ff, std::int64_t n_heads,
                           std::int64_t n_layers)
      : d_model(d_model), d_ff(d_ff), n_heads(n_heads), n_layers(n_layers) {}
  KILN_CONFIG(TransformerEncoderConfig, (d_model, d_ff, n_heads, n_layers),
              (dropout, norm_first, activation, layer_norm_eps))

  /// Throws: ConfigError if a size is < 1, n_heads does not divide d_model, dropout is
  ///         outside [0, 1], layer_norm_eps < 0 or the activation is unknown.
  void check() const {
    detail::check_transformer_sizes("TransformerEncoderConfig::init", d_model, d_ff, n_heads,
                                    n_layers, dropout, layer_norm_eps, activation);
  }
  /// Weights initialised as PyTorch's layers (MultiHeadAttentionConfig::init, nn::Linear,
  /// LayerNorm ones/zeros). Throws: ConfigError as check().
  template <Backend B>
  TransformerEncoder<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential ("transformer_encoder"): items [seq_length, d_model], kept, no masks.
template <>
struct SequentialRules<TransformerEncoderConfig> {
  static SequentialItem item_shape(const TransformerEncoderConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return SequentialRules<MultiHeadAttentionConfig>::item_shape(
        MultiHeadAttentionConfig(c.d_model, c.n_heads), in, at);
  }
};
KILN_REGISTER_LAYER(TransformerEncoderConfig, "transformer_encoder");

/// A stack of n_layers encoder layers (see the file comment); no final norm (PyTorch's
/// norm=None, Burn's encoder).
template <Backend B>
struct TransformerEncoder {
  std::vector<TransformerEncoderLayer<B>> layers;
  KILN_MODULE(TransformerEncoder, layers)

  /// Shapes: tensor [batch_size, seq_length, d_model], mask_pad [batch_size, seq_length],
  ///         mask_attn [batch_size or 1, seq_length, seq_length] -> [batch_size,
  ///         seq_length, d_model].
  /// Throws: ShapeError if a shape does not fit.
  Tensor<B, 3> forward(const TransformerEncoderInput<B>& input) const {
    Tensor<B, 3> x = input.tensor;
    for (const auto& layer : layers) x = layer.forward(x, input.mask_pad, input.mask_attn);
    return x;
  }
  /// Inside a Sequential: no masks. Shapes: [batch_size, seq_length, d_model] -> same.
  Tensor<B, 3> sequential_forward(const Tensor<B, 3>& x) const {
    return forward(TransformerEncoderInput<B>(x));
  }

  /// `d_model: 64, d_ff: 256, n_heads: 4, n_layers: 2, ...`
  void describe_fields(::kiln::StrOut& out) const {
    if (layers.empty()) {
      out << "n_layers: 0";
      return;
    }
    const auto& l = layers[0];
    out << "d_model: " << l.linear1.d_input() << ", d_ff: " << l.linear1.d_output()
        << ", n_heads: " << l.self_attn.n_heads << ", n_layers: " << layers.size()
        << ", dropout: " << l.dropout << ", norm_first: " << (l.norm_first ? "true" : "false")
        << ", activation: " << l.activation;
  }
};

namespace detail {
template <Backend B>
LayerNorm<B> transformer_norm(std::int64_t d_model, double eps, const Device<B>& device) {
  auto c = LayerNormConfig(d_model);
  c.epsilon = eps;
  return c.init<B>(device);
}
}  // namespace detail

template <Backend B>
TransformerEncoder<B> TransformerEncoderConfig::init(const Device<B>& device) const {
  check();
  TransformerEncoder<B> out;
  for (std::int64_t i = 0; i < n_layers; ++i) {
    TransformerEncoderLayer<B> l;
    l.self_attn = MultiHeadAttentionConfig(d_model, n_heads).with_dropout(dropout).init<B>(device);
    l.linear1 = LinearConfig(d_model, d_ff).init<B>(device);
    l.linear2 = LinearConfig(d_ff, d_model).init<B>(device);
    l.norm1 = detail::transformer_norm<B>(d_model, layer_norm_eps, device);
    l.norm2 = detail::transformer_norm<B>(d_model, layer_norm_eps, device);
    l.dropout = dropout;
    l.norm_first = norm_first;
    l.activation = activation;
    out.layers.push_back(std::move(l));
  }
  return out;
}

// ---------------------------------------------------------------- decoder

/// The input of TransformerDecoder::forward (Burn's TransformerDecoderInput).
template <Backend B>
struct TransformerDecoderInput {
  Tensor<B, 3> target;  ///< [batch_size, seq_tgt, d_model]
  Tensor<B, 3> memory;  ///< [batch_size, seq_mem, d_model] (the encoder's output)
  std::optional<Tensor<B, 2, Bool>> target_mask_pad;   ///< [batch_size, seq_tgt] (tgt_key_padding_mask)
  std::optional<Tensor<B, 3, Bool>> target_mask_attn;  ///< [batch_size or 1, seq_tgt, seq_tgt] (tgt_mask)
  std::optional<Tensor<B, 2, Bool>> memory_mask_pad;   ///< [batch_size, seq_mem] (memory_key_padding_mask)
  std::optional<Tensor<B, 3, Bool>> memory_mask_attn;  ///< [batch_size or 1, seq_tgt, seq_mem] (memory_mask)

  TransformerDecoderInput(Tensor<B, 3> target, Tensor<B, 3> memory)
      : target(std::move(target)), memory(std::move(memory)) {}
  TransformerDecoderInput with_target_mask_pad(Tensor<B, 2, Bool> m) const {
    auto c = *this;
    c.target_mask_pad = std::move(m);
    return c;
  }
  TransformerDecoderInput with_target_mask_attn(Tensor<B, 3, Bool> m) const {
    auto c = *this;
    c.target_mask_attn = std::move(m);
    return c;
  }
  TransformerDecoderInput with_memory_mask_pad(Tensor<B, 2, Bool> m) const {
    auto c = *this;
    c.memory_mask_pad = std::move(m);
    return c;
  }
  TransformerDecoderInput with_memory_mask_attn(Tensor<B, 3, Bool> m) const {
    auto c = *this;
    c.memory_mask_attn = std::move(m);
    return c;
  }
};

/// One decoder layer (PyTorch's nn.TransformerDecoderLayer; see the file comment).
template <Backend B>
struct TransformerDecoderLayer {
  MultiHeadAttention<B> self_attn;
  MultiHeadAttention<B> multihead_attn;
  Linear<B> linear1;
  Linear<B> linear2;
  LayerNorm<B> norm1;
  LayerNorm<B> norm2;
  LayerNorm<B> norm3;
  double dropout = 0.1;
  bool norm_first = false;
  std::string activation = "gelu";

  KILN_MODULE(TransformerDecoderLayer, self_attn, multihead_attn, linear1, linear2, norm1, norm2,
              norm3, dropout, norm_first, activation)

  /// Shapes: x [batch_size, seq_tgt, d_model], in's memory and masks -> x's shape.
  Tensor<B, 3> forward(const Tensor<B, 3>& x, const TransformerDecoderInput<B>& in) const {
    constexpr std::string_view op = "TransformerDecoder::forward";
    const auto attend = [&](const MultiHeadAttention<B>& m, MhaInput<B> mi) {
      auto ctx = detail::mha_attention(op, m.in_proj_weight.val(), m.in_proj_bias, m.out_proj,
                                       m.n_heads, m.dropout, mi)
                     .first;
      return detail::transformer_dropout(dropout, std::move(ctx));
    };
    const auto sa = [&](const Tensor<B, 3>& h) {
      MhaInput<B> mi = MhaInput<B>::self_attn(h);
      mi.mask_pad = in.target_mask_pad;
      mi.mask_attn = in.target_mask_attn;
      return attend(self_attn, std::move(mi));
    };
    const auto ca = [&](const Tensor<B, 3>& h) {
      MhaInput<B> mi(h, in.memory, in.memory);
      mi.mask_pad = in.memory_mask_pad;
      mi.mask_attn = in.memory_mask_attn;
      return attend(multihead_attn, std::move(mi));
    };
    const auto ff = [&](const Tensor<B, 3>& h) {
      auto a = detail::transformer_activation(activation, linear1.forward(h));
      auto y = linear2.forward(detail::transformer_dropout(dropout, std::move(a)));
      return detail::transformer_dropout(dropout, std::move(y));
    };
    if (norm_first) {
      auto h = x + sa(norm1.forward(x));
      h = h + ca(norm2.forward(h));
      return h + ff(norm3.forward(h));
    }
    auto h = norm1.forward(x + sa(x));
    h = norm2.forward(h + ca(h));
    return norm3.forward(h + ff(h));
  }
};

template <Backend B>
struct TransformerDecoder;

/// Configuration of TransformerDecoder (Burn's TransformerDecoderConfig; fields as
/// TransformerEncoderConfig).
struct TransformerDecoderConfig {
  std::int64_t d_model;             ///< features per position
  std::int64_t d_ff;                ///< hidden features of the feed-forward block
  std::int64_t n_heads;             ///< attention heads (divides d_model)
  std::int64_t n_layers;            ///< stacked layers
  double dropout = 0.1;             ///< dropout probability while training (everywhere)
  bool norm_first = false;          ///< pre-norm layers (true) or post-norm (PyTorch's default)
  std::string activation = "gelu";  ///< "gelu" (Burn's default) or "relu" (PyTorch's default)
  double layer_norm_eps = 1e-5;     ///< LayerNorm epsilon

  TransformerDecoderConfig(std::int64_t d_model, std::int64_t d_ff, std::int64_t n_heads,
                           std::int64_t n_layers)
      : d_model(d_model), d_ff(d_ff), n_heads(n_heads), n_layers(n_layers) {}
  KILN_CONFIG(TransformerDecoderConfig, (d_model, d_ff, n_heads, n_layers),
              (dropout, norm_first, activation, layer_norm_eps))

  /// Throws: ConfigError as TransformerEncoderConfig::check().
  void check() const {
    detail::check_transformer_sizes("TransformerDecoderConfig::init", d_model, d_ff, n_heads,
                                    n_layers, dropout, layer_norm_eps, activation);
  }
  /// Throws: ConfigError as check().
  template <Backend B>
  TransformerDecoder<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential ("transformer_decoder"): the spec validates (a one-layer Sequential is
/// the JS factory's layer), but running it there throws: the decoder needs the memory.
template <>
struct SequentialRules<TransformerDecoderConfig> {
  static SequentialItem item_shape(const TransformerDecoderConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return SequentialRules<MultiHeadAttentionConfig>::item_shape(
        MultiHeadAttentionConfig(c.d_model, c.n_heads), in, at);
  }
};
KILN_REGISTER_LAYER(TransformerDecoderConfig, "transformer_decoder");

/// A stack of n_layers decoder layers (see the file comment); no final norm.
template <Backend B>
struct TransformerDecoder {
  std::vector<TransformerDecoderLayer<B>> layers;
  KILN_MODULE(TransformerDecoder, layers)

  /// Shapes: target [batch_size, seq_tgt, d_model], memory [batch_size, seq_mem, d_model],
  ///         masks as TransformerDecoderInput -> [batch_size, seq_tgt, d_model].
  /// Throws: ShapeError if a shape does not fit.
  Tensor<B, 3> forward(const TransformerDecoderInput<B>& input) const {
    Tensor<B, 3> x = input.target;
    for (const auto& layer : layers) x = layer.forward(x, input);
    return x;
  }
  /// Inside a Sequential there is no memory to attend.
  /// Throws: ConfigError always.
  Tensor<B, 3> sequential_forward(const Tensor<B, 3>&) const {
    throw_error<ConfigError>(
        "TransformerDecoder: cannot run inside a Sequential: its forward needs the memory "
        "(call forward(TransformerDecoderInput(target, memory)), in JS layer.forward(target, "
        "memory))");
  }

  /// `d_model: 64, d_ff: 256, n_heads: 4, n_layers: 2, ...`
  void describe_fields(::kiln::StrOut& out) const {
    if (layers.empty()) {
      out << "n_layers: 0";
      return;
    }
    const auto& l = layers[0];
    out << "d_model: " << l.linear1.d_input() << ", d_ff: " << l.linear1.d_output()
        << ", n_heads: " << l.self_attn.n_heads << ", n_layers: " << layers.size()
        << ", dropout: " << l.dropout << ", norm_first: " << (l.norm_first ? "true" : "false")
        << ", activation: " << l.activation;
  }
};

template <Backend B>
TransformerDecoder<B> TransformerDecoderConfig::init(const Device<B>& device) const {
  check();
  TransformerDecoder<B> out;
  const auto mha = MultiHeadAttentionConfig(d_model, n_heads).with_dropout(dropout);
  for (std::int64_t i = 0; i < n_layers; ++i) {
    TransformerDecoderLayer<B> l;
    l.self_attn = mha.init<B>(device);
    l.multihead_attn = mha.init<B>(device);
    l.linear1 = LinearConfig(d_model, d_ff).init<B>(device);
    l.linear2 = LinearConfig(d_ff, d_model).init<B>(device);
    l.norm1 = detail::transformer_norm<B>(d_model, layer_norm_eps, device);
    l.norm2 = detail::transformer_norm<B>(d_model, layer_norm_eps, device);
    l.norm3 = detail::transformer_norm<B>(d_model, layer_norm_eps, device);
    l.dropout = dropout;
    l.norm_first = norm_first;
    l.activation = activation;
    out.layers.push_back(std::move(l));
  }
  return out;
}

}  // namespace kiln::nn
