// cpp/src/core/host/thread_pool.h: parallel_for over fixed chunks, on a pool of host worker
// threads (the CPU kernels; host-side copies of other backends).
#pragma once
#include <cstdint>
#include <functional>

namespace xrt::host {

/// Threads of the pool (the caller included). XPURUNTIME_NUM_THREADS overrides the
/// default, which is the number of cores this process may run on.
int num_threads();
/// Sets it: ValueError outside 1..max_threads(). Safe while parallel_for runs on other threads
/// (they finish on the pool they started with). The pool may get fewer threads when the
/// system refuses to create more; num_threads() then says how many it got.
void set_num_threads(int n);
/// The largest count set_num_threads accepts.
int max_threads();

/// Calls fn(begin, end) for the chunks [k*grain, min((k+1)*grain, n)) of [0, n). The chunks
/// depend on n and grain only, never on the thread count, so a reduction that combines
/// per-chunk results in chunk order is bit-identical however many threads ran.
/// Runs inline when there is one chunk, one thread, or when called from inside a pool task.
/// The first exception thrown by fn is rethrown in the caller.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace xrt::host
