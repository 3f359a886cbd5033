// Stress test for engine/src/core/thread_pool.cpp (Kiln): every index once, pieces aligned,
// exceptions arrive after all pieces ran, nested calls inline, nothing hangs.
// Usage: stress SECONDS [seed] [flags]
//   flags: c = a second external thread calls parallel_for concurrently
//          r = a second external thread calls set_num_threads concurrently
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <unistd.h>
#include <vector>

#include "core/parallel.hpp"
#include "kiln/core/thread_pool.hpp"

using namespace kiln;
using detail::parallel_for;

static std::atomic<long> g_progress{0};
static std::atomic<int> g_stage{0};
static char g_desc[512];

#define FAIL(...)                                                        \
  do {                                                                   \
    std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);            \
    std::fprintf(stderr, __VA_ARGS__);                                   \
    std::fprintf(stderr, "\n  iteration: %s\n", g_desc);                 \
    std::fflush(stderr);                                                 \
    std::abort();                                                        \
  } while (0)

struct Thrown {
  std::int64_t at;
};

constexpr std::int64_t kMaxCount = 1000000;
static std::vector<std::atomic<std::uint8_t>> g_count(kMaxCount + 1);

struct Piece {
  std::int64_t b, e;
  std::thread::id tid;
};

struct Stats {
  long iters = 0, throws = 0, caught = 0, nested = 0, huge = 0, pieces = 0, stolen_like = 0,
       over_parts = 0, calls_split = 0, max_threads_seen = 0;
} g_st;

static void watchdog(int seconds_no_progress) {
  long last = -1;
  int idle = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    long p = g_progress.load();
    if (p == last) {
      if (++idle >= seconds_no_progress) {
        std::fprintf(stderr, "HANG: no progress for %d s (stage %d)\n  iteration: %s\n", idle,
                     g_stage.load(), g_desc);
        std::fflush(stderr);
        std::abort();
      }
    } else {
      idle = 0;
      last = p;
    }
  }
}

// One randomized call. Returns normally; aborts on any violation.
static bool g_fast = false;
static bool g_allow_extra = false;
static long g_over_threads = 0;
static void one_iteration(std::mt19937_64& rng, int threads) {
  auto rnd = [&](std::int64_t lo, std::int64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  const bool grained = rnd(0, 1);
  // n distribution
  std::int64_t n;
  bool huge = false;
  switch (rnd(0, 9)) {
    case 0: n = rnd(0, 8); break;
    case 1: case 2: n = rnd(0, 200); break;
    case 3: case 4: n = rnd(0, 20000); break;
    case 5: case 6: n = rnd(0, 200000); break;
    case 7: n = rnd(0, kMaxCount); break;
    case 8: n = rnd(kMaxCount - 64, kMaxCount); break;
    default: {
      // near / above the packed-index limit: record pieces only
      huge = true;
      const std::int64_t lim = 0x7fffffff;
      const std::int64_t cands[] = {lim - 1, lim, lim + 1, lim + 2, 2 * lim, 2 * lim + 2,
                                    (std::int64_t{1} << 32) - 1, std::int64_t{1} << 32,
                                    (std::int64_t{1} << 32) + 1, std::int64_t{1} << 40,
                                    (std::int64_t{1} << 60) / 4};
      n = cands[rnd(0, 10)];
      break;
    }
  }
  std::int64_t grain = 1, align = 1;
  if (grained) {
    switch (rnd(0, 3)) {
      case 0: grain = rnd(1, 16); break;
      case 1: grain = rnd(1, 1000); break;
      case 2: grain = detail::kElementwiseGrain; break;
      default: grain = rnd(1, std::max<std::int64_t>(1, n)); break;
    }
    switch (rnd(0, 4)) {
      case 0: align = 1; break;
      case 1: align = 64; break;
      case 2: align = rnd(1, 100); break;
      case 3: align = rnd(-3, 0); break;  // <1 is treated as 1
      default: align = rnd(1, std::max<std::int64_t>(1, n / 3 + 1)); break;
    }
  }
  // behaviour
  int slow_mode = static_cast<int>(rnd(0, 5));
  if (g_fast) {  // short back-to-back calls: hammers wake-up/sleep and completion
    huge = false;
    n = rnd(0, 3000);
    if (grained) { grain = rnd(1, 300); align = rnd(1, 70); }
    slow_mode = rnd(0, 7) == 0 ? 4 : 0;
  }
  const std::int64_t a = std::max<std::int64_t>(align, 1);  // 0,1: none; 2: worker sleeps; 3: caller sleeps; 4: yield; 5: random one slow
  const std::uint64_t slow_salt = rng();
  const bool do_throw = rnd(0, 6) == 0 && n > 0;
  std::vector<std::int64_t> throw_at;
  if (do_throw) {
    const int k = static_cast<int>(rnd(1, 3));
    for (int i = 0; i < k; ++i) throw_at.push_back(rnd(0, n - 1));
  }
  const bool nested = rnd(0, 5) == 0 && !huge;
  std::snprintf(g_desc, sizeof g_desc,
                "threads=%d grained=%d n=%lld grain=%lld align=%lld slow=%d throw=%d(%lld) nested=%d",
                threads, grained, (long long)n, (long long)grain, (long long)align, slow_mode,
                (int)do_throw, throw_at.empty() ? -1LL : (long long)throw_at[0], (int)nested);

  const auto caller = std::this_thread::get_id();
  std::mutex pm;
  std::vector<Piece> pieces;
  std::atomic<int> nested_fail{0};
  std::atomic<std::int64_t> visited{0};

  auto fn = [&](std::int64_t b, std::int64_t e) {
    if (!(0 <= b && b < e && e <= n)) {
      FAIL("bad piece [%lld, %lld) of n=%lld", (long long)b, (long long)e, (long long)n);
    }
    {
      std::lock_guard<std::mutex> l(pm);
      pieces.push_back({b, e, std::this_thread::get_id()});
    }
    const bool on_caller = std::this_thread::get_id() == caller;
    // slowness, to force stealing
    if (slow_mode == 2 && !on_caller) std::this_thread::sleep_for(std::chrono::microseconds(200 + (b % 7) * 100));
    if (slow_mode == 3 && on_caller) std::this_thread::sleep_for(std::chrono::microseconds(300));
    if (slow_mode == 4) std::this_thread::yield();
    if (slow_mode == 5) {
      const auto h = std::hash<std::thread::id>{}(std::this_thread::get_id()) ^ slow_salt;
      if (h & 1) std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    if (!huge) {
      for (std::int64_t i = b; i < e; ++i) g_count[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
    }
    visited.fetch_add(e - b, std::memory_order_relaxed);
    if (nested && (b & 3) == 0) {
      // a nested call from inside a task must run inline: one call fn2(0, m) on this thread
      const std::int64_t m = (b % 5000) + 2;
      std::atomic<int> calls{0};
      std::atomic<std::int64_t> cov{0};
      std::atomic<bool> ok{true};
      const auto me = std::this_thread::get_id();
      parallel_for(m, [&](std::int64_t b2, std::int64_t e2) {
        ++calls;
        cov += e2 - b2;
        if (b2 != 0 || e2 != m || std::this_thread::get_id() != me) ok = false;
      });
      parallel_for(m * 100, 1, 8, [&](std::int64_t b2, std::int64_t e2) {
        ++calls;
        cov += e2 - b2;
        if (b2 != 0 || e2 != m * 100 || std::this_thread::get_id() != me) ok = false;
      });
      if (cov.load() != m * 101) FAIL("nested coverage %lld != %lld", (long long)cov.load(), (long long)(m * 101));
      if (calls != 2 || !ok) nested_fail.fetch_add(1);
    }
    for (std::int64_t t : throw_at) {
      if (b <= t && t < e) throw Thrown{t};
    }
  };

  bool caught = false;
  std::int64_t caught_at = -1;
  try {
    if (grained) {
      parallel_for(n, grain, align, fn);
    } else {
      parallel_for(n, fn);
    }
  } catch (const Thrown& t) {
    caught = true;
    caught_at = t.at;
  }
  g_progress.fetch_add(1);

  // checks
  // (a nested call must run inline when the outer call went through the pool: >1 piece)
  if (nested_fail.load() && pieces.size() > 1) FAIL("nested parallel_for did not run inline");
  if (visited.load() != std::max<std::int64_t>(n, 0)) FAIL("visited %lld of %lld", (long long)visited.load(), (long long)n);
  std::sort(pieces.begin(), pieces.end(), [](const Piece& x, const Piece& y) { return x.b < y.b; });
  std::int64_t pos = 0;
  std::set<std::thread::id> tids;
  for (const Piece& p : pieces) {
    if (p.b != pos) FAIL("pieces do not tile: expected begin %lld got [%lld, %lld)", (long long)pos, (long long)p.b, (long long)p.e);
    pos = p.e;
    if (grained && p.b % a != 0) FAIL("piece [%lld, %lld) not on alignment %lld", (long long)p.b, (long long)p.e, (long long)a);
    tids.insert(p.tid);
  }
  if (pos != std::max<std::int64_t>(n, 0)) FAIL("pieces end at %lld, n=%lld", (long long)pos, (long long)n);
  if (!huge) {
    for (std::int64_t i = 0; i < n; ++i) {
      const int c = g_count[static_cast<std::size_t>(i)].exchange(0, std::memory_order_relaxed);
      if (c != 1) FAIL("index %lld visited %d times", (long long)i, c);
    }
  }
  if (do_throw) {
    if (!caught) FAIL("exception lost");
    if (std::find(throw_at.begin(), throw_at.end(), caught_at) == throw_at.end()) FAIL("wrong exception");
    ++g_st.caught;
  } else if (caught) {
    FAIL("unexpected exception");
  }
  // pieces on at most num_threads() distinct threads (at most `parts` for the grained overload)
  const std::int64_t parts = grained ? detail::parallel_parts(n, grain)
                                     : std::min<std::int64_t>(n, num_threads());
  if (g_allow_extra && static_cast<int>(tids.size()) > threads) { ++g_over_threads; }
  else if (static_cast<int>(tids.size()) > threads) FAIL("%zu threads ran pieces with num_threads=%d", tids.size(), threads);
  if (static_cast<std::int64_t>(tids.size()) > std::max<std::int64_t>(parts, 1)) ++g_st.over_parts;
  if (pieces.size() > 1) ++g_st.calls_split;
  g_st.max_threads_seen = std::max<long>(g_st.max_threads_seen, static_cast<long>(tids.size()));
  g_st.pieces += static_cast<long>(pieces.size());
  g_st.huge += huge;
  g_st.nested += nested;
  g_st.throws += do_throw;
  ++g_st.iters;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10;
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 12345;
  const std::string flags = argc > 3 ? argv[3] : "";
  g_fast = flags.find('f') != std::string::npos;
  g_allow_extra = flags.find('e') != std::string::npos;
  const int hang_s = std::getenv("HANG_S") ? std::atoi(std::getenv("HANG_S")) : 60;
  std::thread(watchdog, hang_s).detach();
  std::mt19937_64 rng(seed);
  std::atomic<bool> stop{false};
  std::vector<std::thread> extra;
  std::atomic<long> extra_calls{0};
  if (flags.find('c') != std::string::npos) {
    // another thread hammering parallel_for (runs inline while the pool is busy, else uses it)
    extra.emplace_back([&] {
      std::mt19937_64 r2(seed * 7 + 1);
      std::vector<std::atomic<std::uint8_t>> cnt(50001);
      while (!stop.load()) {
        const std::int64_t n = std::uniform_int_distribution<std::int64_t>(0, 50000)(r2);
        const bool g = r2() & 1;
        auto f = [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t i = b; i < e; ++i) cnt[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
        };
        if (g) parallel_for(n, 100, 64, f); else parallel_for(n, f);
        for (std::int64_t i = 0; i < n; ++i) {
          if (cnt[static_cast<std::size_t>(i)].exchange(0) != 1) {
            std::fprintf(stderr, "FAIL second caller: index %lld n=%lld\n", (long long)i, (long long)n);
            std::abort();
          }
        }
        extra_calls.fetch_add(1);
      }
    });
  }
  std::atomic<long> extra_resizes{0};
  if (flags.find('r') != std::string::npos) {
    extra.emplace_back([&] {
      std::mt19937_64 r3(seed * 13 + 5);
      while (!stop.load()) {
        set_num_threads(static_cast<int>(r3() % 4) + 1);
        extra_resizes.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::microseconds(r3() % 3000));
      }
    });
  }
  const auto start = std::chrono::steady_clock::now();
  int threads = num_threads();
  long resizes = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    if (rng() % (flags.find('s') != std::string::npos ? 2000 : 8) == 0 && flags.find('r') == std::string::npos) {
      threads = static_cast<int>(rng() % 4) + 1;
      g_stage = 1;
      set_num_threads(threads);
      g_stage = 0;
      ++resizes;
      if (num_threads() != threads) FAIL("num_threads %d != %d", num_threads(), threads);
    }
    if (flags.find('r') != std::string::npos) threads = 4;  // bound only
    one_iteration(rng, threads);
  }
  stop = true;
  for (auto& t : extra) t.join();
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "OK seed=%llu %.1fs iters=%ld (%.0f/s) resizes=%ld split_calls=%ld pieces=%ld throws=%ld "
      "caught=%ld nested=%ld huge=%ld calls_with_more_threads_than_parts=%ld max_threads=%ld "
      "extra_calls=%ld extra_resizes=%ld calls_with_more_threads_than_num_threads=%ld\n",
      (unsigned long long)seed, el, g_st.iters, g_st.iters / el, resizes, g_st.calls_split,
      g_st.pieces, g_st.throws, g_st.caught, g_st.nested, g_st.huge, g_st.over_parts,
      g_st.max_threads_seen, extra_calls.load(), extra_resizes.load(), g_over_threads);
  return 0;
}
