#pragma once
// WGSL helper functions for the Wgpu backend's kernels: f32 arithmetic that stays exact where
// SwiftShader (and other WebGPU implementations) would not, and ports of the Cpu backend's
// math kernels, so that a WGSL kernel computes what the Cpu kernel computes.
//
// Why not WGSL's builtins: WGSL lets an implementation assume finite math and flush
// subnormals. SwiftShader does both: subnormal inputs of + - * / and comparisons read as 0
// (1e-38 > 0 is false, 0 / 1e-38 is nan), max(nan, 0) = 0, `x != x` is false for nan, and
// its exp/log/sin/... are not xsimd's. So:
//   - comparisons of f32 (f_lt, f_le, f_eq) and sign tests work on the bits;
//   - f_mul, f_div, f_sqrt, f_ceil, f_floor, f_log, f_pow, f_fmod take subnormal inputs at
//     their value (normalised from the bits); results in the subnormal range are still
//     flushed to ±0 by the hardware (an absolute error below 2^-126);
//   - exp, expm1, log, log1p, sin, cos, tanh, erf, erfc are xsimd 8.1's f32 algorithms (the
//     Cpu backend's kernels, cpu/kernels/unary.hpp), operation for operation, so results
//     agree to the last bit or an ulp (both round every step in f32; nothing is fused).
//     sin/cos reduce arguments above 64π exactly (Payne–Hanek in 32-bit integers), as xsimd
//     does in double;
//   - f_pow is powf to about 1 ulp (log2 and the product in double-f32), f_fmod is exact.
//
//   - SwiftShader's SPIR-V optimiser (spirv-opt) reassociates float arithmetic with constant
//     operands ((x + 1) - 1 -> x, x / 6 -> x·(1/6)) and factors a·b + a·c -> a·(b + c).
//     The helpers write their constants as kf(bits) / kc(literal), values the optimiser
//     cannot see through (they xor g_zero, a private 0 the kernel loads at run time).
//
// Names: f_* take and return f32, i_* i32. is_nan_f32, is_inf_f32, nan_f32 and inf_f32 come
// from wgpu::kPrelude, which every kernel starts with. A kernel whose helpers declare
// g_zero (the returned text contains "g_zero") must begin main with `g_zero = gid.z;`
// (gid: its global_invocation_id; z is 0 for groups_for's 2-D grids).
#include <string>
#include <string_view>

namespace kiln::wgpu {

/// The WGSL declarations of the helpers `code` uses (by name, with the helpers they use in
/// turn), to prepend to it after kPrelude. Empty when it uses none.
std::string wgsl_helpers(std::string_view code);

}  // namespace kiln::wgpu
