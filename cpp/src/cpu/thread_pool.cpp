// cpp/src/cpu/thread_pool.cpp: a small fork-safe pool behind parallel_for.
//
// - One job at a time: a second caller (another Python thread) runs its loop inline
//   rather than wait, and so does a nested call from inside a task.
// - Workers take chunk indices from an atomic counter; the caller works too.
// - After fork() the child gets a fresh pool on first use (the parent's threads do not
//   exist there).
#include "cpu/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace xrt::cpu {
namespace {

thread_local bool inside_task = false;

int default_threads() {
  if (const char* env = std::getenv("XPURUNTIME_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

class Pool {
 public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    std::unique_lock job_lock(job_mutex_, std::try_to_lock);
    if (!job_lock.owns_lock()) return run_inline(n, grain, fn);
    {
      std::lock_guard lock(mutex_);
      fn_ = &fn;
      n_ = n;
      grain_ = grain;
      chunks_ = (n + grain - 1) / grain;
      next_.store(0);
      error_ = nullptr;
      busy_ = static_cast<int>(threads_.size());
      ++generation_;
    }
    wake_.notify_all();
    take_chunks();
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

  static void run_inline(int64_t n, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn) {
    for (int64_t begin = 0; begin < n; begin += grain) fn(begin, std::min(n, begin + grain));
  }

 private:
  void take_chunks() {
    inside_task = true;
    for (;;) {
      int64_t chunk = next_.fetch_add(1);
      if (chunk >= chunks_) break;
      int64_t begin = chunk * grain_;
      try {
        (*fn_)(begin, std::min(n_, begin + grain_));
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        next_.store(chunks_);
      }
    }
    inside_task = false;
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
      }
      take_chunks();
      std::lock_guard lock(mutex_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  bool stopping_ = false;
  uint64_t generation_ = 0;
  int busy_ = 0;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, grain_ = 1, chunks_ = 0;
  std::atomic<int64_t> next_{0};
  std::exception_ptr error_;
};

std::mutex pool_mutex;
Pool* pool = nullptr;  // leaked on purpose: joining threads at exit can deadlock
int requested_threads = 0;

void forget_pool_after_fork() {
  pool = nullptr;  // the parent's threads are gone in the child; leak the husk
  new (&pool_mutex) std::mutex();
}

Pool* get_pool() {
  static bool registered = [] {
    pthread_atfork(nullptr, nullptr, forget_pool_after_fork);
    return true;
  }();
  (void)registered;
  std::lock_guard lock(pool_mutex);
  if (!pool) {
    int n = requested_threads > 0 ? requested_threads : default_threads();
    pool = new Pool(n - 1);
  }
  return pool;
}

}  // namespace

int num_threads() { return get_pool()->size(); }

void set_num_threads(int n) {
  if (n < 1) n = 1;
  std::lock_guard lock(pool_mutex);
  requested_threads = n;
  if (pool && pool->size() != n) {
    delete pool;
    pool = nullptr;
  }
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (n <= grain || inside_task) return Pool::run_inline(n, grain, fn);
  Pool* p = get_pool();
  if (p->size() == 1) return Pool::run_inline(n, grain, fn);
  p->run(n, grain, fn);
}

}  // namespace xrt::cpu
