#pragma once
// Fused optimizer updates (f32): one pass over a parameter, its gradient and its state that
// computes the updated parameter and the new state (Adam/AdamW's moments, SGD's momentum
// buffer) and tells whether the gradient and the updated parameter are all finite, for the
// non-finite guard of train::train_step (kiln/train/step.hpp), which then needs no separate
// scans. Used by the rules of kiln/optim/adam.hpp, adamw.hpp and sgd.hpp on the Cpu backend
// through engine/src/optim/fused_cpu.cpp.
//
// Bit-for-bit the element-wise op chains of those rules (each op rounded to f32 as the
// BinaryF32/UnaryF32 kernels round it, the scalars converted to f32 as binary_scalar
// converts them): the per-arch TUs (cpu/arch/optim_*.cpp) are compiled with
// -ffp-contract=off so that no multiply and add are fused into an FMA.
//
// Outputs may alias inputs of the same element (param_out = param, moment_1_out = moment_1,
// ...): each element is read before it is written. The last partial vector goes through a
// buffer whose unused lanes repeat the first element of the tail, so every element sees the
// same code and the finiteness flags see only real elements' values. Kernels do not throw.
#include <cstddef>

#include "cpu/dispatch.hpp"
#include "cpu/kernels/binary.hpp"
#include "cpu/kernels/unary.hpp"

namespace kiln::cpu::kernels {

/// Whether every gradient element read and every updated parameter written was finite.
struct UpdateFiniteFlags {
  bool grad = true;
  bool param = true;
};

/// Operands of AdamStepF32 (kiln/optim/adam.hpp's chain, one element):
///   g  = grad (+ param · penalty if weight_decay)
///   m' = moment_1 ? moment_1 · beta_1 + g · one_minus_beta_1 : g · one_minus_beta_1
///   v' = moment_2 ? moment_2 · beta_2 + (g · g) · one_minus_beta_2 : (g · g) · one_minus_beta_2
///   amsgrad: w' = max_moment_2 ? max(max_moment_2, v') : v'        (torch.maximum)
///   change = m' / (sqrt(amsgrad ? w' : v') / bias_correction_2_sqrt + epsilon) · step_size
///   param' = (decoupled ? param · decay_factor : param) - change    (AdamW: decay first)
struct AdamStepArgs {
  const float* param;
  const float* grad;
  const float* moment_1;      ///< null on the first step (no state)
  const float* moment_2;      ///< null when moment_1 is
  const float* max_moment_2;  ///< null without amsgrad or without a stored maximum
  float* param_out;
  float* moment_1_out;
  float* moment_2_out;
  float* max_moment_2_out;  ///< written when amsgrad
  std::size_t n;
  bool amsgrad;
  bool weight_decay;  ///< Adam's L2 (coupled): g = grad + param · penalty
  float penalty;
  bool decoupled;  ///< AdamW's decay: param · decay_factor before subtracting the change
  float decay_factor;
  float beta_1, one_minus_beta_1, beta_2, one_minus_beta_2;
  float bias_correction_2_sqrt, epsilon, step_size;
};

/// Operands of SgdStepF32 (kiln/optim/sgd.hpp's chain, one element):
///   g = grad (+ param · penalty if weight_decay)
///   momentum: b' = buffer ? buffer · momentum + g · one_minus_dampening : g
///             g  = nesterov ? g + b' · momentum : b'
///   param' = param - g · lr
struct SgdStepArgs {
  const float* param;
  const float* grad;
  const float* buffer;  ///< null on the first step with momentum (or without momentum)
  float* param_out;
  float* buffer_out;  ///< written when has_momentum
  std::size_t n;
  bool weight_decay;
  float penalty;
  bool has_momentum;
  bool nesterov;
  float momentum, one_minus_dampening;
  float lr;
};

struct AdamStepF32 {
  template <class Arch>
  void operator()(Arch, const AdamStepArgs& a, UpdateFiniteFlags& finite) const;
};
struct SgdStepF32 {
  template <class Arch>
  void operator()(Arch, const SgdStepArgs& a, UpdateFiniteFlags& finite) const;
};

namespace optim_detail {

template <class V>
V add(const V& a, const V& b) {
  return binary_detail::F32<BinaryOp::Add>::vec(a, b);
}
template <class V>
V sub(const V& a, const V& b) {
  return binary_detail::F32<BinaryOp::Sub>::vec(a, b);
}
template <class V>
V mul(const V& a, const V& b) {
  return binary_detail::F32<BinaryOp::Mul>::vec(a, b);
}
template <class V>
V div(const V& a, const V& b) {
  return binary_detail::F32<BinaryOp::Div>::vec(a, b);
}

/// Runs `body(load, store)` over [0, n) by whole vectors, then once for the tail with loads
/// from / stores to padded buffers.
template <class Arch, class Body>
void for_each_vector(std::size_t n, Body&& body) {
  using Batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = Batch::size;
  const std::size_t n_vec = n - n % W;
  std::size_t i = 0;
  auto load = [&](const float* p) { return Batch::load_unaligned(p + i); };
  auto store = [&](float* p, const Batch& v) { v.store_unaligned(p + i); };
  for (; i < n_vec; i += W) body(load, store);
  if (i == n) return;
  const std::size_t rest = n - i;
  auto load_tail = [&](const float* p) {
    alignas(64) float buf[W];
    for (std::size_t j = 0; j < W; ++j) buf[j] = p[i + (j < rest ? j : 0)];
    return Batch::load_aligned(buf);
  };
  auto store_tail = [&](float* p, const Batch& v) {
    alignas(64) float buf[W];
    v.store_aligned(buf);
    for (std::size_t j = 0; j < rest; ++j) p[i + j] = buf[j];
  };
  body(load_tail, store_tail);
}

/// x - x: 0 for a finite x, nan for inf or nan; summed into `acc`, which stays 0 only if
/// every x was finite.
template <class V>
void track_finite(V& acc, const V& x) {
  acc = acc + (x - x);
}
template <class V>
bool all_finite(const V& acc) {
  return !xsimd::any(xsimd::isnan(acc));
}

}  // namespace optim_detail

template <class Arch>
void AdamStepF32::operator()(Arch, const AdamStepArgs& a, UpdateFiniteFlags& finite) const {
  using namespace optim_detail;
  using V = xsimd::batch<float, Arch>;
  V grad_acc(0.f), param_acc(0.f);
  const V beta_1(a.beta_1), one_minus_beta_1(a.one_minus_beta_1), beta_2(a.beta_2),
      one_minus_beta_2(a.one_minus_beta_2), bc2(a.bias_correction_2_sqrt), eps(a.epsilon),
      step_size(a.step_size), penalty(a.penalty), decay(a.decay_factor);
  for_each_vector<Arch>(a.n, [&](auto load, auto store) {
    const V p = load(a.param);
    V g = load(a.grad);
    track_finite(grad_acc, g);
    if (a.weight_decay) g = add(g, mul(p, penalty));
    const V squared = mul(g, g);
    const V m = a.moment_1 ? add(mul(load(a.moment_1), beta_1), mul(g, one_minus_beta_1))
                           : mul(g, one_minus_beta_1);
    const V v = a.moment_1 ? add(mul(load(a.moment_2), beta_2), mul(squared, one_minus_beta_2))
                           : mul(squared, one_minus_beta_2);
    V v_hat = v;
    if (a.amsgrad) {
      if (a.max_moment_2) v_hat = binary_detail::F32<BinaryOp::Max>::vec(load(a.max_moment_2), v);
      store(a.max_moment_2_out, v_hat);
    }
    const V denom = add(div(unary_detail::F32<UnaryOp::Sqrt>::apply(v_hat), bc2), eps);
    const V change = mul(div(m, denom), step_size);
    const V base = a.decoupled ? mul(p, decay) : p;
    const V updated = sub(base, change);
    track_finite(param_acc, updated);
    store(a.moment_1_out, m);
    store(a.moment_2_out, v);
    store(a.param_out, updated);
  });
  finite.grad = all_finite(grad_acc);
  finite.param = all_finite(param_acc);
}

template <class Arch>
void SgdStepF32::operator()(Arch, const SgdStepArgs& a, UpdateFiniteFlags& finite) const {
  using namespace optim_detail;
  using V = xsimd::batch<float, Arch>;
  V grad_acc(0.f), param_acc(0.f);
  const V penalty(a.penalty), momentum(a.momentum), one_minus_dampening(a.one_minus_dampening),
      lr(a.lr);
  for_each_vector<Arch>(a.n, [&](auto load, auto store) {
    const V p = load(a.param);
    V g = load(a.grad);
    track_finite(grad_acc, g);
    if (a.weight_decay) g = add(g, mul(p, penalty));
    if (a.has_momentum) {
      const V buf = a.buffer ? add(mul(load(a.buffer), momentum), mul(g, one_minus_dampening)) : g;
      store(a.buffer_out, buf);
      g = a.nesterov ? add(g, mul(buf, momentum)) : buf;
    }
    const V updated = sub(p, mul(g, lr));
    track_finite(param_acc, updated);
    store(a.param_out, updated);
  });
  finite.grad = all_finite(grad_acc);
  finite.param = all_finite(param_acc);
}

}  // namespace kiln::cpu::kernels

// clang-format off
#define KILN_OPTIM_KERNELS(PREFIX, ARCH)                                                      \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::AdamStepF32, ARCH,                       \
                       const ::kiln::cpu::kernels::AdamStepArgs&,                             \
                       ::kiln::cpu::kernels::UpdateFiniteFlags&)                              \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::SgdStepF32, ARCH,                        \
                       const ::kiln::cpu::kernels::SgdStepArgs&,                              \
                       ::kiln::cpu::kernels::UpdateFiniteFlags&)
// clang-format on
#define KILN_INSTANCES_FILE "cpu/kernels/optim_instances.inc"
#include "cpu/kernels/extern_instances.inc"
