// The ops of issue 15 for the JS Tensor (kiln/tensor/ops_ext.hpp), on the engine's backend
// (Cpu, or Wgpu in the webgpu engine): norm, var/std with a
// correction, amax/amin, pad, tril/triu, cumsum, linspace and einsum (backward with
// retainGraph is in tensor_autodiff.cpp). Each binding converts its JS arguments and calls the
// engine function once: checks and messages are the engine's (named by the `op` the JS method passes).
#include <emscripten/bind.h>

#include <cmath>
#include <string>
#include <vector>

#include "js_tensor.hpp"
#include "kiln/tensor/ops_ext.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

using kiln::DType;
using Ops = AD::FloatOps;

/// A JS number that must be a safe integer. Throws TypeError naming op and what.
std::int64_t int_arg(double value, const char* op, const char* what) {
  if (!(std::abs(value) <= 9007199254740991.0) || std::floor(value) != value) {
    kiln::throw_error<kiln::TypeError>(op, ": ", what, " must be an integer, got ", value);
  }
  return static_cast<std::int64_t>(value);
}

/// A reduction over every dim without keepdim (no dims given, or all of them) is the JS API's
/// rank-0 scalar (as torch: x.norm(), x.amax(), x.std() give []); the engine gives [1].
JsTensor scalar_if_all(JsTensor r, const JsTensor& x, const std::vector<std::int64_t>& dims,
                       bool keepdim) {
  if (keepdim || !(dims.empty() || dims.size() == x.shape().rank())) return r;
  return as_scalar(r);
}

JsTensor amax(const JsTensor& x, const val& dims, bool keepdim, bool min, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    const std::vector<std::int64_t> d = ints_from_js(dims, o, "dim");
    if (x.is_float()) return scalar_if_all(JsTensor(kiln::ops::amax(op_input(x), d, keepdim, min, o)), x, d, keepdim);
    return scalar_if_all(JsTensor(kiln::ops::amax(x.primitive(), d, keepdim, min, o)), x, d, keepdim);
  });
}

/// norm, var and einsum are written for Autodiff<Inner> only (kiln/tensor/ops_ext.hpp: their
/// gradients are part of them). kiln-dl/inference's engine, whose tensors are Inner's, runs
/// them on an untracked Autodiff tensor: their forward, no graph recorded.
#if KILN_JS_AUTODIFF
FloatPrim ad_input(const JsTensor& x) { return op_input(x); }
JsTensor from_ad(FloatPrim t) { return JsTensor(std::move(t)); }
#else
kiln::AutodiffTensor<Inner> ad_input(const JsTensor& x) { return kiln::AutodiffTensor<Inner>(x.primitive()); }
JsTensor from_ad(kiln::AutodiffTensor<Inner> t) { return JsTensor(std::move(t.primitive)); }
#endif

JsTensor norm(const JsTensor& x, double p, const val& dims, bool keepdim, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    check_dtype(o, x, DType::F32);
    const std::vector<std::int64_t> d = ints_from_js(dims, o, "dim");
    return scalar_if_all(from_ad(kiln::ops::norm(ad_input(x), p, d, keepdim, o)), x, d, keepdim);
  });
}

JsTensor var_correction(const JsTensor& x, const val& dims, double correction, bool keepdim,
                        bool take_sqrt, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    check_dtype(o, x, DType::F32);
    const std::vector<std::int64_t> d = ints_from_js(dims, o, "dim");
    return scalar_if_all(from_ad(kiln::ops::var(ad_input(x), d, correction, keepdim, take_sqrt, o)), x, d,
                         keepdim);
  });
}

JsTensor pad(const JsTensor& x, const val& pads, std::string mode, double value, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    const std::vector<std::int64_t> p = ints_from_js(pads, o, "pad");
    if (x.is_float()) return JsTensor(kiln::ops::pad(op_input(x), p, mode, value, o));
    return JsTensor(kiln::ops::pad(x.primitive(), p, mode, value, o));
  });
}

JsTensor triangle(const JsTensor& x, double diagonal, bool upper, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    const std::int64_t d = int_arg(diagonal, o, "diagonal");
    if (x.is_float()) return JsTensor(kiln::ops::triangle(op_input(x), d, upper, o));
    return JsTensor(kiln::ops::triangle(x.primitive(), d, upper, o));
  });
}

JsTensor cumsum(const JsTensor& x, double dim, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    const std::int64_t d = int_arg(dim, o, "dim");
    if (x.is_float()) return JsTensor(kiln::ops::cumsum(op_input(x), d, o));
    return JsTensor(kiln::ops::cumsum(x.primitive(), d, o));
  });
}

JsTensor linspace(double start, double end, double steps, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    return JsTensor(kiln::ops::linspace<Prim>(start, end, int_arg(steps, o, "steps"), o));
  });
}

/// einsum of one (count 1: b ignored) or two operands.
JsTensor einsum(std::string equation, const JsTensor& a, const JsTensor& b, int count,
                std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    check_dtype(o, a, DType::F32);
    if (count > 1) check_dtype(o, b, DType::F32);
    std::vector<kiln::AutodiffTensor<Inner>> operands{ad_input(a)};
    if (count > 1) operands.push_back(ad_input(b));
    return from_ad(kiln::ops::einsum<Inner>(equation, operands, o));
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_tensor_ops_ext) {
  using namespace kiln_js;
  using emscripten::function;
  function("tAmax", &amax);
  function("tNorm", &norm);
  function("tVarCorrection", &var_correction);
  function("tPad", &pad);
  function("tTriangle", &triangle);
  function("tCumsum", &cumsum);
  function("tLinspace", &linspace);
  function("tEinsum", &einsum);
}
