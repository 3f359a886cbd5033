// The packed SGEMM behind matmul (engine/src/cpu/gemm/), called directly: strided and
// transposed operands, alpha and beta, and small cache blocks so every loop of the driver
// runs several times on small matrices. Expected values: a double triple loop, with the
// f32 error bound explained in tests/native/tensor/matmul_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

// The GEMM is private to the engine; its header needs only the standard library.
#include "../../../engine/src/cpu/gemm/gemm.hpp"

namespace gemm = kiln::cpu::gemm;

namespace {

std::vector<float> random_values(std::size_t count, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> values(count);
  for (auto& v : values) v = static_cast<float>(gen() >> 8) * 0x1.0p-23f - 1.0f;
  return values;
}

/// How an operand is laid out in memory.
enum class Layout { RowMajor, ColMajor, Strided };

struct Operand {
  std::vector<float> storage;
  gemm::ConstMatrixView view;
  /// Element (i, j) of the logical matrix.
  float at(std::size_t i, std::size_t j) const {
    return view.data[static_cast<std::ptrdiff_t>(i) * view.row_stride +
                     static_cast<std::ptrdiff_t>(j) * view.col_stride];
  }
};

/// A rows x cols matrix of random values stored as `layout` (Strided: column-major with a
/// padded leading dim and every other column, so neither stride is 1).
Operand make_operand(std::size_t rows, std::size_t cols, Layout layout, std::uint32_t seed) {
  Operand op;
  const auto r = static_cast<std::ptrdiff_t>(rows), c = static_cast<std::ptrdiff_t>(cols);
  switch (layout) {
    case Layout::RowMajor:
      op.storage = random_values(rows * cols, seed);
      op.view = {op.storage.data(), c, 1};
      break;
    case Layout::ColMajor:
      op.storage = random_values(rows * cols, seed);
      op.view = {op.storage.data(), 1, r};
      break;
    case Layout::Strided:
      op.storage = random_values((rows + 3) * cols * 2 + 1, seed);
      op.view = {op.storage.data(), 1, 2 * (r + 3)};
      break;
  }
  return op;
}

struct Case {
  std::size_t m, n, k;
  Layout a_layout, b_layout;
  float alpha, beta;
  gemm::Blocking blocking;
};

/// Every instruction set the GEMM is built for; those this machine lacks are skipped.
#if defined(__EMSCRIPTEN__)
const char* const kArchs[] = {"sse4.1"};
#else
const char* const kArchs[] = {"avx512f", "fma3+avx2", "sse2"};
#endif

/// Runs C = alpha·A·B + beta·C0 with `arch` on C with row stride n + 5 and checks every
/// element, and that the padding between C's rows is untouched. Returns false if this
/// machine lacks `arch`.
bool check_case(const char* arch, const Case& t, std::uint32_t seed) {
  const Operand a = make_operand(t.m, t.k, t.a_layout, seed);
  const Operand b = make_operand(t.k, t.n, t.b_layout, seed + 1);
  const std::size_t ldc = t.n + 5;
  const float sentinel = -12345.0f;
  std::vector<float> c0 = random_values(t.m * ldc, seed + 2);
  for (std::size_t i = 0; i < t.m; ++i) {
    for (std::size_t j = t.n; j < ldc; ++j) c0[i * ldc + j] = sentinel;
  }
  std::vector<float> c = c0;

  gemm::SgemmArgs args;
  args.m = t.m;
  args.n = t.n;
  args.k = t.k;
  args.alpha = t.alpha;
  args.a = a.view;
  args.b = b.view;
  args.beta = t.beta;
  args.c = {c.data(), static_cast<std::ptrdiff_t>(ldc), 1};
  if (!gemm::sgemm_with_arch(arch, args, t.blocking)) return false;

  const double u = std::ldexp(1.0, -24);
  const double gamma = (t.k + 3) * u / (1.0 - (t.k + 3) * u);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < t.m; ++i) {
    for (std::size_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= t.n) {
        bad += got != sentinel;
        continue;
      }
      double sum = 0.0, abs_sum = 0.0;
      for (std::size_t p = 0; p < t.k; ++p) {
        const double term = static_cast<double>(a.at(i, p)) * b.at(p, j);
        sum += term;
        abs_sum += std::fabs(term);
      }
      const double c_old = c0[i * ldc + j];
      const double expected = t.alpha * sum + t.beta * c_old;
      const double bound = gamma * (std::fabs(t.alpha) * abs_sum + std::fabs(t.beta * c_old));
      if (!(std::fabs(got - expected) <= bound)) {
        if (bad == 0) {
          ADD_FAILURE() << arch << ": m=" << t.m << " n=" << t.n << " k=" << t.k << " at (" << i
                        << ", " << j << "): got " << got << ", expected " << expected << " +- "
                        << bound;
        }
        ++bad;
      }
    }
  }
  EXPECT_EQ(bad, 0u) << arch << ": m=" << t.m << " n=" << t.n << " k=" << t.k;
  return true;
}

/// Runs `check` for every arch and fails if none could run.
template <class F>
void for_each_arch(F check) {
  int ran = 0;
  for (const char* arch : kArchs) ran += check(arch) ? 1 : 0;
  EXPECT_GT(ran, 0) << "no instruction set available";
}

/// Blocks small enough that a few dozen rows, columns and k steps span several of each.
gemm::Blocking tiny_blocking() {
  gemm::Blocking b;
  b.kc = 7;
  b.mc = 1;  // rounded up to one register tile (MR rows)
  b.nc = 1;  // rounded up to NR columns
  return b;
}

}  // namespace

TEST(Sgemm, TransposedOperandsNeedNoCopy) {
  for_each_arch([](const char* arch) {
    bool ran = true;
    for (const Layout la : {Layout::RowMajor, Layout::ColMajor, Layout::Strided}) {
      for (const Layout lb : {Layout::RowMajor, Layout::ColMajor, Layout::Strided}) {
        // Edge panels of 1 and 2 rows / columns (the packing transposes 4, then 2, then 1).
        ran = check_case(arch, {37, 45, 29, la, lb, 1.0f, 0.0f, {}}, 7) && ran;
        ran = check_case(arch, {38, 46, 40, la, lb, 1.0f, 0.0f, {}}, 8) && ran;
      }
    }
    return ran;
  });
}

TEST(Sgemm, ThinOutputsInEveryLayout) {
  // n far below NR: sgemm computes Cᵀ = Bᵀ·Aᵀ, which swaps every view's strides.
  for_each_arch([](const char* arch) {
    bool ran = true;
    for (const Layout la : {Layout::RowMajor, Layout::ColMajor, Layout::Strided}) {
      for (const Layout lb : {Layout::RowMajor, Layout::ColMajor, Layout::Strided}) {
        ran = check_case(arch, {64, 10, 64, la, lb, 1.0f, 0.0f, {}}, 10) && ran;
        ran = check_case(arch, {100, 3, 17, la, lb, -2.0f, 0.5f, {}}, 11) && ran;
      }
    }
    return ran;
  });
}

TEST(Sgemm, AlphaAndBetaScale) {
  for_each_arch([](const char* arch) {
    return check_case(arch, {33, 40, 17, Layout::RowMajor, Layout::RowMajor, -0.5f, 2.0f, {}}, 8) &&
           check_case(arch, {33, 40, 17, Layout::RowMajor, Layout::ColMajor, 3.0f, 1.0f, {}}, 9);
  });
}

TEST(Sgemm, BetaZeroOverwritesNanInC) {
  const std::vector<float> a{1.0f, 2.0f}, b{3.0f, 4.0f};  // [1, 2] x [2, 1]
  float c = std::numeric_limits<float>::quiet_NaN();
  gemm::SgemmArgs args;
  args.m = args.n = 1;
  args.k = 2;
  args.a = {a.data(), 2, 1};
  args.b = {b.data(), 1, 1};
  args.c = {&c, 1, 1};
  gemm::sgemm(args);
  EXPECT_EQ(c, 11.0f);  // exact: small integers
}

TEST(Sgemm, ZeroInnerDimScalesCByBeta) {
  std::vector<float> c{1.0f, -2.0f, 3.0f, std::numeric_limits<float>::quiet_NaN()};
  gemm::SgemmArgs args;
  args.m = args.n = 2;
  args.k = 0;
  args.beta = 0.5f;
  args.c = {c.data(), 2, 1};
  gemm::sgemm(args);
  EXPECT_EQ(c[0], 0.5f);
  EXPECT_EQ(c[1], -1.0f);
  EXPECT_EQ(c[2], 1.5f);
  EXPECT_TRUE(std::isnan(c[3]));
  args.beta = 0.0f;
  gemm::sgemm(args);
  EXPECT_EQ(c, (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f}));
}

TEST(Sgemm, EveryLoopOfTheDriverWithTinyBlocks) {
  for_each_arch([](const char* arch) {
    const gemm::Blocking blocking = tiny_blocking();
    std::uint32_t seed = 100;
    bool ran = true;
    for (const std::size_t m : {1u, 5u, 6u, 7u, 11u, 12u, 13u, 25u, 43u}) {
      for (const std::size_t n : {1u, 7u, 8u, 9u, 16u, 17u, 33u, 65u}) {
        for (const std::size_t k : {1u, 6u, 7u, 8u, 22u}) {
          ran =
              check_case(arch, {m, n, k, Layout::RowMajor, Layout::RowMajor, 1.0f, 0.0f, blocking},
                         seed++) &&
              ran;
          ran =
              check_case(arch, {m, n, k, Layout::ColMajor, Layout::Strided, 1.5f, -1.0f, blocking},
                         seed++) &&
              ran;
        }
      }
    }
    return ran;
  });
}

TEST(Sgemm, LargeProductOnEveryArch) {
  // Default blocking: k crosses KC, m crosses MC, edge tiles on both sides.
  for_each_arch([](const char* arch) {
    return check_case(arch, {181, 77, 801, Layout::RowMajor, Layout::RowMajor, 1.0f, 0.0f, {}}, 42);
  });
}

TEST(Sgemm, DefaultBlockingIsConsistent) {
  const gemm::Blocking b = gemm::default_blocking();
  ASSERT_GT(b.mr, 0u);
  ASSERT_GT(b.nr, 0u);
  EXPECT_GT(b.kc, 0u);
  EXPECT_EQ(b.mc % b.mr, 0u);
  EXPECT_EQ(b.nc % b.nr, 0u);
}
