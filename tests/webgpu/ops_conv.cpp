// Harness cases of the convolutions (engine/src/wgpu/conv_ops.cpp). Options come from the
// case's attrs: stride, padding, padding_end (default: padding), dilation, padding_out
// (lists, one per spatial dim) and groups; inputs are x (or weight / output_grad), weight,
// and an optional bias.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness.hpp"

namespace kiln::harness {
namespace {

template <std::size_t N>
std::array<std::int64_t, N> dims(const json& a, const char* key, std::int64_t fallback) {
  std::array<std::int64_t, N> out{};
  out.fill(fallback);
  if (a.contains(key)) {
    const auto v = a.at(key).get<std::vector<std::int64_t>>();
    for (std::size_t i = 0; i < N && i < v.size(); ++i) out[i] = v[i];
  }
  return out;
}

template <std::size_t N>
ConvOptions<N> conv_options(const json& a) {
  const auto padding = dims<N>(a, "padding", 0);
  return ConvOptions<N>(dims<N>(a, "stride", 1), padding,
                        a.contains("padding_end") ? dims<N>(a, "padding_end", 0) : padding,
                        dims<N>(a, "dilation", 1), a.value("groups", std::int64_t{1}));
}

template <std::size_t N>
ConvTransposeOptions<N> transpose_options(const json& a) {
  return ConvTransposeOptions<N>(dims<N>(a, "stride", 1), dims<N>(a, "padding", 0),
                                 dims<N>(a, "padding_out", 0), dims<N>(a, "dilation", 1),
                                 a.value("groups", std::int64_t{1}));
}

Shape shape_attr(const json& a, const char* key) {
  return Shape(a.at(key).get<std::vector<std::int64_t>>());
}

// in[2] when the case has a bias.
template <class T>
std::optional<T> bias_of(const std::vector<T>& in) {
  if (in.size() > 2) return in[2];
  return std::nullopt;
}

KILN_HARNESS_OP(conv1d, { return Ops::conv1d(in[0], in[1], bias_of(in), conv_options<1>(a)); });
KILN_HARNESS_OP(conv2d, { return Ops::conv2d(in[0], in[1], bias_of(in), conv_options<2>(a)); });
KILN_HARNESS_OP(conv3d, { return Ops::conv3d(in[0], in[1], bias_of(in), conv_options<3>(a)); });

// One tensor as both x and weight (one buffer bound twice would be a WebGPU error).
KILN_HARNESS_OP(conv2d_self,
                { return Ops::conv2d(in[0], in[0], std::nullopt, conv_options<2>(a)); });

// inputs: weight, output_grad; attrs.x_shape
KILN_HARNESS_OP(conv2d_x_backward, {
  return Ops::conv2d_x_backward(shape_attr(a, "x_shape"), in[0], in[1], conv_options<2>(a));
});
KILN_HARNESS_OP(conv3d_x_backward, {
  return Ops::conv3d_x_backward(shape_attr(a, "x_shape"), in[0], in[1], conv_options<3>(a));
});

// inputs: x, output_grad; attrs.weight_shape
KILN_HARNESS_OP(conv2d_weight_backward, {
  return Ops::conv2d_weight_backward(in[0], shape_attr(a, "weight_shape"), in[1],
                                     conv_options<2>(a));
});
KILN_HARNESS_OP(conv3d_weight_backward, {
  return Ops::conv3d_weight_backward(in[0], shape_attr(a, "weight_shape"), in[1],
                                     conv_options<3>(a));
});
// One tensor as both x and output_grad.
KILN_HARNESS_OP(conv2d_weight_backward_self, {
  return Ops::conv2d_weight_backward(in[0], shape_attr(a, "weight_shape"), in[0],
                                     conv_options<2>(a));
});

KILN_HARNESS_OP(conv_bias_backward, { return Ops::conv_bias_backward(in[0]); });

KILN_HARNESS_OP(conv_transpose1d, {
  return Ops::conv_transpose1d(in[0], in[1], bias_of(in), transpose_options<1>(a));
});
KILN_HARNESS_OP(conv_transpose2d, {
  return Ops::conv_transpose2d(in[0], in[1], bias_of(in), transpose_options<2>(a));
});
KILN_HARNESS_OP(conv_transpose3d, {
  return Ops::conv_transpose3d(in[0], in[1], bias_of(in), transpose_options<3>(a));
});

// inputs: weight, output_grad; attrs.x_shape
KILN_HARNESS_OP(conv_transpose2d_x_backward, {
  return Ops::conv_transpose2d_x_backward(shape_attr(a, "x_shape"), in[0], in[1],
                                          transpose_options<2>(a));
});
KILN_HARNESS_OP(conv_transpose3d_x_backward, {
  return Ops::conv_transpose3d_x_backward(shape_attr(a, "x_shape"), in[0], in[1],
                                          transpose_options<3>(a));
});

// inputs: x, output_grad; attrs.weight_shape
KILN_HARNESS_OP(conv_transpose2d_weight_backward, {
  return Ops::conv_transpose2d_weight_backward(in[0], shape_attr(a, "weight_shape"), in[1],
                                               transpose_options<2>(a));
});
KILN_HARNESS_OP(conv_transpose3d_weight_backward, {
  return Ops::conv_transpose3d_weight_backward(in[0], shape_attr(a, "weight_shape"), in[1],
                                               transpose_options<3>(a));
});

}  // namespace
}  // namespace kiln::harness
