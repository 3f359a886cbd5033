// The kernels' thread pool: persistent workers woken per parallel_for (a generation counter
// under one mutex), the caller running the first range itself. A worker that finished a
// range spins on the generation counter for a while before it sleeps on the condition
// variable, and the caller spins on the count of pending indices before it sleeps: a training
// step runs dozens of split kernels a few microseconds apart, and a futex wake-up per kernel
// (tens of microseconds on a loaded machine, more for a Web Worker) cost more than the
// second thread saved (the MNIST CNN epoch ran no faster on 2 threads than on 1).
//
// Each thread works through its own range from the front in pieces (half of what is left,
// at least an eighth of the range), and a thread that has finished its own takes pieces off
// the back of the range with the most left. The ranges stay with the threads they were
// given (a thread mostly reads what it wrote in the kernel before), but when one thread is
// late, slower or descheduled (a shared machine, or a second core busy with something
// else), the other finishes its work instead of waiting for it: on 2 threads the halves of
// the MNIST CNN's kernels differed by 3-10 us on average, and a preempted worker used to
// hold the caller for its whole range.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
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

/// After this long a spinning thread also yields its core on every check: when the pool's
/// threads share one core (the machine's other cores busy with other processes), the
/// thread it waits for may be the one that needs that core, and a pure spin burns the time
/// slice it would have run in (2 threads ran an MNIST CNN epoch 1.7x slower than 1 there).
/// With a free core the yield returns at once.
constexpr auto kYieldAfter = std::chrono::microseconds(20);

/// Spins until done() or `limit` has passed; true when done() became true.
template <class Done>
bool spin_until(Done&& done, std::chrono::microseconds limit) {
  const auto start = std::chrono::steady_clock::now();
  bool yielding = false;
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
    if (yielding) {
      std::this_thread::yield();
    } else {
      cpu_relax();
    }
    // The clock every 64 checks, every 8 once yielding (a yield is a system call natively;
    // in the browser it returns at once, and the clock is a call into JS).
    if (i % (yielding ? 8 : 64) == 0) {
      const auto spent = std::chrono::steady_clock::now() - start;
      if (spent > limit) return done();
      yielding = spent > kYieldAfter;
    }
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
    if (n > size_) slots_.reset(new Slot[static_cast<std::size_t>(n)]);
    size_ = n;
#else
    stop_workers();
    size_ = n;
    slots_.reset(new Slot[static_cast<std::size_t>(n)]);
    start_workers();
#endif
  }

  /// Runs fn over [0, n) split into `parts` ranges, the caller taking range 0 (see the
  /// file comment for how a thread that finished its own range takes over the tail of
  /// another's).
  void run(std::int64_t n, std::int64_t parts,
           const std::function<void(std::int64_t, std::int64_t)>& fn) {
    if (t_in_pool_task) {  // before try_lock: the caller's thread owns use_ here
      fn(0, n);
      return;
    }
    std::unique_lock<std::mutex> use(use_, std::try_to_lock);
    parts = std::min<std::int64_t>({n, parts, static_cast<std::int64_t>(size_)});
    if (!use.owns_lock() || parts <= 1) {
      // One range: a plain call, with the pool free for a parallel_for inside fn (a batch-1
      // convolution's GEMM); holding use_ here made that nested try_lock fail (and try_lock
      // of a mutex this thread owns is undefined behaviour).
      if (use.owns_lock()) use.unlock();
      fn(0, n);
      return;
    }
    g_split_calls.fetch_add(1, std::memory_order_relaxed);
    g_split_ranges.fetch_add(parts, std::memory_order_relaxed);
    // Ranges are handed out in pieces only when their bounds fit the packed 32-bit halves
    // (every split of the engine's kernels); else each range runs whole, as one piece.
    const bool pieces = n <= kMaxPackedIndex;
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(m_);
      fn_ = &fn;
      parts_ = parts;
      next_part_ = 1;  // range 0 is the caller's
      min_piece_ = std::max<std::int64_t>(1, n / parts / kPiecesPerRange);
      for (std::int64_t p = 0; p < parts; ++p) {
        // floor(n * p / parts) without the product overflowing
        const auto bound = [&](std::int64_t q) { return n / parts * q + n % parts * q / parts; };
        const std::int64_t begin = bound(p), end = bound(p + 1);
        slots_[static_cast<std::size_t>(p)].begin = begin;
        slots_[static_cast<std::size_t>(p)].end = end;
        slots_[static_cast<std::size_t>(p)].range.store(pieces ? pack(begin, end) : kWhole,
                                                       std::memory_order_relaxed);
      }
      remaining_.store(n, std::memory_order_relaxed);
      error_ = nullptr;
      generation_.fetch_add(1, std::memory_order_release);
      // Only a worker asleep on work_ needs the notify (a futex wake, a call into JS in the
      // browser: 3 % of the caller's time there); one that spins sees the generation.
      // sleepers_ changes under m_ only, so no worker can fall asleep unseen after this.
      wake = sleepers_ > 0;
    }
    if (wake) work_.notify_all();
    t_in_pool_task = true;
    work(fn, 0, parts);
    t_in_pool_task = false;
    auto finished = [this] {
      return remaining_.load(std::memory_order_seq_cst) == 0 &&
             active_.load(std::memory_order_seq_cst) == 0;
    };
    if (!finished()) spin_until(finished, kCallerSpin);
    std::unique_lock<std::mutex> lock(m_);
    // Under m_ no worker can join this call any more once it has none active: a worker
    // joins (active_ + 1) under m_ and only while fn_ is set.
    if (!finished()) {
      // A worker leaving the call notifies done_ only when it sees caller_waits_ (it leaves
      // without m_): seq_cst on both sides, so that either it sees the flag or this thread
      // sees its active_ - 1 in the predicate (and does not sleep).
      caller_waits_.store(true, std::memory_order_seq_cst);
      done_.wait(lock, finished);
      caller_waits_.store(false, std::memory_order_relaxed);
    }
    fn_ = nullptr;
    // Take the exception out of the pool: the next call (maybe on another thread) must not
    // drop the last reference to an object this caller is still handling.
    if (std::exception_ptr e = std::exchange(error_, nullptr)) std::rethrow_exception(e);
  }

  ~ThreadPool() { stop_workers(); }

 private:
  ThreadPool() : size_(default_num_threads()) {
    slots_.reset(new Slot[static_cast<std::size_t>(size_.load())]);
    start_workers();
  }

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
    for (;;) {
      auto woken = [&] {
        return stop_.load(std::memory_order_acquire) ||
               generation_.load(std::memory_order_acquire) != seen;
      };
      if (!woken()) spin_until(woken, kWorkerSpin);
      std::unique_lock<std::mutex> lock(m_);
      if (!woken()) {
        ++sleepers_;
        work_.wait(lock, woken);
        --sleepers_;
      }
      if (stop_) return;
      seen = generation_.load(std::memory_order_relaxed);
      // That call has finished already, or has as many threads as ranges (no more than
      // parts threads run pieces, also after the Emscripten build lowered the count).
      if (fn_ == nullptr || next_part_ >= parts_) continue;
      const auto* fn = fn_;
      const std::int64_t parts = parts_;
      const std::int64_t home = next_part_++;
      active_.fetch_add(1, std::memory_order_acq_rel);
      lock.unlock();
      work(*fn, home, parts);
      // Leaving takes no lock unless the caller sleeps on done_ (run(): caller_waits_).
      if (active_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
          caller_waits_.load(std::memory_order_seq_cst)) {
        std::lock_guard<std::mutex> relock(m_);
        done_.notify_one();
      }
    }
  }

  /// Runs pieces of the current call until none is left: first its own range `home` (-1:
  /// none) from the front, then the tails of the other ranges, largest first.
  void work(const std::function<void(std::int64_t, std::int64_t)>& fn, std::int64_t home,
            std::int64_t parts) {
    std::int64_t begin = 0, end = 0, ran = 0;
    if (home >= 0) {
      while (take(slots_[static_cast<std::size_t>(home)], true, begin, end)) ran += run_piece(fn, begin, end);
    }
    for (;;) {
      Slot* victim = nullptr;
      std::int64_t most = 0;
      for (std::int64_t p = 0; p < parts; ++p) {
        Slot& s = slots_[static_cast<std::size_t>(p)];
        const std::int64_t left = s.left();
        if (left > most) most = left, victim = &s;
      }
      if (victim == nullptr) break;
      if (take(*victim, false, begin, end)) ran += run_piece(fn, begin, end);
    }
    // Counted once per thread and call, not per piece (one contended line fewer per piece).
    remaining_.fetch_sub(ran, std::memory_order_seq_cst);
  }

  /// Runs one piece; returns its index count.
  std::int64_t run_piece(const std::function<void(std::int64_t, std::int64_t)>& fn, std::int64_t begin,
                         std::int64_t end) {
    try {
      fn(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      if (!error_) error_ = std::current_exception();
    }
    return end - begin;
  }

  // A range's unclaimed indices [front, back) packed in one word (front in the low half):
  // its owner claims from the front, a thread that finished its own from the back, each
  // half of what is left but at least min_piece_ indices, by compare-and-swap. A range too
  // large to pack (kWhole) is claimed whole, once.
  static constexpr std::int64_t kMaxPackedIndex = 0x7fffffff;
  static constexpr std::uint64_t kWhole = ~std::uint64_t{0};
  static constexpr std::int64_t kPiecesPerRange = 8;
  static std::uint64_t pack(std::int64_t front, std::int64_t back) {
    return static_cast<std::uint64_t>(front) | (static_cast<std::uint64_t>(back) << 32);
  }
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> range{0};
    std::int64_t begin = 0, end = 0;  // the whole range, for a kWhole claim
    std::int64_t left() const noexcept {
      const std::uint64_t r = range.load(std::memory_order_acquire);
      if (r == kWhole) return end - begin;
      const auto front = static_cast<std::int64_t>(r & 0xffffffffu);
      const auto back = static_cast<std::int64_t>(r >> 32);
      return back - front;
    }
  };
  bool take(Slot& s, bool from_front, std::int64_t& begin, std::int64_t& end) {
    std::uint64_t r = s.range.load(std::memory_order_acquire);
    for (;;) {
      if (r == kWhole) {
        if (s.range.compare_exchange_weak(r, 0, std::memory_order_acq_rel)) {
          begin = s.begin, end = s.end;
          return begin < end;
        }
        continue;
      }
      const auto front = static_cast<std::int64_t>(r & 0xffffffffu);
      const auto back = static_cast<std::int64_t>(r >> 32);
      if (front >= back) return false;
      const std::int64_t piece = std::min(back - front, std::max(min_piece_, (back - front) / 2));
      const std::uint64_t next = from_front ? pack(front + piece, back) : pack(front, back - piece);
      if (s.range.compare_exchange_weak(r, next, std::memory_order_acq_rel)) {
        begin = from_front ? front : back - piece;
        end = from_front ? front + piece : back;
        return true;
      }
    }
  }

  // What the idle threads spin on gets a cache line of its own, as do the two counters the
  // caller spins on at the end of a call: sharing a line with the mutex and the call's setup
  // made every write of one thread a miss of the other's spin loop (and back).
  alignas(64) std::atomic<std::uint64_t> generation_{0};  // one step per call
  std::atomic<bool> stop_{false};
  alignas(64) std::atomic<std::int64_t> remaining_{0};  // indices not yet run in the current call
  alignas(64) std::atomic<std::int64_t> active_{0};     // workers inside the current call
  std::atomic<bool> caller_waits_{false};               // the caller sleeps on done_
  alignas(64) std::atomic<int> size_;
  std::mutex use_;  // one parallel_for (or resize) at a time
  std::mutex m_;
  std::condition_variable work_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(std::int64_t, std::int64_t)>* fn_ = nullptr;
  std::int64_t parts_ = 0, next_part_ = 0, min_piece_ = 1;  // written under m_
  int sleepers_ = 0;                                         // workers in work_.wait, under m_
  std::unique_ptr<Slot[]> slots_;                            // size_ ranges
  std::exception_ptr error_;
};

#endif

}  // namespace

void set_num_threads(int n) {
  if (n < 1) {
    throw_error<ConfigError>("set_num_threads: the number of threads must be >= 1, got ", n);
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
  ThreadPool::instance().run(n, n, fn);
#endif
}

std::int64_t parallel_parts(std::int64_t n, std::int64_t grain) noexcept {
  if (n <= 0) return 0;
  const std::int64_t by_size = grain > 0 ? n / grain : n;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(num_threads(), by_size));
}

void parallel_for(std::int64_t n, std::int64_t grain, [[maybe_unused]] std::int64_t align,
                  const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
  const std::int64_t parts = parallel_parts(n, grain);
  if (parts <= 1) {
    fn(0, n);
    return;
  }
#if defined(KILN_SINGLE_THREADED)
  (void)align;
  fn(0, n);
#else
  // The pool splits units of `align` indices (the last one shorter), so that every piece
  // it hands out starts at a multiple of align.
  const std::int64_t a = std::max<std::int64_t>(align, 1);
  const std::int64_t units = n / a + (n % a != 0);
  ThreadPool::instance().run(units, parts, [&](std::int64_t u0, std::int64_t u1) {
    const std::int64_t begin = u0 * a, end = u1 >= units ? n : u1 * a;
    if (begin < end) fn(begin, end);
  });
#endif
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
