// kiln.nn.functional's 3-D pools and interpolate (bindings/js/nn_resample.ts): one call of
// the C++ functional forms (kiln/nn/functional/pool3d.hpp, kiln/tensor/interpolate.hpp) on
// Autodiff<Cpu>, so gradients reach a tracked input. JS checks only JS types; values and
// shapes are checked by the engine (messages name the op).
#include <emscripten/bind.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "js_tensor.hpp"
#include "kiln/core/check.hpp"
#include "kiln/nn/functional/pool3d.hpp"
#include "kiln/tensor/interpolate.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

/// A float tensor of rank D, detached inside kiln.noGrad(fn).
template <std::size_t D>
kiln::Tensor<AD, D> input(const JsTensor& t, const char* op) {
  check_dtype(op, t, kiln::DType::F32);
  kiln::check::rank(op, D, t.shape());
  return kiln::Tensor<AD, D>(op_input(t));
}

/// Three integers {depth, height, width} from a JS array (the JS layer widens one number).
std::array<std::int64_t, 3> triple(const val& v, const char* op, const char* what) {
  const auto xs = ints_from_js(v, op, what);
  if (xs.size() != 3) {
    kiln::throw_error<kiln::TypeError>(op, ": ", what, " must have 3 entries, got ", xs.size());
  }
  return {xs[0], xs[1], xs[2]};
}

/// max_pool3d(x, kernel, stride, padding, dilation, ceil_mode).
JsTensor f_max_pool3d(const JsTensor& x, val kernel, val stride, val padding, val dilation,
                      bool ceil_mode) {
  return guarded([&] {
    const char* op = "max_pool3d";
    const kiln::nn::functional::MaxPool3dOptions o{
        triple(kernel, op, "kernel_size"), triple(stride, op, "stride"),
        triple(padding, op, "padding"), triple(dilation, op, "dilation"), ceil_mode};
    return from_typed(kiln::nn::functional::max_pool3d(input<5>(x, op), o));
  });
}

/// avg_pool3d(x, kernel, stride, padding, count_include_pad, ceil_mode).
JsTensor f_avg_pool3d(const JsTensor& x, val kernel, val stride, val padding,
                      bool count_include_pad, bool ceil_mode) {
  return guarded([&] {
    const char* op = "avg_pool3d";
    const kiln::nn::functional::AvgPool3dOptions o{triple(kernel, op, "kernel_size"),
                                                   triple(stride, op, "stride"),
                                                   triple(padding, op, "padding"),
                                                   count_include_pad, ceil_mode};
    return from_typed(kiln::nn::functional::avg_pool3d(input<5>(x, op), o));
  });
}

/// adaptive_avg_pool3d(x, output_size).
JsTensor f_adaptive_avg_pool3d(const JsTensor& x, val output_size) {
  return guarded([&] {
    const char* op = "adaptive_avg_pool3d";
    return from_typed(kiln::nn::functional::adaptive_avg_pool3d(
        input<5>(x, op), triple(output_size, op, "output_size")));
  });
}

/// interpolate(x [N, C, L] or [N, C, H, W], size (array or null), scale_factor (array or
/// null), mode "nearest" | "bilinear", align_corners).
JsTensor f_interpolate(const JsTensor& x, val size, val scale_factor, std::string mode,
                       bool align_corners) {
  return guarded([&] {
    const char* op = "interpolate";
    kiln::InterpolateOptions o;
    if (!size.isNull() && !size.isUndefined()) o.size = ints_from_js(size, op, "size");
    if (!scale_factor.isNull() && !scale_factor.isUndefined()) {
      o.scale_factor = emscripten::vecFromJSArray<double>(scale_factor);
    }
    o.mode = kiln::interpolate_mode_from(mode, op);
    o.align_corners = align_corners;
    check_dtype(op, x, kiln::DType::F32);
    if (x.shape().rank() == 3) return from_typed(kiln::interpolate(input<3>(x, op), o));
    if (x.shape().rank() != 4) (void)kiln::plan_interpolate(op, x.shape(), o);  // its RankError
    return from_typed(kiln::interpolate(input<4>(x, op), o));
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_nn_resample) {
  using namespace kiln_js;
  emscripten::function("fMaxPool3d", &f_max_pool3d);
  emscripten::function("fAvgPool3d", &f_avg_pool3d);
  emscripten::function("fAdaptiveAvgPool3d", &f_adaptive_avg_pool3d);
  emscripten::function("fInterpolate", &f_interpolate);
}
