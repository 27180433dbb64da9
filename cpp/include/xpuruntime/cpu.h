// cpp/include/xpuruntime/cpu.h: what the CPU backend tells and lets callers tune.
#pragma once

namespace xrt::cpu {

/// Threads the CPU kernels use (the caller included). XPURUNTIME_NUM_THREADS overrides
/// the default, which is the number of cores this process may run on.
int num_threads();
/// Sets it (at least 1); not while kernels are running on other threads.
void set_num_threads(int n);
/// The OpenBLAS configuration string (version, target, threading).
const char* openblas_config();

}  // namespace xrt::cpu
