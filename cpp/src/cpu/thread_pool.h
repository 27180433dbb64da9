// cpp/src/cpu/thread_pool.h: parallel_for over fixed chunks, on a pool of worker threads.
#pragma once
#include <cstdint>
#include <functional>

#include "xpuruntime/cpu.h"

namespace xrt::cpu {


/// Calls fn(begin, end) for the chunks [k*grain, min((k+1)*grain, n)) of [0, n). The chunks
/// depend on n and grain only, never on the thread count, so a reduction that combines
/// per-chunk results in chunk order is bit-identical however many threads ran.
/// Runs inline when there is one chunk, one thread, or when called from inside a pool task.
/// The first exception thrown by fn is rethrown in the caller.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace xrt::cpu
