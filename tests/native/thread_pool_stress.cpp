// tests/native/thread_pool_stress.cpp: the thread pool under ThreadSanitizer (tools/sanitize.sh
// tsan builds it with the pool's source alone and runs it). Several callers run parallel_for
// jobs while another thread keeps replacing the pool with set_num_threads: every job must
// finish on the pool it started with and sum correctly, and TSan must see no race.
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/host/thread_pool.h"

namespace {

int64_t parallel_sum(int64_t n) {
  constexpr int64_t kGrain = 1 << 10;
  int64_t chunks = (n + kGrain - 1) / kGrain;
  std::vector<int64_t> partial(static_cast<size_t>(chunks), 0);
  xrt::host::parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
    int64_t s = 0;
    for (int64_t i = begin; i < end; ++i) s += i;
    partial[static_cast<size_t>(begin / kGrain)] = s;
  });
  int64_t total = 0;
  for (int64_t s : partial) total += s;
  return total;
}

}  // namespace

int main() {
  constexpr int64_t kN = 1 << 16;
  constexpr int64_t kWant = kN * (kN - 1) / 2;
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0}, jobs{0};
  std::thread churn([&] {
    const int counts[] = {1, 3, 2, 4, 8};
    for (int i = 0; !stop.load(); ++i) xrt::host::set_num_threads(counts[i % 5]);
  });
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&] {
      for (int j = 0; j < 300; ++j) {
        if (parallel_sum(kN) != kWant) wrong.fetch_add(1);
        jobs.fetch_add(1);
      }
    });
  for (auto& t : callers) t.join();
  stop.store(true);
  churn.join();
  // An exception in a task reaches the caller, and the pool stays usable.
  bool rethrown = false;
  try {
    xrt::host::parallel_for(kN, 1 << 10, [](int64_t begin, int64_t) {
      if (begin == 4096) throw std::runtime_error("task failed");
    });
  } catch (const std::runtime_error&) {
    rethrown = true;
  }
  bool usable = parallel_sum(kN) == kWant;
  std::printf("jobs %d, wrong sums %d, exception rethrown %d, usable after %d, threads %d\n",
              jobs.load(), wrong.load(), rethrown, usable, xrt::host::num_threads());
  return wrong.load() == 0 && rethrown && usable ? 0 : 1;
}
