// cpp/include/xpuruntime/cpu.h: what the CPU backend tells and lets callers tune.
#pragma once

namespace xrt::cpu {

/// Threads the CPU kernels use (the caller included). XPURUNTIME_NUM_THREADS overrides
/// the default, which is the number of cores this process may run on.
int num_threads();
/// Sets it, and OpenBLAS's thread count with it: ValueError outside 1..max_threads(). Safe
/// while kernels run on other threads (they finish on the threads they started with).
void set_num_threads(int n);
/// The largest thread count set_num_threads accepts.
int max_threads();
/// The OpenBLAS configuration string (version, target, threading).
const char* openblas_config();

}  // namespace xrt::cpu
