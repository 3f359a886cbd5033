// The worker threads of DataLoader (kiln/data/data_loader.hpp, detail::OrderedWorkers):
// tasks start in order within a window of the consumer, results are taken in order.
#include <exception>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/data/data_loader.hpp"

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define KILN_DATA_THREADS 0  // a WebAssembly build without pthreads has no std::thread
#else
#define KILN_DATA_THREADS 1
#include <condition_variable>
#include <mutex>
#include <thread>
#endif

namespace kiln::data::detail {

#if KILN_DATA_THREADS

struct OrderedWorkers::State {
  std::size_t num_tasks;
  std::size_t window;
  std::function<void(std::size_t)> task;

  std::mutex mutex;
  std::condition_variable room;            // workers wait for a task within the window, or stop
  std::condition_variable ready;           // the consumer waits for its task
  std::vector<char> done;                  // done[j % window]: task j has finished
  std::vector<std::exception_ptr> errors;  // errors[j % window]: what task j threw
  std::size_t next = 0;                    // the next task to start
  std::size_t released = 0;                // tasks whose results the consumer is done with
  bool stop = false;                       // the consumer has gone: start nothing more
  bool failed = false;                     // a task threw: start nothing more
  std::vector<std::thread> threads;

  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      room.wait(lock,
                [&] { return stop || failed || next >= num_tasks || next < released + window; });
      if (stop || failed || next >= num_tasks) return;
      const std::size_t j = next++;
      lock.unlock();
      std::exception_ptr error;
      try {
        task(j);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      errors[j % window] = std::move(error);
      done[j % window] = 1;
      if (errors[j % window]) failed = true;
      ready.notify_all();
    }
  }

  void stop_and_join() noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    room.notify_all();
    for (auto& thread : threads) {
      if (thread.joinable()) thread.join();
    }
    threads.clear();
  }
};

OrderedWorkers::OrderedWorkers(std::size_t num_tasks, std::size_t num_threads, std::size_t window,
                               std::function<void(std::size_t)> task)
    : state_(std::make_unique<State>()) {
  if (window == 0) throw ValueError("OrderedWorkers: window must be >= 1, got 0");
  State& s = *state_;
  s.num_tasks = num_tasks;
  s.window = window;
  s.task = std::move(task);
  s.done.assign(window, 0);
  s.errors.assign(window, nullptr);
  try {
    for (std::size_t t = 0; t < num_threads; ++t) s.threads.emplace_back([&s] { s.run(); });
  } catch (...) {
    s.stop_and_join();
    throw;
  }
}

OrderedWorkers::~OrderedWorkers() { state_->stop_and_join(); }

std::exception_ptr OrderedWorkers::wait(std::size_t j) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mutex);
  s.ready.wait(lock, [&] { return s.done[j % s.window] != 0; });
  return s.errors[j % s.window];
}

void OrderedWorkers::release(std::size_t j) {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.done[j % s.window] = 0;
    s.errors[j % s.window] = nullptr;
    s.released = j + 1;
  }
  s.room.notify_all();
}

bool OrderedWorkers::threads_available() { return true; }

#else  // no threads: DataLoader checks threads_available() and never constructs one

struct OrderedWorkers::State {};

OrderedWorkers::OrderedWorkers(std::size_t, std::size_t, std::size_t,
                               std::function<void(std::size_t)>) {
  throw StateError("OrderedWorkers: this build has no threads (WebAssembly without pthreads)");
}
OrderedWorkers::~OrderedWorkers() = default;
std::exception_ptr OrderedWorkers::wait(std::size_t) { return nullptr; }
void OrderedWorkers::release(std::size_t) {}
bool OrderedWorkers::threads_available() { return false; }

#endif

}  // namespace kiln::data::detail
