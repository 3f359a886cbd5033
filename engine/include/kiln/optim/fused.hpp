#pragma once
/// Fused optimizer updates of the Cpu and Wgpu backends: one pass over a parameter, its
/// gradient and its state computes the updated parameter and the new state, what the rules'
/// element-wise op chains compute, op for op in the same order (adam.hpp, adamw.hpp, sgd.hpp;
/// the chains stay the definition and the path of other backends).
///   - Cpu: bit-for-bit the chain; also tells whether the gradient and the updated parameter
///     are all finite, so that train::train_step's non-finite guard (kiln/train/step.hpp)
///     needs no scans of its own. Kernels: engine/src/cpu/kernels/optim.hpp; entry points:
///     engine/src/optim/fused_cpu.cpp.
///   - Wgpu: one compute dispatch per parameter instead of the chain's ten or so (WGSL, with
///     the chain kernels' subnormal-exact f_mul/f_div/f_sqrt/f_max); `finite` is left
///     unknown (train::deferred_train_step checks on the device). AMSGrad keeps the chain
///     there (its 9 storage buffers pass WebGPU's default limit of 8 per shader stage).
///     Entry points: engine/src/wgpu/fused_optim.cpp (WebAssembly only).
///
/// Buffers: the updated parameter is always a new buffer (the module keeps the old one until
/// the step is committed); on Cpu a state tensor is updated in its own buffer when the caller
/// holds its only handle (OptimizerAdaptor::step) and written to a new one otherwise
/// (OptimizerAdaptor::stage, which keeps the old state until commit); on Wgpu always to a new
/// one (a dispatch cannot bind one buffer twice; the pool makes it cheap).
#include <optional>
#include <type_traits>

#include "kiln/cpu/cpu.hpp"

namespace kiln {
class WgpuTensor;
}

namespace kiln::optim {

/// Whether the gradient a rule read and the parameter it wrote are all finite, when the rule
/// found out during its update (`known`; the fused Cpu kernels do); OptimizerAdaptor::stage
/// scans for itself otherwise.
struct UpdateFinite {
  bool known = false;
  bool grad = true;   ///< every element of the gradient the rule was given is finite
  bool param = true;  ///< every element of the updated parameter is finite
};

namespace fused {

/// True for the backends with fused optimizer kernels: those whose float primitive is the
/// Cpu backend's (Cpu as the inner backend). A specialisation to false makes the rules take
/// their op chains (tests/native/optim/fused_test.cpp compares the two that way).
template <class I>
inline constexpr bool kHasFusedOptim = std::is_same_v<typename I::FloatTensor, CpuTensor> ||
                                       std::is_same_v<typename I::FloatTensor, WgpuTensor>;

/// Whether the fused Adam/AdamW update takes this configuration on backend I (with
/// kHasFusedOptim<I>): always on Cpu; on Wgpu not with AMSGrad (see the top of this file).
template <class I>
constexpr bool fuses_adam(bool amsgrad) {
  return std::is_same_v<typename I::FloatTensor, CpuTensor> || !amsgrad;
}

/// Adam's / AdamW's update of one f32 tensor (kiln/optim/adam.hpp; scalars already
/// converted to f32 as the chain's binary_scalar converts them).
struct AdamScalars {
  bool amsgrad = false;
  std::optional<float> penalty;       ///< Adam's L2 weight decay (coupled)
  std::optional<float> decay_factor;  ///< AdamW: 1 - lr · weight_decay (when that is not 0)
  float beta_1, one_minus_beta_1, beta_2, one_minus_beta_2;
  float bias_correction_2_sqrt, epsilon, step_size;
};
/// The new parameter and moments (max_moment_2 with amsgrad), tensors of P.
template <class P>
struct AdamUpdateOf {
  P param, moment_1, moment_2;
  std::optional<P> max_moment_2;
};
using AdamUpdate = AdamUpdateOf<CpuTensor>;
/// Moments null on the first step (max_moment_2 null also without a stored maximum); a
/// moment held only by the caller is updated in its own buffer. Shapes: all equal.
/// Throws: ShapeError if the gradient's or a moment's shape differs from the parameter's.
AdamUpdate adam_step(const CpuTensor& param, const CpuTensor& grad, CpuTensor* moment_1,
                     CpuTensor* moment_2, CpuTensor* max_moment_2, const AdamScalars& s,
                     UpdateFinite* finite);
/// The same on Wgpu (one dispatch; `finite` untouched). Throws: ShapeError as above;
/// ValueError with s.amsgrad (see fuses_adam); DeviceError / OutOfMemoryError as every Wgpu op.
AdamUpdateOf<WgpuTensor> adam_step(const WgpuTensor& param, const WgpuTensor& grad,
                                   WgpuTensor* moment_1, WgpuTensor* moment_2,
                                   WgpuTensor* max_moment_2, const AdamScalars& s,
                                   UpdateFinite* finite);

/// SGD's update of one f32 tensor (kiln/optim/sgd.hpp).
struct SgdScalars {
  std::optional<float> penalty;  ///< L2 weight decay
  bool has_momentum = false;
  bool nesterov = false;
  float momentum = 0.f, one_minus_dampening = 1.f;
  float lr = 0.f;
};
/// The new parameter and momentum buffer (with momentum), tensors of P.
template <class P>
struct SgdUpdateOf {
  P param;
  std::optional<P> buffer;
};
using SgdUpdate = SgdUpdateOf<CpuTensor>;
/// `buffer` null without momentum or on its first step; a buffer held only by the caller
/// is updated in its own buffer. Shapes: all equal.
/// Throws: ShapeError if the gradient's or the buffer's shape differs from the parameter's.
SgdUpdate sgd_step(const CpuTensor& param, const CpuTensor& grad, CpuTensor* buffer,
                   const SgdScalars& s, UpdateFinite* finite);
/// The same on Wgpu (one dispatch; `finite` untouched). Throws: ShapeError as above;
/// DeviceError / OutOfMemoryError as every Wgpu op.
SgdUpdateOf<WgpuTensor> sgd_step(const WgpuTensor& param, const WgpuTensor& grad,
                                 WgpuTensor* buffer, const SgdScalars& s, UpdateFinite* finite);

}  // namespace fused
}  // namespace kiln::optim
