// cpp/src/core/host/thread_pool.cpp: a small fork-safe pool behind parallel_for.
//
// - One job at a time: a second caller (another Python thread) runs its loop inline
//   rather than wait, and so does a nested call from inside a task.
// - Workers take chunks from an atomic counter; the caller works too.
// - After fork() the child gets a fresh pool on first use (the parent's threads do not
//   exist there).
// - The pool is shared: parallel_for holds it while it runs, so set_num_threads on another
//   thread (a GIL-free op in flight) swaps in a new pool and the old one dies after its job.
// - At most kMaxThreads threads; if the system refuses a thread, the pool keeps the threads
//   it got (fewer workers, never a half-built pool).
#include "core/host/thread_pool.h"

#include "xpuruntime/errors.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace xrt::host {
namespace {

thread_local bool inside_task = false;

// More threads than this only adds scheduling cost on any machine we know of; the cap also
// keeps a typo (set_num_threads(10**6)) from exhausting the process.
constexpr int kMaxThreads = 1024;

constexpr auto kWorkerSpin = std::chrono::microseconds(30);
constexpr auto kCallerSpin = std::chrono::microseconds(30);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() holds or the time runs out; true when done() holds.
template <class Done>
bool spin_until(Done&& done, std::chrono::microseconds limit) {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() - start > limit) return done();
  }
}

int default_threads() {
  if (const char* env = std::getenv("XPURUNTIME_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return std::min(n, kMaxThreads);
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

// Note [Never waiting for a late worker]: a job is a generation number and a chunk count.
// Chunks are claimed from one atomic word holding (generation << 32 | next chunk), so a
// worker that wakes after its job ended can claim nothing (not even a chunk of the next job),
// and the caller waits only for the chunks, never for workers to wake or to be scheduled:
// on a loaded machine the caller simply does the chunks itself. Workers spin briefly after a
// job before sleeping (waking a sleeping thread costs 10-50 us on a virtual machine, more
// than an add of 1e5 floats), and the caller spins briefly before it sleeps.
class Pool {
 public:
  // Note: a thread the system refuses (EAGAIN under `ulimit -v` or a process limit) ends the
  // construction with the workers made so far. Letting the exception escape would destroy
  // the condition variables those workers wait on (a hang in pthread_cond_destroy).
  explicit Pool(int workers) {
    threads_.reserve(workers);
    for (int i = 0; i < workers; ++i) {
      try {
        threads_.emplace_back([this] { work(); });
      } catch (const std::system_error&) {
        break;
      }
    }
  }
  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stopping_.store(true);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  void run(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
    std::unique_lock job_lock(job_mutex_, std::try_to_lock);
    if (!job_lock.owns_lock()) return run_inline(n, grain, fn);
    Job job{&fn, n, grain, (n + grain - 1) / grain, 0};
    if (job.chunks >= (int64_t{1} << 31)) return run_inline(n, grain, fn);
    bool sleeping;
    {
      std::lock_guard lock(mutex_);
      job.generation = (generation_.load() + 1) & 0xffffffffu;
      job_ = job;
      error_ = nullptr;
      done_chunks_.store(0);
      next_.store(job.generation << 32);
      generation_.store(job.generation, std::memory_order_release);
      sleeping = sleepers_ > 0;
    }
    if (sleeping) wake_.notify_all();
    take_chunks(job);
    auto finished = [&] { return done_chunks_.load(std::memory_order_acquire) >= job.chunks; };
    if (!spin_until(finished, kCallerSpin)) {
      std::unique_lock lock(mutex_);
      caller_waiting_ = true;
      finished_.wait(lock, finished);
      caller_waiting_ = false;
    }
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

  static void run_inline(int64_t n, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn) {
    for (int64_t begin = 0; begin < n; begin += grain) fn(begin, std::min(n, begin + grain));
  }

 private:
  struct Job {
    const std::function<void(int64_t, int64_t)>* fn;
    int64_t n, grain, chunks;
    uint64_t generation;
  };

  // Claims chunks of `job` until none is left; a claim of another generation fails.
  void take_chunks(const Job& job) {
    inside_task = true;
    for (;;) {
      uint64_t word = next_.load(std::memory_order_relaxed);
      int64_t chunk;
      do {
        if ((word >> 32) != job.generation) return void(inside_task = false);
        chunk = static_cast<int64_t>(word & 0xffffffffu);
        if (chunk >= job.chunks) return void(inside_task = false);
      } while (!next_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel));
      int64_t finished = 1;
      try {
        int64_t begin = chunk * job.grain;
        (*job.fn)(begin, std::min(job.n, begin + job.grain));
      } catch (...) {
        std::lock_guard lock(mutex_);
        if (!error_) error_ = std::current_exception();
        // The unclaimed chunks will never run: count them as finished.
        uint64_t rest = next_.exchange((job.generation << 32) | uint64_t(job.chunks));
        if ((rest >> 32) == job.generation)
          finished += job.chunks - static_cast<int64_t>(rest & 0xffffffffu);
      }
      if (done_chunks_.fetch_add(finished, std::memory_order_acq_rel) + finished >= job.chunks) {
        std::lock_guard lock(mutex_);
        if (caller_waiting_) finished_.notify_one();
      }
    }
  }

  void work() {
    uint64_t seen = 0;
    auto job_or_stop = [&] {
      return stopping_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    };
    for (;;) {
      Job job;
      {
        if (!spin_until(job_or_stop, kWorkerSpin)) {
          std::unique_lock lock(mutex_);
          ++sleepers_;
          wake_.wait(lock, job_or_stop);
          --sleepers_;
        }
        std::lock_guard lock(mutex_);  // a consistent copy of the job
        if (stopping_.load()) return;
        job = job_;
        seen = generation_.load();
      }
      take_chunks(job);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> next_{0};  // generation << 32 | next chunk
  std::atomic<int64_t> done_chunks_{0};
  Job job_{};
  int sleepers_ = 0;             // workers blocked on wake_ (guarded by mutex_)
  bool caller_waiting_ = false;  // guarded by mutex_
  std::exception_ptr error_;
};

std::mutex pool_mutex;
// Leaked on purpose: joining threads at exit can deadlock.
std::shared_ptr<Pool>& pool = *new std::shared_ptr<Pool>();
int requested_threads = 0;

void forget_pool_after_fork() {
  // The parent's threads are gone in the child: leak the husk (its destructor would join them).
  new std::shared_ptr<Pool>(std::move(pool));
  pool.reset();
  new (&pool_mutex) std::mutex();
}

std::shared_ptr<Pool> get_pool() {
  static bool registered = [] {
    pthread_atfork(nullptr, nullptr, forget_pool_after_fork);
    return true;
  }();
  (void)registered;
  std::lock_guard lock(pool_mutex);
  if (!pool) {
    int n = requested_threads > 0 ? requested_threads : default_threads();
    pool = std::make_shared<Pool>(n - 1);
  }
  return pool;
}

}  // namespace

int num_threads() { return get_pool()->size(); }

int max_threads() { return kMaxThreads; }

void set_num_threads(int n) {
  if (n < 1 || n > kMaxThreads)
    throw ValueError("set_num_threads: the thread count must be between 1 and " +
                     std::to_string(kMaxThreads) + ", got " + std::to_string(n));
  std::shared_ptr<Pool> old;  // joined outside the lock, after any job that holds it
  {
    std::lock_guard lock(pool_mutex);
    requested_threads = n;
    if (pool && pool->size() != n) old = std::move(pool);
  }
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (n <= grain || inside_task) return Pool::run_inline(n, grain, fn);
  std::shared_ptr<Pool> p = get_pool();  // alive until this job ends, whatever happens
  if (p->size() == 1) return Pool::run_inline(n, grain, fn);
  p->run(n, grain, fn);
}

}  // namespace xrt::host
