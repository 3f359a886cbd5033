// The kernels' thread pool: persistent workers woken per parallel_for (a generation counter
// under one mutex), the caller running the first range itself. A worker that finished a
// range spins on the generation counter for a while before it sleeps on the condition
// variable, and the caller spins on the count of pending ranges before it sleeps: a training
// step runs dozens of split kernels a few microseconds apart, and a futex wake-up per kernel
// (tens of microseconds on a loaded machine, more for a Web Worker) cost more than the
// second thread saved (the MNIST CNN epoch ran no faster on 2 threads than on 1).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/parallel.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/core/thread_pool.hpp"

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define KILN_SINGLE_THREADED 1
#endif

namespace kiln {
namespace {

#if !defined(KILN_SINGLE_THREADED)

/// KILN_NUM_THREADS if it holds an integer >= 1, else the hardware concurrency; 1 in a
/// pthreads WebAssembly build, where the embedding sets the count (thread_pool.hpp).
int default_num_threads() {
#if defined(__EMSCRIPTEN_PTHREADS__)
  return 1;
#else
  if (const char* env = std::getenv("KILN_NUM_THREADS")) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1 && v <= 4096) return static_cast<int>(v);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
#endif
}

thread_local bool t_in_pool_task = false;

std::atomic<std::int64_t> g_split_calls{0}, g_split_ranges{0};

/// How long an idle worker, or a caller waiting for the other ranges, spins before it
/// sleeps (a few kernels' worth of a training step's serial gaps).
constexpr auto kWorkerSpin = std::chrono::microseconds(200);
constexpr auto kCallerSpin = std::chrono::microseconds(2000);

inline void cpu_relax() noexcept {
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)
  __builtin_ia32_pause();
#endif
}

/// Spins until done() or `limit` has passed; true when done() became true.
template <class Done>
bool spin_until(Done&& done, std::chrono::microseconds limit) {
  const auto start = std::chrono::steady_clock::now();
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() - start > limit) return done();
  }
}

class ThreadPool {
 public:
  static ThreadPool& instance() {
    static ThreadPool pool;
    return pool;
  }

  int size() const noexcept { return size_; }

  void resize(int n) {
    std::lock_guard<std::mutex> use(use_);  // waits for a running parallel_for
#if defined(__EMSCRIPTEN_PTHREADS__)
    // Threads are Web Workers: a joined thread's worker returns to Emscripten's pool only
    // when the browser thread's event loop runs, so stopping and restarting could leave new
    // threads waiting for a worker (and a later join would hang). Workers only grow; idle
    // ones sleep, and no more than size_ threads ever run parts.
    while (static_cast<int>(workers_.size()) < n - 1) workers_.emplace_back([this] { worker(); });
    size_ = n;
#else
    stop_workers();
    size_ = n;
    start_workers();
#endif
  }

  void run(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& fn) {
    std::unique_lock<std::mutex> use(use_, std::try_to_lock);
    const std::int64_t parts = std::min<std::int64_t>(n, size_);
    if (!use.owns_lock() || parts <= 1 || t_in_pool_task) {
      fn(0, n);
      return;
    }
    g_split_calls.fetch_add(1, std::memory_order_relaxed);
    g_split_ranges.fetch_add(parts, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(m_);
      fn_ = &fn;
      n_ = n;
      parts_ = parts;
      next_part_ = 1;  // part 0 is the caller's
      pending_.store(parts - 1, std::memory_order_relaxed);
      error_ = nullptr;
      generation_.fetch_add(1, std::memory_order_release);
    }
    work_.notify_all();
    std::exception_ptr mine;
    try {
      t_in_pool_task = true;
      fn(0, n / parts);
    } catch (...) {
      mine = std::current_exception();
    }
    std::unique_lock<std::mutex> lock(m_);
    drain(lock);  // help with the parts no worker has taken yet
    t_in_pool_task = false;
    if (pending_.load(std::memory_order_acquire) != 0) {
      lock.unlock();
      spin_until([this] { return pending_.load(std::memory_order_acquire) == 0; }, kCallerSpin);
      lock.lock();
    }
    done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    fn_ = nullptr;
    if (mine) std::rethrow_exception(mine);
    if (error_) std::rethrow_exception(error_);
  }

  ~ThreadPool() { stop_workers(); }

 private:
  ThreadPool() : size_(default_num_threads()) { start_workers(); }

  void start_workers() {
    stop_.store(false);
    for (int i = 1; i < size_; ++i) workers_.emplace_back([this] { worker(); });
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_.store(true);
    }
    work_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  void worker() {
    t_in_pool_task = true;  // a kernel called from a task runs inline
    std::uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      auto woken = [&] {
        return stop_.load(std::memory_order_acquire) ||
               generation_.load(std::memory_order_acquire) != seen;
      };
      if (!woken()) {
        lock.unlock();
        spin_until(woken, kWorkerSpin);
        lock.lock();
      }
      work_.wait(lock, woken);
      if (stop_) return;
      seen = generation_.load(std::memory_order_relaxed);
      drain(lock);
    }
  }

  /// Runs parts not yet taken (lock held on entry and exit, released while a part runs).
  void drain(std::unique_lock<std::mutex>& lock) {
    while (fn_ && next_part_ < parts_) {
      const std::int64_t p = next_part_++;
      const std::int64_t begin = n_ * p / parts_, end = n_ * (p + 1) / parts_;
      const auto* fn = fn_;
      lock.unlock();
      std::exception_ptr e;
      try {
        (*fn)(begin, end);
      } catch (...) {
        e = std::current_exception();
      }
      lock.lock();
      if (e && !error_) error_ = e;
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.notify_one();
    }
  }

  std::atomic<int> size_;
  std::mutex use_;  // one parallel_for (or resize) at a time
  std::mutex m_;
  std::condition_variable work_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(std::int64_t, std::int64_t)>* fn_ = nullptr;
  std::int64_t n_ = 0, parts_ = 0, next_part_ = 0;
  std::atomic<std::int64_t> pending_{0};       // written under m_, spun on without it
  std::atomic<std::uint64_t> generation_{0};  // likewise
  std::exception_ptr error_;
  std::atomic<bool> stop_{false};
};

#endif

}  // namespace

void set_num_threads(int n) {
  if (n < 1) {
    throw ConfigError(str_cat("set_num_threads: the number of threads must be >= 1, got ", n));
  }
#if !defined(KILN_SINGLE_THREADED)
  ThreadPool::instance().resize(n);
#endif
}

int num_threads() noexcept {
#if defined(KILN_SINGLE_THREADED)
  return 1;
#else
  return ThreadPool::instance().size();
#endif
}

namespace detail {

void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
#if defined(KILN_SINGLE_THREADED)
  fn(0, n);
#else
  ThreadPool::instance().run(n, fn);
#endif
}

std::int64_t parallel_parts(std::int64_t n, std::int64_t grain) noexcept {
  if (n <= 0) return 0;
  const std::int64_t by_size = grain > 0 ? n / grain : n;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(num_threads(), by_size));
}

void parallel_for(std::int64_t n, std::int64_t grain, std::int64_t align,
                  const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
  const std::int64_t parts = parallel_parts(n, grain);
  if (parts <= 1) {
    fn(0, n);
    return;
  }
  const std::int64_t a = std::max<std::int64_t>(align, 1);
  auto bound = [&](std::int64_t p) { return p >= parts ? n : n * p / parts / a * a; };
  parallel_for(parts, [&](std::int64_t p0, std::int64_t p1) {
    const std::int64_t begin = bound(p0), end = bound(p1);
    if (begin < end) fn(begin, end);
  });
}

ParallelStats parallel_stats() noexcept {
  ParallelStats s;
#if !defined(KILN_SINGLE_THREADED)
  s.calls = g_split_calls.load(std::memory_order_relaxed);
  s.ranges = g_split_ranges.load(std::memory_order_relaxed);
#endif
  return s;
}

void reset_parallel_stats() noexcept {
#if !defined(KILN_SINGLE_THREADED)
  g_split_calls.store(0, std::memory_order_relaxed);
  g_split_ranges.store(0, std::memory_order_relaxed);
#endif
}

}  // namespace detail
}  // namespace kiln
