// cpp/src/core/light_mutex.h: LightMutex, a mutex whose uncontended lock and unlock are one
// inline atomic instruction each.
//
// Note [Light mutex]: the caching allocator takes its mutex twice in every op (the result's
// allocation, the previous result's free). std::mutex is pthread_mutex_lock and _unlock:
// calls into libc, about 110 host instructions a CUDA `a + b` and lines of libc's code that
// the driver's launch evicts between two ops (Note [Where the host time of a tiny op goes]
// in cpp/src/cuda/host_costs.cpp). LightMutex is the three-state futex mutex (0 free,
// 1 held, 2 held with waiters, as in Drepper's "Futexes Are Tricky"), on C++20's
// atomic wait and notify, which are futex calls on Linux:
// - lock: one compare-exchange 0 -> 1; on failure, mark the mutex 2 and sleep until an
//   exchange to 2 finds it free (0);
// - unlock: one exchange to 0; only when that finds 2 (someone may sleep) does it wake one.
// It is not recursive and not fair, as std::mutex is not either; a holder that sleeps (the
// allocator synchronizes the device under its mutex on empty_cache) makes the others sleep,
// not spin.
#pragma once
#include <atomic>

namespace xrt {

class LightMutex {
 public:
  void lock() {
    int expected = 0;
    if (!state_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                        std::memory_order_relaxed)) [[unlikely]]
      wait(expected);
  }
  bool try_lock() {
    int expected = 0;
    return state_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void unlock() {
    if (state_.exchange(0, std::memory_order_release) == 2) [[unlikely]]
      wake();
  }

 private:
  [[gnu::noinline]] void wait(int seen) {
    if (seen != 2) seen = state_.exchange(2, std::memory_order_acquire);
    while (seen != 0) {
      state_.wait(2, std::memory_order_relaxed);
      seen = state_.exchange(2, std::memory_order_acquire);
    }
  }
  [[gnu::noinline]] void wake() { state_.notify_one(); }

  std::atomic<int> state_{0};
};

}  // namespace xrt
