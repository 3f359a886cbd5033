// The arch-independent entry of the GEMM: resolves the blocking, owns the per-thread
// packing buffer, and dispatches to the best instruction set (driver.hpp).
#include "cpu/gemm/gemm.hpp"

#include <cstdlib>
#include <new>
#include <string_view>

#include "cpu/dispatch.hpp"
#include "cpu/gemm/driver.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::cpu::gemm {
namespace {

/// A 64-byte-aligned float buffer that only grows; one per thread, reused by every call so
/// the hot path allocates nothing.
class Workspace {
 public:
  ~Workspace() { ::operator delete(data_, std::align_val_t(64)); }
  /// Throws: OutOfMemoryError.
  float* reserve(std::size_t floats) {
    if (floats > capacity_) {
      ::operator delete(data_, std::align_val_t(64));
      data_ = nullptr;
      capacity_ = 0;
      data_ = static_cast<float*>(
          ::operator new(floats * sizeof(float), std::align_val_t(64), std::nothrow));
      if (data_ == nullptr) {
        throw OutOfMemoryError(str_cat("matmul: cannot allocate ", floats * sizeof(float),
                                       " bytes of packing buffer"));
      }
      capacity_ = floats;
    }
    return data_;
  }

 private:
  float* data_ = nullptr;
  std::size_t capacity_ = 0;
};

template <class Arch>
Blocking resolve(Arch arch, const Blocking& override_with) noexcept {
  Blocking b = SgemmBlocking{}(arch);
  const auto round_up = [](std::size_t x, std::size_t to) { return (x + to - 1) / to * to; };
  if (override_with.kc) b.kc = override_with.kc;
  if (override_with.mc) b.mc = round_up(override_with.mc, b.mr);
  if (override_with.nc) b.nc = round_up(override_with.nc, b.nr);
  return b;
}

float* reserve_workspace(std::size_t floats) {
  thread_local Workspace workspace;
  return workspace.reserve(floats);
}

/// Multiply-adds the micro-kernel issues for an m x n output, edge tiles padded to full.
std::size_t padded_work(std::size_t m, std::size_t n, const Blocking& b) noexcept {
  return (m + b.mr - 1) / b.mr * b.mr * ((n + b.nr - 1) / b.nr * b.nr);
}

/// The same product transposed: Cᵀ = Bᵀ·Aᵀ (swap m and n, and each view's strides).
SgemmArgs transposed(const SgemmArgs& g) noexcept {
  SgemmArgs t = g;
  t.m = g.n;
  t.n = g.m;
  t.a = {g.b.data, g.b.col_stride, g.b.row_stride};
  t.b = {g.a.data, g.a.col_stride, g.a.row_stride};
  t.c = {g.c.data, g.c.col_stride, g.c.row_stride};
  return t;
}

template <class Arch>
void run_with(Arch arch, const SgemmArgs& args, const Blocking& blocking) {
  if (args.m == 0 || args.n == 0) return;
  const Blocking b = resolve(arch, blocking);
  // A thin output (n well under NR, e.g. 10 classes) wastes most of every register tile;
  // computed as Cᵀ = Bᵀ·Aᵀ the short side becomes the tile's rows (MR) instead. Cᵀ then has
  // a non-unit column stride, so its tiles are stored element by element: worth it only
  // when it saves a quarter of the work.
  const bool swap = padded_work(args.n, args.m, b) * 4 < padded_work(args.m, args.n, b) * 3;
  const SgemmArgs& run = swap ? transposed(args) : args;
  float* ws = reserve_workspace(workspace_floats(b, run.m, run.n, run.k));
  SgemmKernel{}(arch, run, b, ws);
}

}  // namespace

void sgemm(const SgemmArgs& args, const Blocking& blocking) {
#if defined(__EMSCRIPTEN__)
  run_with(xsimd::default_arch{}, args, blocking);
#else
  const unsigned best = selected_arch_version();
  if (Avx512::version() <= best) {
    run_with(Avx512{}, args, blocking);
  } else if (Avx2::version() <= best) {
    run_with(Avx2{}, args, blocking);
  } else {
    run_with(Sse2{}, args, blocking);
  }
#endif
}

bool sgemm_with_arch(const char* arch, const SgemmArgs& args, const Blocking& blocking) {
  const std::string_view name(arch);
#if defined(__EMSCRIPTEN__)
  if (name != xsimd::default_arch::name()) return false;
  run_with(xsimd::default_arch{}, args, blocking);
#else
  const unsigned best = xsimd::available_architectures().best;
  if (name == Avx512::name() && Avx512::version() <= best) {
    run_with(Avx512{}, args, blocking);
  } else if (name == Avx2::name() && Avx2::version() <= best) {
    run_with(Avx2{}, args, blocking);
  } else if (name == Sse2::name()) {
    run_with(Sse2{}, args, blocking);
  } else {
    return false;
  }
#endif
  return true;
}

void sgemm(const SgemmArgs& args) { sgemm(args, Blocking{}); }

Blocking default_blocking() noexcept { return cpu::dispatch(SgemmBlocking{}); }

}  // namespace kiln::cpu::gemm
