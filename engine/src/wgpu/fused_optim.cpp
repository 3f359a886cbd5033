// The fused optimizer updates of the Wgpu backend (kiln/optim/fused.hpp): Adam/AdamW (without
// AMSGrad) and SGD as one compute dispatch per parameter, with the operations of the rules'
// op chains in their order (cpu/kernels/optim.hpp states them per element) and the chain
// kernels' WGSL arithmetic (wgsl_math.hpp: f_mul, f_div, f_sqrt read subnormal operands at
// their value, as the element-wise kernels do; + and - are WGSL's, as theirs).
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/optim/fused.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"
#include "wgpu/wgsl_math.hpp"

namespace kiln::optim::fused {
namespace {

/// Throws ShapeError unless `t` has `param`'s shape (Cpu's message: fused_cpu.cpp).
void check_shape(const char* op, const char* what, const WgpuTensor& t, const WgpuTensor& param) {
  if (!(t.shape() == param.shape())) {
    throw_error<ShapeError>(op, ": the ", what, " has shape ", t.shape(), ", the parameter ",
                            param.shape());
  }
}

/// The kernel of `body` (main's statements after `let i`), with `reads` read-only and `writes`
/// read-write f32 arrays (bindings in that order) and the uniform block `params` (WGSL struct
/// fields). Cached by its text (wgpu::kernel).
const wgpu::Kernel& update_kernel(std::initializer_list<std::string_view> reads,
                                  std::initializer_list<std::string_view> writes,
                                  std::string_view params, std::string_view body) {
  std::string s = "struct P { ";
  s += params;
  s += " }\n";
  int b = 0;
  for (const auto name : reads) {
    s += str_cat("@group(0) @binding(", b++, ") var<storage, read> ", name, ": array<f32>;\n");
  }
  for (const auto name : writes) {
    s += str_cat("@group(0) @binding(", b++, ") var<storage, read_write> ", name, ": array<f32>;\n");
  }
  s += str_cat("@group(0) @binding(", b, ") var<uniform> p: P;\n");
  std::string main =
      "@compute @workgroup_size(256)\n"
      "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {\n";
  const std::string helpers = wgpu::wgsl_helpers(body);
  if (helpers.find("g_zero") != std::string::npos) main += "  g_zero = gid.z;\n";
  main += "  let i = flat_index(gid, nwg, 256u);\n  if (i >= p.n) { return; }\n";
  main += body;
  main += "}\n";
  return wgpu::kernel(std::string(wgpu::kPrelude) + helpers + s + main,
                      static_cast<int>(reads.size()), static_cast<int>(writes.size()), true);
}

// Adam / AdamW (cpu/kernels/optim.hpp AdamStepArgs): g = grad (+ param·penalty); m' and v'
// from the moments (or from g alone on the first step); change = m' / (sqrt(v') / bc2 + eps)
// · step_size; param' = (AdamW: param·decay_factor, else param) - change.
constexpr std::string_view kAdamParams =
    "n: u32, weight_decay: u32, decoupled: u32, pad: u32, penalty: f32, decay_factor: f32, "
    "beta_1: f32, one_minus_beta_1: f32, beta_2: f32, one_minus_beta_2: f32, bc2: f32, eps: f32, "
    "step_size: f32,";
constexpr std::string_view kAdamHead = R"WGSL(  let pv = param[i];
  var g = grad[i];
  if (p.weight_decay != 0u) { g = g + f_mul(pv, p.penalty); }
  let sq = f_mul(g, g);
)WGSL";
constexpr std::string_view kAdamFirst = R"WGSL(  let m = f_mul(g, p.one_minus_beta_1);
  let v = f_mul(sq, p.one_minus_beta_2);
)WGSL";
constexpr std::string_view kAdamNext = R"WGSL(  let m = f_mul(moment_1[i], p.beta_1) + f_mul(g, p.one_minus_beta_1);
  let v = f_mul(moment_2[i], p.beta_2) + f_mul(sq, p.one_minus_beta_2);
)WGSL";
constexpr std::string_view kAdamTail = R"WGSL(  let denom = f_div(f_sqrt(v), p.bc2) + p.eps;
  let change = f_mul(f_div(m, denom), p.step_size);
  var base = pv;
  if (p.decoupled != 0u) { base = f_mul(pv, p.decay_factor); }
  param_out[i] = base - change;
  moment_1_out[i] = m;
  moment_2_out[i] = v;
)WGSL";

// SGD (cpu/kernels/optim.hpp SgdStepArgs): g = grad (+ param·penalty); with momentum
// b' = buffer·momentum + g·(1 - dampening) (g on the first step), g = nesterov ? g + b'·momentum
// : b'; param' = param - g·lr.
constexpr std::string_view kSgdParams =
    "n: u32, weight_decay: u32, nesterov: u32, pad: u32, penalty: f32, momentum: f32, "
    "one_minus_dampening: f32, lr: f32,";
constexpr std::string_view kSgdHead = R"WGSL(  let pv = param[i];
  var g = grad[i];
  if (p.weight_decay != 0u) { g = g + f_mul(pv, p.penalty); }
)WGSL";
constexpr std::string_view kSgdFirstBuffer = R"WGSL(  let b = g;
)WGSL";
constexpr std::string_view kSgdNextBuffer = R"WGSL(  let b = f_mul(momentum_buffer[i], p.momentum) + f_mul(g, p.one_minus_dampening);
)WGSL";
constexpr std::string_view kSgdMomentum = R"WGSL(  momentum_buffer_out[i] = b;
  if (p.nesterov != 0u) { g = g + f_mul(b, p.momentum); } else { g = b; }
)WGSL";
constexpr std::string_view kSgdTail = R"WGSL(  param_out[i] = pv - f_mul(g, p.lr);
)WGSL";

}  // namespace

AdamUpdateOf<WgpuTensor> adam_step(const WgpuTensor& param, const WgpuTensor& grad,
                                   WgpuTensor* moment_1, WgpuTensor* moment_2,
                                   WgpuTensor* max_moment_2, const AdamScalars& s,
                                   UpdateFinite* /*finite*/) {
  constexpr const char* op = "Adam::step";
  wgpu::check(op);
  if (s.amsgrad || max_moment_2) {
    throw_error<ValueError>(op,
                            ": the fused Wgpu update has no AMSGrad (the rule takes its op chain)");
  }
  check_shape(op, "gradient", grad, param);
  if (moment_1) check_shape(op, "first moment", *moment_1, param);
  if (moment_1) check_shape(op, "second moment", *moment_2, param);
  const std::size_t bytes = param.num_bytes();
  AdamUpdateOf<WgpuTensor> out{
      WgpuTensor(param.shape(), DType::F32, wgpu::allocate(op, bytes)),
      WgpuTensor(param.shape(), DType::F32, wgpu::allocate(op, bytes)),
      WgpuTensor(param.shape(), DType::F32, wgpu::allocate(op, bytes)), std::nullopt};
  const std::int64_t n = param.num_elements();
  if (n == 0) return out;
  struct {
    std::uint32_t n, weight_decay, decoupled, pad;
    float penalty, decay_factor, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2, bc2, eps,
        step_size, pad1, pad2, pad3;
  } p{static_cast<std::uint32_t>(n), s.penalty ? 1u : 0u, s.decay_factor ? 1u : 0u, 0u,
      s.penalty.value_or(0.f), s.decay_factor.value_or(1.f), s.beta_1, s.one_minus_beta_1,
      s.beta_2, s.one_minus_beta_2, s.bias_correction_2_sqrt, s.epsilon, s.step_size,
      0.f, 0.f, 0.f};
  const std::string body =
      str_cat(kAdamHead, moment_1 ? kAdamNext : kAdamFirst, kAdamTail);
  if (moment_1) {
    const auto& k = update_kernel({"param", "grad", "moment_1", "moment_2"},
                                  {"param_out", "moment_1_out", "moment_2_out"}, kAdamParams, body);
    wgpu::dispatch(k, {&param.buffer(), &grad.buffer(), &moment_1->buffer(), &moment_2->buffer(),
                       &out.param.buffer(), &out.moment_1.buffer(), &out.moment_2.buffer()},
                   p, wgpu::groups_for(n));
  } else {
    const auto& k = update_kernel({"param", "grad"}, {"param_out", "moment_1_out", "moment_2_out"},
                                  kAdamParams, body);
    wgpu::dispatch(k, {&param.buffer(), &grad.buffer(), &out.param.buffer(),
                       &out.moment_1.buffer(), &out.moment_2.buffer()},
                   p, wgpu::groups_for(n));
  }
  return out;
}

SgdUpdateOf<WgpuTensor> sgd_step(const WgpuTensor& param, const WgpuTensor& grad,
                                 WgpuTensor* buffer, const SgdScalars& s,
                                 UpdateFinite* /*finite*/) {
  constexpr const char* op = "Sgd::step";
  wgpu::check(op);
  check_shape(op, "gradient", grad, param);
  const bool has_buffer = s.has_momentum && buffer != nullptr;
  if (has_buffer) check_shape(op, "momentum buffer", *buffer, param);
  const std::size_t bytes = param.num_bytes();
  SgdUpdateOf<WgpuTensor> out{WgpuTensor(param.shape(), DType::F32, wgpu::allocate(op, bytes)),
                              std::nullopt};
  if (s.has_momentum) out.buffer = WgpuTensor(param.shape(), DType::F32, wgpu::allocate(op, bytes));
  const std::int64_t n = param.num_elements();
  if (n == 0) return out;
  struct {
    std::uint32_t n, weight_decay, nesterov, pad;
    float penalty, momentum, one_minus_dampening, lr;
  } p{static_cast<std::uint32_t>(n), s.penalty ? 1u : 0u, s.nesterov ? 1u : 0u, 0u,
      s.penalty.value_or(0.f), s.momentum, s.one_minus_dampening, s.lr};
  if (!s.has_momentum) {
    const auto& k = update_kernel({"param", "grad"}, {"param_out"}, kSgdParams,
                                  str_cat(kSgdHead, kSgdTail));
    wgpu::dispatch(k, {&param.buffer(), &grad.buffer(), &out.param.buffer()}, p, wgpu::groups_for(n));
  } else if (!has_buffer) {
    const auto& k = update_kernel({"param", "grad"}, {"param_out", "momentum_buffer_out"}, kSgdParams,
                                  str_cat(kSgdHead, kSgdFirstBuffer, kSgdMomentum, kSgdTail));
    wgpu::dispatch(k, {&param.buffer(), &grad.buffer(), &out.param.buffer(), &out.buffer->buffer()},
                   p, wgpu::groups_for(n));
  } else {
    const auto& k = update_kernel({"param", "grad", "momentum_buffer"}, {"param_out", "momentum_buffer_out"}, kSgdParams,
                                  str_cat(kSgdHead, kSgdNextBuffer, kSgdMomentum, kSgdTail));
    wgpu::dispatch(k, {&param.buffer(), &grad.buffer(), &buffer->buffer(), &out.param.buffer(),
                       &out.buffer->buffer()},
                   p, wgpu::groups_for(n));
  }
  return out;
}

}  // namespace kiln::optim::fused
