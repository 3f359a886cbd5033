// The kernels' thread pool: persistent workers woken per parallel_for (a generation counter
// under one mutex), the caller running the first range itself.
#include <algorithm>
#include <atomic>
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
    {
      std::lock_guard<std::mutex> lock(m_);
      fn_ = &fn;
      n_ = n;
      parts_ = parts;
      next_part_ = 1;  // part 0 is the caller's
      pending_ = parts - 1;
      error_ = nullptr;
      ++generation_;
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
    done_.wait(lock, [this] { return pending_ == 0; });
    fn_ = nullptr;
    if (mine) std::rethrow_exception(mine);
    if (error_) std::rethrow_exception(error_);
  }

  ~ThreadPool() { stop_workers(); }

 private:
  ThreadPool() : size_(default_num_threads()) { start_workers(); }

  void start_workers() {
    stop_ = false;
    for (int i = 1; i < size_; ++i) workers_.emplace_back([this] { worker(); });
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
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
      work_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
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
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::atomic<int> size_;
  std::mutex use_;  // one parallel_for (or resize) at a time
  std::mutex m_;
  std::condition_variable work_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(std::int64_t, std::int64_t)>* fn_ = nullptr;
  std::int64_t n_ = 0, parts_ = 0, next_part_ = 0, pending_ = 0;
  std::uint64_t generation_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
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

}  // namespace detail
}  // namespace kiln
