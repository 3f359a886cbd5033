#pragma once
// Single-precision GEMM of the Cpu backend: C = alpha·op(A)·op(B) + beta·C.
//
// The structure is BLIS's / GotoBLAS's (Van Zee & van de Geijn, "BLIS: A Framework for
// Rapidly Instantiating BLAS Functionality", TOMS 2015): the k dim is cut into KC-deep
// slabs, B's slab is packed into NR-column micro-panels, A's into MR-row micro-panels of an
// MC-row block, and a register-tiled MR x NR micro-kernel (micro_kernel.hpp) walks them.
// Operands are strided views, so a transposed operand is multiplied without a copy
// (swap its strides). Packing buffers are thread_local and reused.
//
// Threads: a product of at least 2·thread_work multiply-adds is split over the kernels'
// thread pool (kiln::set_num_threads) into blocks of whole register tiles: blocks of C's
// columns (each thread packs its own B panels and all of A) or of its rows (the reverse),
// whichever the cost model below prefers. Every element of C is still computed by one
// thread with the same micro-kernel call sequence and KC slabs as on one thread, so results
// are bit-identical for any thread count. Called from inside a pool task (a convolution's
// per-image work) it runs on the calling thread.
//
// Accuracy: products are accumulated in f32 (fused multiply-adds where the arch has FMA,
// mul + add in WASM), in k order, as OpenBLAS's SGEMM and PyTorch's CPU matmul do; no
// double or compensated accumulation. An element's error is within γ(k)·Σ_p |a_ip·b_pj|,
// γ(k) = k·u / (1 - k·u), u = 2^-24 (Higham, "Accuracy and Stability of Numerical
// Algorithms", §3.1): about k·6e-8 of Σ|a||b|, e.g. 6e-4·Σ|a||b| for k = 10^4 in the worst
// case (typical errors grow like √k). Results can differ in the last bits between
// instruction sets (FMA or not) and blockings (where the KC slabs split the sum).
//
// This header holds no xsimd: the arch-templated driver lives in driver.hpp, instantiated
// per instruction set in engine/src/cpu/arch/gemm_{sse2,avx2,avx512}.cpp.
#include <cstddef>
#include <cstdint>

namespace kiln::cpu::gemm {

/// A read-only m x n view: element (i, j) is data[i·row_stride + j·col_stride].
/// Strides are in elements and may be any value (0 repeats a row / column).
struct ConstMatrixView {
  const float* data = nullptr;
  std::ptrdiff_t row_stride = 0;
  std::ptrdiff_t col_stride = 1;
};

/// A writable view with the same addressing. Distinct (i, j) must address distinct floats.
struct MatrixView {
  float* data = nullptr;
  std::ptrdiff_t row_stride = 0;
  std::ptrdiff_t col_stride = 1;
};

/// Arguments of one product: C[m x n] = alpha·A[m x k]·B[k x n] + beta·C.
/// When beta == 0, C is not read (so nan or uninitialised memory there is overwritten, as in
/// BLAS). k == 0 gives C = beta·C. A and B must not overlap C.
struct SgemmArgs {
  std::size_t m = 0;
  std::size_t n = 0;
  std::size_t k = 0;
  float alpha = 1.0f;
  ConstMatrixView a;
  ConstMatrixView b;
  float beta = 0.0f;
  MatrixView c;
};

/// Cache blocking of the driver, in elements. mr/nr are fixed per arch (register tile);
/// kc/mc/nc may be overridden for tuning (0 keeps the arch default). thread_work is the
/// least number of multiply-adds (m·n·k) worth a thread: a product runs on at most
/// m·n·k / thread_work threads (0 keeps the default, measured with bench_gemm).
struct Blocking {
  std::size_t mr = 0;
  std::size_t nr = 0;
  std::size_t kc = 0;
  std::size_t mc = 0;
  std::size_t nc = 0;
  std::size_t thread_work = 0;
};

/// C = alpha·A·B + beta·C with the best instruction set of this machine.
/// Throws: OutOfMemoryError if the packing buffers cannot be allocated (they are kept per
/// thread and reused, so this can only happen on the first, or a larger, call).
void sgemm(const SgemmArgs& args);

/// Same, with the cache blocking overridden (benchmarks and tuning only).
void sgemm(const SgemmArgs& args, const Blocking& blocking);

/// The blocking sgemm uses on this machine (its mr, nr and default kc, mc, nc).
Blocking default_blocking() noexcept;

/// Instruction sets the GEMM is compiled for, for tests that cover each one: "avx512f",
/// "fma3+avx2" and "sse2" natively, "sse4.1" (lowered to SIMD128) in WebAssembly.
/// `sgemm_with_arch` runs the product with the named one and returns false (doing nothing)
/// if this machine lacks it or the name is unknown.
bool sgemm_with_arch(const char* arch, const SgemmArgs& args, const Blocking& blocking);

/// true when the micro-kernel's multiply-adds are WebAssembly f32x4.relaxed_madd (the
/// relaxed-SIMD build, cpu/madd.hpp), false everywhere else. backendInfo().build of the
/// package reads it (bindings/js_tensor.cpp).
bool madd_is_relaxed() noexcept;

}  // namespace kiln::cpu::gemm
