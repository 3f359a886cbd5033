// kiln.nn.functional in JS: the engine's functional forms of the layers on JS tensors
// (convolutions, pools, dropout with a given keep-mask, linear, embedding and the
// normalisations), each one call of the C++ function the layers use (kiln/tensor/conv.hpp,
// kiln/nn/functional/*.hpp, nn::Dropout::forward_with_mask), on Autodiff<Cpu> so that
// gradients reach every tracked argument. bindings/js/nn_functional.ts checks the JS types
// and calls these; value and shape checks are the engine's (messages name the op).
#include <emscripten/bind.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "js_tensor.hpp"
#include "kiln/nn/dropout.hpp"
#include "kiln/nn/embedding.hpp"
#include "kiln/nn/functional/linear.hpp"
#include "kiln/nn/functional/norm.hpp"
#include "kiln/nn/functional/pool.hpp"
#include "kiln/tensor/conv.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

template <std::size_t D>
using T = kiln::Tensor<AD, D>;

/// f(std::integral_constant<size_t, R>) for the tensor's rank R in [Lo, Hi]; RankError
/// naming `op` and `expected` otherwise.
template <std::size_t Lo, std::size_t Hi, class F>
JsTensor with_rank(std::size_t rank, const char* op, const char* expected, F&& f) {
  if constexpr (Lo > Hi) {
    kiln::throw_error<kiln::RankError>(op, ": expected ", expected, ", got a tensor of rank ",
                                       rank);
  } else {
    if (rank == Lo) return f(std::integral_constant<std::size_t, Lo>{});
    return with_rank<Lo + 1, Hi>(rank, op, expected, std::forward<F>(f));
  }
}

/// A float tensor of rank D, detached inside kiln.noGrad(fn).
template <std::size_t D>
T<D> input(const JsTensor& t, const char* op) {
  check_dtype(op, t, kiln::DType::F32);
  kiln::check::rank(op, D, t.shape());
  return T<D>(op_input(t));
}

/// An optional tensor argument (null or undefined: none) of rank D.
template <std::size_t D>
std::optional<T<D>> optional_input(const val& v, const char* op) {
  if (v.isNull() || v.isUndefined()) return std::nullopt;
  return input<D>(v.as<JsTensor>(), op);
}

/// N integers from a JS array (the JS layer widens a single number).
template <std::size_t N>
std::array<std::int64_t, N> ints(const val& v, const char* op, const char* what) {
  const auto xs = ints_from_js(v, op, what);
  if (xs.size() != N) {
    kiln::throw_error<kiln::TypeError>(op, ": ", what, " must have ", N, " entries, got ",
                                       xs.size());
  }
  std::array<std::int64_t, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = xs[i];
  return out;
}

/// [batch, channels, length] -> [batch, channels, 1, length]: the shape the 1-D pools run on.
kiln::Shape as_2d_shape(const kiln::Shape& s) { return kiln::Shape{s[0], s[1], 1, s[2]}; }

std::int64_t integer(double v, const char* op, const char* what) {
  if (!std::isfinite(v) || std::floor(v) != v || std::fabs(v) > 9007199254740991.0) {
    kiln::throw_error<kiln::TypeError>(op, ": ", what, " must be an integer, got ", v);
  }
  return static_cast<std::int64_t>(v);
}

/// conv1d (dims 1) or conv2d (dims 2): x, weight, bias or null; stride, padding, dilation
/// arrays of `dims` integers (symmetric padding), groups.
JsTensor f_conv(const JsTensor& x, const JsTensor& w, val bias, val stride, val padding,
                val dilation, double groups, int dims) {
  return guarded([&] {
    const char* op = dims == 1 ? "conv1d" : "conv2d";
    const std::int64_t g = integer(groups, op, "groups");
    const auto b = optional_input<1>(bias, op);
    if (dims == 1) {
      const kiln::ConvOptions<1> o(ints<1>(stride, op, "stride"), ints<1>(padding, op, "padding"),
                                   ints<1>(dilation, op, "dilation"), g);
      return from_typed(kiln::conv1d(input<3>(x, op), input<3>(w, op), b, o));
    }
    const kiln::ConvOptions<2> o(ints<2>(stride, op, "stride"), ints<2>(padding, op, "padding"),
                                 ints<2>(dilation, op, "dilation"), g);
    return from_typed(kiln::conv2d(input<4>(x, op), input<4>(w, op), b, o));
  });
}

/// conv_transpose2d: padding_out is PyTorch's output_padding.
JsTensor f_conv_transpose2d(const JsTensor& x, const JsTensor& w, val bias, val stride,
                            val padding, val padding_out, val dilation, double groups) {
  return guarded([&] {
    const char* op = "conv_transpose2d";
    const kiln::ConvTransposeOptions<2> o(
        ints<2>(stride, op, "stride"), ints<2>(padding, op, "padding"),
        ints<2>(padding_out, op, "padding_out"), ints<2>(dilation, op, "dilation"),
        integer(groups, op, "groups"));
    return from_typed(kiln::conv_transpose2d(input<4>(x, op), input<4>(w, op),
                                             optional_input<1>(bias, op), o));
  });
}

/// conv3d: x, weight, bias or null; stride, padding (symmetric), dilation arrays of 3 integers.
JsTensor f_conv3d(const JsTensor& x, const JsTensor& w, val bias, val stride, val padding,
                  val dilation, double groups) {
  return guarded([&] {
    const char* op = "conv3d";
    const kiln::ConvOptions<3> o(ints<3>(stride, op, "stride"), ints<3>(padding, op, "padding"),
                                 ints<3>(dilation, op, "dilation"), integer(groups, op, "groups"));
    return from_typed(kiln::conv3d(input<5>(x, op), input<5>(w, op), optional_input<1>(bias, op), o));
  });
}

/// conv_transpose1d (dims 1) or conv_transpose3d (dims 3): padding_out is PyTorch's
/// output_padding; size arrays of `dims` integers.
JsTensor f_conv_transpose_nd(const JsTensor& x, const JsTensor& w, val bias, val stride,
                             val padding, val padding_out, val dilation, double groups, int dims) {
  return guarded([&] {
    const char* op = dims == 1 ? "conv_transpose1d" : "conv_transpose3d";
    const std::int64_t g = integer(groups, op, "groups");
    const auto b = optional_input<1>(bias, op);
    if (dims == 1) {
      const kiln::ConvTransposeOptions<1> o(
          ints<1>(stride, op, "stride"), ints<1>(padding, op, "padding"),
          ints<1>(padding_out, op, "padding_out"), ints<1>(dilation, op, "dilation"), g);
      return from_typed(kiln::conv_transpose1d(input<3>(x, op), input<3>(w, op), b, o));
    }
    const kiln::ConvTransposeOptions<3> o(
        ints<3>(stride, op, "stride"), ints<3>(padding, op, "padding"),
        ints<3>(padding_out, op, "padding_out"), ints<3>(dilation, op, "dilation"), g);
    return from_typed(kiln::conv_transpose3d(input<5>(x, op), input<5>(w, op), b, o));
  });
}

/// max_pool1d / max_pool2d (dims 1 or 2): kernel, stride, padding, dilation arrays.
JsTensor f_max_pool(const JsTensor& x, val kernel, val stride, val padding, val dilation,
                    bool ceil_mode, int dims) {
  return guarded([&] {
    if (dims == 1) {
      const char* op = "max_pool1d";
      const kiln::nn::functional::MaxPool1dOptions o{
          ints<1>(kernel, op, "kernel_size")[0], ints<1>(stride, op, "stride")[0],
          ints<1>(padding, op, "padding")[0], ints<1>(dilation, op, "dilation")[0], ceil_mode};
      const auto in = input<3>(x, op);
      // The engine's 1-D pools run the 2-D primitive; checked first so errors name the 1-D op.
      (void)kiln::pool::check_max_pool2d(
          op, as_2d_shape(in.shape()),
          kiln::MaxPool2dOptions{{1, o.kernel_size}, {1, o.stride}, {0, o.padding}, {1, o.dilation}, ceil_mode});
      return from_typed(kiln::nn::functional::max_pool1d(in, o));
    }
    const char* op = "max_pool2d";
    const kiln::MaxPool2dOptions o{ints<2>(kernel, op, "kernel_size"), ints<2>(stride, op, "stride"),
                                   ints<2>(padding, op, "padding"), ints<2>(dilation, op, "dilation"),
                                   ceil_mode};
    return from_typed(kiln::nn::functional::max_pool2d(input<4>(x, op), o));
  });
}

/// avg_pool1d / avg_pool2d.
JsTensor f_avg_pool(const JsTensor& x, val kernel, val stride, val padding,
                    bool count_include_pad, bool ceil_mode, int dims) {
  return guarded([&] {
    if (dims == 1) {
      const char* op = "avg_pool1d";
      const kiln::nn::functional::AvgPool1dOptions o{
          ints<1>(kernel, op, "kernel_size")[0], ints<1>(stride, op, "stride")[0],
          ints<1>(padding, op, "padding")[0], count_include_pad, ceil_mode};
      const auto in = input<3>(x, op);
      (void)kiln::pool::check_avg_pool2d(
          op, as_2d_shape(in.shape()),
          kiln::AvgPool2dOptions{{1, o.kernel_size}, {1, o.stride}, {0, o.padding}, count_include_pad, ceil_mode});
      return from_typed(kiln::nn::functional::avg_pool1d(in, o));
    }
    const char* op = "avg_pool2d";
    const kiln::AvgPool2dOptions o{ints<2>(kernel, op, "kernel_size"), ints<2>(stride, op, "stride"),
                                   ints<2>(padding, op, "padding"), count_include_pad, ceil_mode};
    return from_typed(kiln::nn::functional::avg_pool2d(input<4>(x, op), o));
  });
}

/// adaptive_avg_pool1d / adaptive_avg_pool2d.
JsTensor f_adaptive_avg_pool(const JsTensor& x, val output_size, int dims) {
  return guarded([&] {
    if (dims == 1) {
      const char* op = "adaptive_avg_pool1d";
      const auto out = ints<1>(output_size, op, "output_size")[0];
      if (out < 1) {
        kiln::throw_error<kiln::ConfigError>(op, ": output_size must be >= 1, got ", out);
      }
      const auto in = input<3>(x, op);
      (void)kiln::pool::check_adaptive_avg_pool2d(op, as_2d_shape(in.shape()), {1, out});
      return from_typed(kiln::nn::functional::adaptive_avg_pool1d(in, out));
    }
    const char* op = "adaptive_avg_pool2d";
    return from_typed(
        kiln::nn::functional::adaptive_avg_pool2d(input<4>(x, op), ints<2>(output_size, op, "output_size")));
  });
}

/// Inverted dropout: with `mask` (a float32 or bool tensor of x's shape, 1 = keep)
/// x·mask/(1 - p) (nn::Dropout::forward_with_mask); without, a mask drawn from the engine's
/// generator; the identity when not training.
JsTensor f_dropout(const JsTensor& x, double p, val mask, bool training) {
  return guarded([&] {
    const char* op = "dropout";
    if (!(p >= 0.0 && p <= 1.0)) {
      kiln::throw_error<kiln::ValueError>(op, ": p must be in [0, 1], got ", p);
    }
    check_dtype(op, x, kiln::DType::F32);
    JsTensor m;
    const bool has_mask = !mask.isNull() && !mask.isUndefined();
    if (has_mask) {
      m = mask.as<JsTensor>();
      if (m.dtype() == kiln::DType::I32) {
        kiln::throw_error<kiln::DTypeError>(
            op, ": mask must be a float32 or bool tensor (1 = keep), got int32");
      }
      if (!(m.shape() == x.shape())) {
        kiln::throw_error<kiln::ShapeError>(op, ": mask must have the input's shape ", x.shape(),
                                            ", got ", m.shape());
      }
    }
    if (!training) return JsTensor(op_input(x));
    const kiln::nn::Dropout layer{p};
    return with_rank<1, 6>(x.shape().rank(), op, "a tensor of rank 1 to 6", [&](auto rank) {
      constexpr std::size_t D = decltype(rank)::value;
      const auto in = input<D>(x, op);
      if (!has_mask) return from_typed(layer.forward(in));
      const auto keep = m.is_float() ? kiln::Tensor<AD, D>(m.primitive())
                                     : kiln::Tensor<AD, D, kiln::Bool>(m.primitive()).float_();
      return from_typed(layer.forward_with_mask(in, keep));
    });
  });
}

/// linear(x [..., d_input], weight [d_output, d_input], bias [d_output] or null).
JsTensor f_linear(const JsTensor& x, const JsTensor& w, val bias) {
  return guarded([&] {
    const char* op = "linear";
    const auto weight = input<2>(w, op);
    const auto b = optional_input<1>(bias, op);
    return with_rank<1, 6>(x.shape().rank(), op, "input [..., d_input] of rank 1 to 6", [&](auto rank) {
      constexpr std::size_t D = decltype(rank)::value;
      return from_typed(kiln::nn::functional::linear(input<D>(x, op), weight, b));
    });
  });
}

/// embedding(indices int32 [...] (rank 1 to 3), weight [n, d], padding_idx or null) ->
/// [..., d].
JsTensor f_embedding(const JsTensor& indices, const JsTensor& w, val padding_idx) {
  return guarded([&] {
    const char* op = "embedding";
    check_dtype(op, indices, kiln::DType::I32);
    const auto weight = input<2>(w, op);
    std::optional<std::int64_t> pad;
    if (!padding_idx.isNull() && !padding_idx.isUndefined()) {
      pad = integer(padding_idx.as<double>(), op, "paddingIdx");
    }
    const kiln::Shape s = indices.shape();
    if (s.rank() < 1 || s.rank() > 3) {
      kiln::throw_error<kiln::RankError>(op, ": expected indices of rank 1 to 3, got ", s);
    }
    const std::int64_t seq = s[s.rank() - 1];
    const std::int64_t batch = seq == 0 ? 0 : s.num_elements() / seq;
    const std::array<std::int64_t, 2> flat{batch, seq};
    const auto idx2 = kiln::Tensor<AD, 2, kiln::Int>(InnerOps::reshape(indices.primitive(), flat));
    const auto out = kiln::nn::functional::embedding(idx2, weight, pad);  // [batch, seq, d]
    std::vector<std::int64_t> dims(s.dims().begin(), s.dims().end());
    dims.push_back(weight.dims()[1]);
    return with_rank<2, 4>(dims.size(), op, "indices of rank 1 to 3", [&](auto rank) {
      constexpr std::size_t D = decltype(rank)::value;
      std::array<std::int64_t, D> a{};
      for (std::size_t i = 0; i < D; ++i) a[i] = dims[i];
      return from_typed(out.template reshape<D>(a));
    });
  });
}

/// layer_norm(x, normalized_shape, weight or null, bias or null, epsilon); weight and bias
/// of shape normalized_shape.
JsTensor f_layer_norm(const JsTensor& x, val normalized_shape, val weight, val bias, double epsilon) {
  return guarded([&] {
    const char* op = "layer_norm";
    const auto ns = ints_from_js(normalized_shape, op, "normalizedShape");
    return with_rank<1, 6>(x.shape().rank(), op, "a tensor of rank 1 to 6", [&](auto rank) {
      constexpr std::size_t D = decltype(rank)::value;
      // weight/bias [normalized_shape] -> [1, ..., 1, normalized_shape] (rank D).
      auto widen = [&](const val& v, const char* what) -> std::optional<T<D>> {
        if (v.isNull() || v.isUndefined()) return std::nullopt;
        const JsTensor p = v.as<JsTensor>();
        check_dtype(op, p, kiln::DType::F32);
        const kiln::Shape ps = p.shape();
        bool same = ps.rank() == ns.size() && ns.size() <= D;
        for (std::size_t i = 0; same && i < ns.size(); ++i) same = ps[i] == ns[i];
        if (!same) {
          kiln::throw_error<kiln::ShapeError>(op, ": ", what, " must have shape normalizedShape ",
                                              kiln::Shape(ns), ", got ", ps);
        }
        std::array<std::int64_t, D> dims{};
        dims.fill(1);
        for (std::size_t i = 0; i < ns.size(); ++i) dims[D - ns.size() + i] = ns[i];
        return T<D>(AD::FloatOps::reshape(op_input(p), dims));
      };
      const auto wt = widen(weight, "weight");
      const auto bs = widen(bias, "bias");
      return from_typed(kiln::nn::functional::layer_norm(input<D>(x, op), ns, wt, bs, epsilon));
    });
  });
}

/// group_norm(x [N, C, ...], num_groups, weight [C] or null, bias [C] or null, epsilon).
JsTensor f_group_norm(const JsTensor& x, double num_groups, val weight, val bias, double epsilon) {
  return guarded([&] {
    const char* op = "group_norm";
    const std::int64_t g = integer(num_groups, op, "numGroups");
    const auto w = optional_input<1>(weight, op);
    const auto b = optional_input<1>(bias, op);
    return with_rank<2, 6>(x.shape().rank(), op, "input [batch_size, channels, ...] of rank 2 to 6",
                           [&](auto rank) {
                             constexpr std::size_t D = decltype(rank)::value;
                             return from_typed(
                                 kiln::nn::functional::group_norm(input<D>(x, op), g, w, b, epsilon));
                           });
  });
}

/// batch_norm's results as one JS array [output, running_mean, running_var, has_stats] of
/// owned RawTensors (an Embind value_array: class values pushed into a val array would hand
/// JS temporaries); without running statistics the two are empty placeholders.
struct BatchNormResult {
  JsTensor output;
  JsTensor running_mean;
  JsTensor running_var;
  bool has_stats = false;
};

/// batch_norm(x [N, C, ...], running_mean, running_var, weight, bias (each [C] or null),
/// training, momentum, epsilon): the output and the running statistics after it (updated in
/// training mode).
BatchNormResult f_batch_norm(const JsTensor& x, val running_mean, val running_var, val weight,
                             val bias, bool training, double momentum, double epsilon) {
  return guarded([&] {
    const char* op = "batch_norm";
    const auto rm = optional_input<1>(running_mean, op);
    const auto rv = optional_input<1>(running_var, op);
    const auto w = optional_input<1>(weight, op);
    const auto b = optional_input<1>(bias, op);
    BatchNormResult out;
    (void)with_rank<2, 5>(x.shape().rank(), op, "input [batch_size, channels, ...] of rank 2 to 5",
                          [&](auto rank) {
                            constexpr std::size_t D = decltype(rank)::value;
                            auto r = kiln::nn::functional::batch_norm(input<D>(x, op), rm, rv, w, b,
                                                                      training, momentum, epsilon);
                            out.output = from_typed(r.output);
                            if (r.running_mean && r.running_var) {
                              out.running_mean = from_typed(*r.running_mean);
                              out.running_var = from_typed(*r.running_var);
                              out.has_stats = true;
                            }
                            return JsTensor();
                          });
    return out;
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_nn_functional) {
  using namespace kiln_js;
  emscripten::function("fConv", &f_conv);
  emscripten::function("fConvTranspose2d", &f_conv_transpose2d);
  emscripten::function("fMaxPool", &f_max_pool);
  emscripten::function("fAvgPool", &f_avg_pool);
  emscripten::function("fAdaptiveAvgPool", &f_adaptive_avg_pool);
  emscripten::function("fDropout", &f_dropout);
  emscripten::function("fLinear", &f_linear);
  emscripten::function("fEmbedding", &f_embedding);
  emscripten::function("fLayerNorm", &f_layer_norm);
  emscripten::function("fGroupNorm", &f_group_norm);
  emscripten::value_array<BatchNormResult>("BatchNormResult")
      .element(&BatchNormResult::output)
      .element(&BatchNormResult::running_mean)
      .element(&BatchNormResult::running_var)
      .element(&BatchNormResult::has_stats);
  emscripten::function("fBatchNorm", &f_batch_norm);
  emscripten::function("fConv3d", &f_conv3d);
  emscripten::function("fConvTransposeNd", &f_conv_transpose_nd);
}
