// More threads run pieces than the call has ranges / than num_threads() (Emscripten build).
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>
#include "core/parallel.hpp"
#include "kiln/core/thread_pool.hpp"
using namespace kiln;
static int distinct(auto call) {
  std::mutex m; std::set<std::thread::id> t;
  call([&](std::int64_t b, std::int64_t e) {
    { std::lock_guard<std::mutex> l(m); t.insert(std::this_thread::get_id()); }
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (e - b)));
  });
  return (int)t.size();
}
int main() {
  set_num_threads(4);
  set_num_threads(2);
  int worst = 0;
  for (int i = 0; i < 20; ++i)
    worst = std::max(worst, distinct([](auto f) { detail::parallel_for(64, f); }));
  std::printf("num_threads()=%d after 4 -> 2: up to %d distinct threads ran pieces of parallel_for(64)\n",
              num_threads(), worst);
  set_num_threads(4);
  worst = 0;
  const std::int64_t n = 2 * detail::kElementwiseGrain;  // parallel_parts == 2
  for (int i = 0; i < 20; ++i)
    worst = std::max(worst, distinct([&](auto f) {
      detail::parallel_for(n, detail::kElementwiseGrain, 64, [&](std::int64_t b, std::int64_t e) { f(b / 1024, e / 1024); });
    }));
  std::printf("num_threads()=4, parallel_parts(%lld, grain)=%lld: up to %d distinct threads ran pieces\n",
              (long long)n, (long long)detail::parallel_parts(n, detail::kElementwiseGrain), worst);
}
