// The arch-independent entry of the GEMM: resolves the blocking, owns the per-thread
// packing buffer, splits large products over the thread pool, and dispatches to the best
// instruction set (driver.hpp).
#include "cpu/gemm/gemm.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string_view>

#include "core/parallel.hpp"
#include "cpu/dispatch.hpp"
#include "cpu/gemm/driver.hpp"
#include "cpu/madd.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/core/thread_pool.hpp"

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
        throw_error<OutOfMemoryError>("matmul: cannot allocate ", floats * sizeof(float),
                                      " bytes of packing buffer");
      }
      capacity_ = floats;
    }
    return data_;
  }

 private:
  float* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// Multiply-adds worth a thread (a product splits from 2·2^19 ≈ 1M, ~15 µs on one AVX-512
/// core). A split costs ~3-4 µs of CPU on top (waking the pool, packing the shared operand
/// twice; bench_gemm BM_SgemmThreads with KILN_GEMM_THREAD_WORK=1 on 16..64 x 64 x 64..128),
/// so halving a product pays from ~8 µs; the margin covers the wake-up latency, which the
/// shared 2-core machine did not let us measure (bench/RESULTS.md "Threads").
constexpr std::size_t kDefaultThreadWork = std::size_t{1} << 19;

template <class Arch>
Blocking resolve(Arch arch, const Blocking& override_with) noexcept {
  Blocking b = SgemmBlocking{}(arch);
  const auto round_up = [](std::size_t x, std::size_t to) { return (x + to - 1) / to * to; };
  if (override_with.kc) b.kc = override_with.kc;
  if (override_with.mc) b.mc = round_up(override_with.mc, b.mr);
  if (override_with.nc) b.nc = round_up(override_with.nc, b.nr);
  b.thread_work = override_with.thread_work ? override_with.thread_work : kDefaultThreadWork;
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

/// How a product is cut over threads: `parts` blocks of whole register tiles along C's
/// columns (by_columns) or rows; parts == 1 runs it on the calling thread.
struct Split {
  std::size_t parts = 1;
  bool by_columns = true;
};

/// Picks the split of an m x n x k product with the smaller estimated time of its slowest
/// thread: the multiply-adds of its tiles plus the packing it does, each packed float
/// counted as kPackCost multiply-adds (packing moves one float per cycle or so, the
/// micro-kernel does 16-32 multiply-adds per cycle). Cutting columns, every thread packs
/// all of A (m·k) and its own columns of B; cutting rows, all of B and its rows of A.
Split choose_split(std::size_t m, std::size_t n, std::size_t k, const Blocking& b) {
  using U = std::uint64_t;  // m·n·k overflows size_t on wasm32
  const auto threads = static_cast<U>(num_threads());
  const U work = U{m} * n * k, per_thread = b.thread_work;
  if (threads <= 1 || k == 0 || work < 2 * per_thread) return {};
  const U most = std::min(threads, work / per_thread);
  constexpr U kPackCost = 16;
  const U col_tiles = (n + b.nr - 1) / b.nr, row_tiles = (m + b.mr - 1) / b.mr;
  const auto cost = [&](U tiles, U tile, U other, U parts) {
    const U mine = (tiles + parts - 1) / parts * tile;  // the largest block
    return mine * other * k + kPackCost * (other * k + mine * k);
  };
  const U col_parts = std::min(most, col_tiles), row_parts = std::min(most, row_tiles);
  if (col_parts <= 1 && row_parts <= 1) return {};
  const U col_cost = cost(col_tiles, b.nr, m, col_parts);
  const U row_cost = cost(row_tiles, b.mr, n, row_parts);
  if (row_parts > 1 && (col_parts <= 1 || row_cost < col_cost)) {
    return {static_cast<std::size_t>(row_parts), false};
  }
  return {static_cast<std::size_t>(col_parts), true};
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
  const Split split = choose_split(run.m, run.n, run.k, b);
  if (split.parts <= 1) {
    float* ws = reserve_workspace(workspace_floats(b, run.m, run.n, run.k));
    SgemmKernel{}(arch, run, b, ws);
    return;
  }
  // Blocks start on tile boundaries, so a tile is an edge tile (stored through the stack
  // tile, with separate rounding of alpha and beta) exactly when it is one unsplit.
  const std::size_t tile = split.by_columns ? b.nr : b.mr;
  const std::size_t extent = split.by_columns ? run.n : run.m;
  const std::size_t tiles = (extent + tile - 1) / tile;
  detail::parallel_for(static_cast<std::int64_t>(split.parts),
                       [&](std::int64_t part_begin, std::int64_t part_end) {
    const auto tile_at = [&](std::int64_t part) {
      return static_cast<std::size_t>(part) * tiles / split.parts;
    };
    const std::size_t begin = tile_at(part_begin) * tile;
    const std::size_t end = std::min(extent, tile_at(part_end) * tile);
    if (begin >= end) return;
    const auto offset = static_cast<std::ptrdiff_t>(begin);
    SgemmArgs part = run;
    if (split.by_columns) {
      part.n = end - begin;
      part.b.data += offset * run.b.col_stride;
      part.c.data += offset * run.c.col_stride;
    } else {
      part.m = end - begin;
      part.a.data += offset * run.a.row_stride;
      part.c.data += offset * run.c.row_stride;
    }
    float* ws = reserve_workspace(workspace_floats(b, part.m, part.n, part.k));
    SgemmKernel{}(arch, part, b, ws);
  });
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

bool madd_is_relaxed() noexcept { return simd::madd_is_relaxed(); }

Blocking default_blocking() noexcept {
  Blocking b = cpu::dispatch(SgemmBlocking{});
  b.thread_work = kDefaultThreadWork;
  return b;
}

}  // namespace kiln::cpu::gemm
