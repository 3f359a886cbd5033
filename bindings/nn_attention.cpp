// The attention layers' methods beyond forward(x) (bindings/js/nn_attention.ts): a
// single-layer RawModel holding a MultiHeadAttention, TransformerEncoder or
// TransformerDecoder, applied with query/key/value, memory and masks. One call per forward;
// the math is the engine's (kiln/nn/attention.hpp, transformer.hpp). In eval mode the
// layer runs on the inference backend (valid(), no dropout), as Sequential.forward.
#include <emscripten/bind.h>

#include <optional>
#include <utility>

#include "kiln/nn/attention.hpp"
#include "kiln/nn/transformer.hpp"
#include "train_common.hpp"

using emscripten::val;

namespace kiln_js {

namespace {

const ModelState& state_of(const JsModel& m) {
  if (!m.state) kiln::throw_error<kiln::StateError>("Sequential: the model was disposed");
  return *m.state;
}

/// The model's only layer as an L, or StateError/ConfigError naming `op`.
template <class L>
const L& single_layer(const ModelState& s, const char* op) {
  if (s.model.layers.size() == 1) {
    if (const L* l = s.model.layers[0].get_if<L>()) return *l;
  }
  kiln::throw_error<kiln::ConfigError>(op, ": the model is not a single layer of this type");
}

/// An optional Bool mask of rank D from a JS RawTensor, null or undefined.
template <std::size_t D>
std::optional<kiln::Tensor<AD, D, kiln::Bool>> mask_arg(const val& v, const char* op) {
  if (v.isNull() || v.isUndefined()) return std::nullopt;
  return to_typed<D, kiln::Bool>(v.as<JsTensor>(), op);
}

/// An attention mask [seq_q, seq_k] (every item) or [batch_size, seq_q, seq_k].
std::optional<kiln::Tensor<AD, 3, kiln::Bool>> attn_mask_arg(const val& v, const char* op) {
  if (v.isNull() || v.isUndefined()) return std::nullopt;
  const JsTensor t = v.as<JsTensor>();
  if (t.shape().rank() == 2) return to_typed<2, kiln::Bool>(t, op).unsqueeze<3>();
  return to_typed<3, kiln::Bool>(t, op);
}

/// A result tensor for JS: tracked in training mode with grad enabled, untracked otherwise.
template <std::size_t D>
JsTensor result(const kiln::Tensor<AD, D>& t) {
  if (!grad_enabled()) return JsTensor(Prim(t.primitive().primitive));
  return JsTensor(t.primitive());
}
template <std::size_t D>
JsTensor result(const kiln::Tensor<Inner, D>& t) {
  return from_typed(t);
}

/// Inputs of the inference backend (eval mode).
template <std::size_t D, class K>
kiln::Tensor<Inner, D, K> inner(const kiln::Tensor<AD, D, K>& t) {
  return t.inner();
}
template <std::size_t D, class K>
std::optional<kiln::Tensor<Inner, D, K>> inner(
    const std::optional<kiln::Tensor<AD, D, K>>& t) {
  if (!t) return std::nullopt;
  return t->inner();
}

/// [context, weights] of MultiHeadAttention::forward.
val mha_attend(const JsModel& m, const JsTensor& query, const JsTensor& key,
               const JsTensor& value, val mask_pad, val mask_attn) {
  return guarded([&] {
    constexpr const char* op = "MultiHeadAttention.attend";
    const ModelState& s = state_of(m);
    const auto& layer = single_layer<kiln::nn::MultiHeadAttention<AD>>(s, op);
    kiln::nn::MhaInput<AD> in(to_typed<3>(query, op), to_typed<3>(key, op),
                              to_typed<3>(value, op));
    in.mask_pad = mask_arg<2>(mask_pad, op);
    in.mask_attn = attn_mask_arg(mask_attn, op);
    val out = val::array();
    if (!s.training) {
      kiln::nn::MhaInput<Inner> ii(inner(in.query), inner(in.key), inner(in.value));
      ii.mask_pad = inner(in.mask_pad);
      ii.mask_attn = inner(in.mask_attn);
      auto r = layer.valid().forward(ii);
      out.call<void>("push", val(result(r.context)));
      out.call<void>("push", val(result(r.weights)));
      return out;
    }
    auto r = layer.forward(in);
    JsTensor context = result(r.context), weights = result(r.weights);
    out.call<void>("push", val(std::move(context)));
    out.call<void>("push", val(std::move(weights)));
    return out;
  });
}

/// TransformerEncoder::forward with optional masks.
JsTensor encoder_forward(const JsModel& m, const JsTensor& x, val mask_pad, val mask_attn) {
  return guarded([&] {
    constexpr const char* op = "TransformerEncoder.forward";
    const ModelState& s = state_of(m);
    const auto& layer = single_layer<kiln::nn::TransformerEncoder<AD>>(s, op);
    kiln::nn::TransformerEncoderInput<AD> in(to_typed<3>(x, op));
    in.mask_pad = mask_arg<2>(mask_pad, op);
    in.mask_attn = attn_mask_arg(mask_attn, op);
    if (!s.training) {
      kiln::nn::TransformerEncoderInput<Inner> ii(inner(in.tensor));
      ii.mask_pad = inner(in.mask_pad);
      ii.mask_attn = inner(in.mask_attn);
      return result(layer.valid().forward(ii));
    }
    return result(layer.forward(in));
  });
}

/// TransformerDecoder::forward(target, memory) with optional masks.
JsTensor decoder_forward(const JsModel& m, const JsTensor& target, const JsTensor& memory,
                         val target_mask_pad, val target_mask_attn, val memory_mask_pad,
                         val memory_mask_attn) {
  return guarded([&] {
    constexpr const char* op = "TransformerDecoder.forward";
    const ModelState& s = state_of(m);
    const auto& layer = single_layer<kiln::nn::TransformerDecoder<AD>>(s, op);
    kiln::nn::TransformerDecoderInput<AD> in(to_typed<3>(target, op), to_typed<3>(memory, op));
    in.target_mask_pad = mask_arg<2>(target_mask_pad, op);
    in.target_mask_attn = attn_mask_arg(target_mask_attn, op);
    in.memory_mask_pad = mask_arg<2>(memory_mask_pad, op);
    in.memory_mask_attn = attn_mask_arg(memory_mask_attn, op);
    if (!s.training) {
      kiln::nn::TransformerDecoderInput<Inner> ii(inner(in.target), inner(in.memory));
      ii.target_mask_pad = inner(in.target_mask_pad);
      ii.target_mask_attn = inner(in.target_mask_attn);
      ii.memory_mask_pad = inner(in.memory_mask_pad);
      ii.memory_mask_attn = inner(in.memory_mask_attn);
      return result(layer.valid().forward(ii));
    }
    return result(layer.forward(in));
  });
}

/// Burn's generate_autoregressive_mask: [batch_size, seq_length, seq_length] Bool.
JsTensor autoregressive_mask(double batch_size, double seq_length) {
  return guarded([&] {
    constexpr const char* op = "nn.generateAutoregressiveMask";
    return from_typed(kiln::nn::generate_autoregressive_mask<Inner>(
        int_from_js(val(batch_size), op, "batchSize"), int_from_js(val(seq_length), op, "seqLength")));
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_nn_attention) {
  using namespace kiln_js;
  emscripten::function("mhaAttend", &mha_attend);
  emscripten::function("transformerEncoderForward", &encoder_forward);
  emscripten::function("transformerDecoderForward", &decoder_forward);
  emscripten::function("generateAutoregressiveMask", &autoregressive_mask);
}
