// The fused optimizer updates of the Cpu backend (kiln/optim/fused.hpp): pick the output
// buffers, run the kernel of cpu/kernels/optim.hpp for the best instruction set.
#include "kiln/optim/fused.hpp"

#include <atomic>
#include <utility>

#include "cpu/dispatch.hpp"
#include "cpu/kernels/optim.hpp"
#include "cpu/parallel_plan.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::optim::fused {
namespace {

namespace kernels = cpu::kernels;

/// `t`'s own buffer when the caller holds its only handle, else a new one of its shape.
CpuTensor output_for(CpuTensor& t) {
  return t.is_unique() ? std::move(t) : CpuTensor(t.shape(), DType::F32);
}

/// Throws ShapeError unless `t` has `param`'s shape (the op chains would broadcast or throw;
/// the fused kernels read every operand element by element).
void check_shape(const char* op, const char* what, const CpuTensor& t, const CpuTensor& param) {
  if (!(t.shape() == param.shape())) {
    throw_error<ShapeError>(op, ": the ", what, " has shape ", t.shape(), ", the parameter ",
                            param.shape());
  }
}

/// Moves every operand pointer of an update kernel's arguments `by` elements.
void shift(kernels::AdamStepArgs& a, std::int64_t by) {
  auto move = [by](auto*& p) {
    if (p != nullptr) p += by;
  };
  move(a.param), move(a.grad), move(a.moment_1), move(a.moment_2), move(a.max_moment_2);
  move(a.param_out), move(a.moment_1_out), move(a.moment_2_out), move(a.max_moment_2_out);
}
void shift(kernels::SgdStepArgs& a, std::int64_t by) {
  auto move = [by](auto*& p) {
    if (p != nullptr) p += by;
  };
  move(a.param), move(a.grad), move(a.buffer), move(a.param_out), move(a.buffer_out);
}

/// Runs the element-wise update kernel over args.n elements, split across the thread pool
/// when large (a map: bit-identical for every split); the finiteness flags are the AND of
/// the chunks' flags (an order-free combination).
template <class K, class Args>
kernels::UpdateFiniteFlags run_split(K kernel, const Args& args) {
  std::atomic<bool> grad_finite{true}, param_finite{true};
  cpu::parallel_elements(static_cast<std::int64_t>(args.n), [&](std::int64_t begin,
                                                                std::int64_t end) {
    Args a = args;
    a.n = static_cast<std::size_t>(end - begin);
    shift(a, begin);
    kernels::UpdateFiniteFlags f;
    cpu::dispatch(kernel, static_cast<const Args&>(a), f);
    if (!f.grad) grad_finite.store(false, std::memory_order_relaxed);
    if (!f.param) param_finite.store(false, std::memory_order_relaxed);
  });
  kernels::UpdateFiniteFlags all;
  all.grad = grad_finite.load();
  all.param = param_finite.load();
  return all;
}

void report(const kernels::UpdateFiniteFlags& flags, UpdateFinite* finite) {
  if (finite == nullptr) return;
  finite->known = true;
  finite->grad = flags.grad;
  finite->param = flags.param;
}

}  // namespace

AdamUpdate adam_step(const CpuTensor& param, const CpuTensor& grad, CpuTensor* moment_1,
                     CpuTensor* moment_2, CpuTensor* max_moment_2, const AdamScalars& s,
                     UpdateFinite* finite) {
  constexpr const char* op = "Adam::step";
  check_shape(op, "gradient", grad, param);
  if (moment_1) check_shape(op, "first moment", *moment_1, param);
  if (moment_1) check_shape(op, "second moment", *moment_2, param);
  if (s.amsgrad && max_moment_2) check_shape(op, "maximum of the second moment", *max_moment_2, param);
  kernels::AdamStepArgs a{};
  a.param = param.data<float>();
  a.grad = grad.data<float>();
  a.n = static_cast<std::size_t>(param.num_elements());
  // Input pointers before the outputs take over any buffer.
  a.moment_1 = moment_1 ? moment_1->data<float>() : nullptr;
  a.moment_2 = moment_1 ? moment_2->data<float>() : nullptr;
  a.max_moment_2 = s.amsgrad && max_moment_2 ? max_moment_2->data<float>() : nullptr;
  AdamUpdate out{CpuTensor(param.shape(), DType::F32),
                 moment_1 ? output_for(*moment_1) : CpuTensor(param.shape(), DType::F32),
                 moment_1 ? output_for(*moment_2) : CpuTensor(param.shape(), DType::F32),
                 std::nullopt};
  if (s.amsgrad) {
    out.max_moment_2 = a.max_moment_2 ? output_for(*max_moment_2)
                                      : CpuTensor(param.shape(), DType::F32);
    a.max_moment_2_out = out.max_moment_2->data<float>();
  }
  a.param_out = out.param.data<float>();
  a.moment_1_out = out.moment_1.data<float>();
  a.moment_2_out = out.moment_2.data<float>();
  a.amsgrad = s.amsgrad;
  a.weight_decay = s.penalty.has_value();
  a.penalty = s.penalty.value_or(0.f);
  a.decoupled = s.decay_factor.has_value();
  a.decay_factor = s.decay_factor.value_or(1.f);
  a.beta_1 = s.beta_1;
  a.one_minus_beta_1 = s.one_minus_beta_1;
  a.beta_2 = s.beta_2;
  a.one_minus_beta_2 = s.one_minus_beta_2;
  a.bias_correction_2_sqrt = s.bias_correction_2_sqrt;
  a.epsilon = s.epsilon;
  a.step_size = s.step_size;
  const kernels::UpdateFiniteFlags flags = run_split(kernels::AdamStepF32{}, a);
  report(flags, finite);
  return out;
}

SgdUpdate sgd_step(const CpuTensor& param, const CpuTensor& grad, CpuTensor* buffer,
                   const SgdScalars& s, UpdateFinite* finite) {
  constexpr const char* op = "Sgd::step";
  check_shape(op, "gradient", grad, param);
  if (s.has_momentum && buffer) check_shape(op, "momentum buffer", *buffer, param);
  kernels::SgdStepArgs a{};
  a.param = param.data<float>();
  a.grad = grad.data<float>();
  a.n = static_cast<std::size_t>(param.num_elements());
  a.buffer = s.has_momentum && buffer ? buffer->data<float>() : nullptr;
  SgdUpdate out{CpuTensor(param.shape(), DType::F32), std::nullopt};
  if (s.has_momentum) {
    out.buffer = a.buffer ? output_for(*buffer) : CpuTensor(param.shape(), DType::F32);
    a.buffer_out = out.buffer->data<float>();
  }
  a.param_out = out.param.data<float>();
  a.weight_decay = s.penalty.has_value();
  a.penalty = s.penalty.value_or(0.f);
  a.has_momentum = s.has_momentum;
  a.nesterov = s.nesterov;
  a.momentum = s.momentum;
  a.one_minus_dampening = s.one_minus_dampening;
  a.lr = s.lr;
  const kernels::UpdateFiniteFlags flags = run_split(kernels::SgdStepF32{}, a);
  report(flags, finite);
  return out;
}

}  // namespace kiln::optim::fused
